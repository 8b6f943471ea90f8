// Run at start, statement by statement. Every statement is idempotent.
CREATE CONSTRAINT memq_user_id IF NOT EXISTS FOR (u:User) REQUIRE u.id IS UNIQUE;
CREATE CONSTRAINT memq_memory_id IF NOT EXISTS FOR (m:Memory) REQUIRE m.id IS UNIQUE;
CREATE CONSTRAINT memq_audit_id IF NOT EXISTS FOR (a:Audit) REQUIRE a.id IS UNIQUE;
CREATE CONSTRAINT memq_entity_key IF NOT EXISTS FOR (e:Entity) REQUIRE (e.user_id, e.key) IS UNIQUE;
CREATE INDEX memq_memory_user IF NOT EXISTS FOR (m:Memory) ON (m.user_id, m.status);
CREATE INDEX memq_audit_user IF NOT EXISTS FOR (a:Audit) ON (a.user_id, a.memory_id);
CREATE INDEX memq_fact_id IF NOT EXISTS FOR ()-[r:FACT]-() ON (r.id);
CREATE INDEX memq_fact_memory IF NOT EXISTS FOR ()-[r:FACT]-() ON (r.memory_id);
CREATE INDEX memq_memory_hash IF NOT EXISTS FOR (m:Memory) ON (m.user_id, m.content_hash);
CREATE INDEX memq_memory_version IF NOT EXISTS FOR (m:Memory) ON (m.user_id, m.version);
CREATE INDEX memq_audit_batch IF NOT EXISTS FOR (a:Audit) ON (a.user_id, a.batch_id)
;
CREATE CONSTRAINT memq_episode_id IF NOT EXISTS FOR (e:Episode) REQUIRE e.id IS UNIQUE;
CREATE INDEX memq_episode_user IF NOT EXISTS FOR (e:Episode) ON (e.user_id);
CREATE INDEX memq_episode_session IF NOT EXISTS FOR (e:Episode) ON (e.user_id, e.session_id, e.event_at);
// BM25 (Lucene) over the raw turns and the memories, per user: user_key is one token (a
// hash of the user id) that every query requires; a turn's speaker is searchable with its
// text ("where does Maria work?"). The english analyzer stems English ("visiting" finds
// "visit") and splits Chinese into single characters, which BM25 weighs by rarity.
DROP INDEX memq_episode_text IF EXISTS;
DROP INDEX memq_memory_text IF EXISTS;
DROP INDEX memq_episode_bm25 IF EXISTS;
CREATE FULLTEXT INDEX memq_episode_bm25_v2 IF NOT EXISTS FOR (e:Episode)
  ON EACH [e.search_text, e.text, e.user_key, e.speaker]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
// turns stored before search_text existed: speaker and text (the turn before and the date
// words are not added here: re-ingest, or they are found without them)
MATCH (e:Episode) WHERE e.search_text IS NULL
CALL { WITH e SET e.search_text = coalesce(e.speaker + ' ', '') + e.text } IN TRANSACTIONS OF 5000 ROWS;
CREATE FULLTEXT INDEX memq_memory_bm25 IF NOT EXISTS FOR (m:Memory) ON EACH [m.content, m.user_key]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
