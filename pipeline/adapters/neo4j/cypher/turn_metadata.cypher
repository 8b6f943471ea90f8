// The producer's metadata of these turns ($ids: their episode ids), those that had any.
UNWIND $ids AS id
MATCH (e:Episode {id: id})
WHERE e.user_id = $user_id AND e.metadata_json IS NOT NULL
RETURN e.ref AS ref, e.metadata_json AS metadata
