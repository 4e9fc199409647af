package engine

// MemAvailable returns the memory available for new allocations in bytes (Linux's
// MemAvailable), or 0 when it is unknown: what the KV cache pool is sized against,
// for the server's queue bound to be sized the same way.
func MemAvailable() int64 { return memAvailable() }
