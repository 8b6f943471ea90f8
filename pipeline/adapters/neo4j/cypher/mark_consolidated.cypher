// Consolidation's mark on the user's turns ($marks: [{id, into}]: an episode id and the
// memory it was consolidated into): which turns were consolidated, and into what, is the
// graph's (Chroma holds their vectors only). MATCH, never MERGE: a mark makes no turn (one
// forgotten since stays gone). Marked again with the same memory, a turn stays as it was.
//
// Fenced (fence.cypher; $expected: the version the consolidation job holds, as its memory
// writes are). The mark is the user's state: the job's next run reads it to leave those
// turns out. Unfenced, a job that lost its claim while paused would mark turns after what
// it did not see: after a forget (whose fence moved the version on) and the same turns said
// again (their ids derive from user and turn), they would stay out of consolidation for
// good. Fenced, it is refused and the job runs again from fresh state.
//
// Chroma holds nothing of the mark, so when it held every write up to the version before
// (projected), it holds them up to the new one: projected moves with it, and the next plan
// does not catch up on a write Chroma has no part in.
//
// One row: `was`, `version` (null when the fence refused: nothing was marked) and n (turns
// marked); no row when the user has no node any more (forgotten and purged since) and
// $expected is not 0: no node is made for it (as apply_plan).
OPTIONAL MATCH (known:User {id: $user_id})
WITH known WHERE known IS NOT NULL OR coalesce($expected, 0) = 0
// include: fence
SET u.projected = CASE WHEN ok AND coalesce(u.projected, 0) >= was THEN version
                       ELSE u.projected END
WITH was, ok, version
CALL (ok) {
  WITH * WHERE ok
  UNWIND $marks AS m
  MATCH (e:Episode {id: m.id})
  WHERE e.user_id = $user_id
  SET e.consolidated_into = m.into
  RETURN count(e) AS n
}
RETURN was, CASE WHEN ok THEN version END AS version, n
