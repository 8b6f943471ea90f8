// The fence alone, as the first statement of a transaction whose other statements write
// (workers.forget, memq check --repair): the caller rolls back when `ok` is false.
// include: fence
RETURN was, version, ok
