package report

import (
	"time"

	"llmbench/workloads/micro"
	"llmbench/workloads/serving"
)

// Document is one finished (or partial) run as every exporter sees it: what ran, where,
// and what it measured. Exactly one of Bench and Serving is set. The results store
// (profiles) keeps the same parts, so an export of a stored run equals the export made
// when it ran.
type Document struct {
	// Title names the run for a human ("bench · llama-1b Q4_0", a profile's name).
	Title string
	// Started is the wall-clock start of the run.
	Started time.Time
	// Env describes the machine and build, as ordered key/value pairs ("cpu", "AMD EPYC
	// 9R14 · 2 threads"), printed as given.
	Env []KV
	// Bench holds a llama-bench style run.
	Bench *micro.Result
	// Serving holds a serve-bench run: one result per sweep point, in sweep order.
	Serving []*serving.Result
	// Partial is set when the run was cancelled or crashed before it finished.
	Partial bool
}

// KV is one labelled value of a Document's environment.
type KV struct {
	Key, Value string
}
