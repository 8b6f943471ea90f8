// Raw turns ($episodes: {id, props}), for BM25 recall; idempotent (MERGE by the episode id,
// the same id as the turn's Chroma record). Not fenced: a turn's text never changes.
UNWIND $episodes AS e
MERGE (x:Episode {id: e.id})
SET x += e.props, x.event_at = datetime(e.props.event_at),
    x.created_at = datetime(e.props.created_at)
