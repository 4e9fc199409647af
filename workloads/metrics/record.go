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
	// Retokenized is set when OutputTokens came from our tokenizer on the generated
	// text because the server reported no count.
	Retokenized bool `json:",omitempty"`
	// NonStreaming is set when the request asked for the whole answer at once
	// (--non-streaming): only Latency (send → full response read) is measured; TTFT,
	// TTFTContent and ITL are not (zero, and never summarised).
	NonStreaming bool `json:",omitempty"`
	// Text is the generated text, kept only when the client is asked to (--save-detailed).
	Text string

	// Connect is the time from Start until the request had a connection when it had to
	// open one (DNS, TCP, TLS and waiting for a free slot); 0 on a reused connection.
	Connect time.Duration `json:",omitempty"`
	// NewConn is set when the request opened a new connection (HTTP backends).
	NewConn bool `json:",omitempty"`

	// Stream, when set, counts the output tokens into a live view as they arrive
	// (clients call Stream.Tokens per chunk); never stored.
	Stream *Stream `json:"-" yaml:"-"`

	Success bool
	// Reason says why a request did not succeed (ReasonNone on success).
	Reason Reason `json:",omitempty"`
	// Status is the HTTP status of a ReasonHTTP failure.
	Status int    `json:",omitempty"`
	Error  string // the failure detail, one line; empty on success
	// Extra holds backend-specific measurements (e.g. llama.cpp's own timings).
	Extra map[string]float64
}

// SendLag is how late the pacer released the request against its schedule.
func (r *Record) SendLag() time.Duration { return r.Arrival - r.Scheduled }

// QueueTime is how long the request waited for a --max-concurrency slot (vLLM's
// client_queue_time).
func (r *Record) QueueTime() time.Duration { return r.Start - r.Arrival }
