package metrics

import "time"

// Record is the client-side measurement of one serving request. Times are on the run
// clock (a monotonic offset from the start of the run).
type Record struct {
	Index     int           // position in the dataset order
	PromptLen int           // prompt tokens (dataset's count)
	Expected  int           // requested output tokens
	Scheduled time.Duration // when the arrival schedule wanted it sent
	Arrival   time.Duration // when the pacer released it (Scheduled + send lag)
	Start     time.Duration // when it was sent (after waiting for a --max-concurrency slot)

	// TTFT is the first chunk with non-empty choices minus Start (vLLM's definition).
	TTFT time.Duration
	// TTFTContent is the first chunk that carries generated text minus Start; a
	// role-only chat chunk does not count. Zero when no text arrived.
	TTFTContent time.Duration
	// Latency is the last content chunk minus Start (vLLM's E2EL).
	Latency time.Duration
	// ITL holds the gaps between consecutive chunks after the first.
	ITL []time.Duration
	// ChunkTokens holds, for each gap in ITL, how many tokens the later chunk carried
	// (nil when every chunk carried one token).
	ChunkTokens []int32
	// OutputTokens is the number of generated tokens: from the server's usage, else
	// per-chunk counts, else our tokenizer.
	OutputTokens int
	// Text is the generated text (kept for --save-detailed and for token counting).
	Text string

	Success bool
	Error   string // the failure reason, one line; empty on success
	// Extra holds backend-specific measurements (e.g. llama.cpp's own timings).
	Extra map[string]float64
}

// SendLag is how late the pacer released the request against its schedule.
func (r *Record) SendLag() time.Duration { return r.Arrival - r.Scheduled }

// QueueTime is how long the request waited for a --max-concurrency slot (vLLM's
// client_queue_time).
func (r *Record) QueueTime() time.Duration { return r.Start - r.Arrival }
