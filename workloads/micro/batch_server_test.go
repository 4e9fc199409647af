package micro

import (
	"context"
	"strings"
	"testing"
	"time"

	"llmbench/engine/builtin"
	"llmbench/engine/gguf"
	"llmbench/engine/tokenizer"
	"llmbench/workloads"
	"llmbench/workloads/metrics"
	"llmbench/workloads/serving"
)

const ms = time.Millisecond

// TestServerRun reads a batch of two requests off scripted records: request 0 sent
// at 0 with its chunks at 10, 13, 17 ms; request 1 sent at 1 ms with chunks at 12,
// 14, 20 ms. Prefill = last first chunk − first send = 12 ms; the batch had its
// second chunks at 14 ms and its third at 20 ms: steps 2 and 6 ms, decode 8 ms.
func TestServerRun(t *testing.T) {
	recs := []metrics.Record{
		{Success: true, Start: 0, TTFT: 10 * ms, ITL: []time.Duration{3 * ms, 4 * ms}},
		{Success: true, Start: 1 * ms, TTFT: 11 * ms, ITL: []time.Duration{2 * ms, 6 * ms, 1 * ms}},
	}
	r, err := serverRun(recs)
	if err != nil {
		t.Fatal(err)
	}
	if r.PrefillNs != 12e6 || r.DecodeNs != 8e6 || len(r.DecodeStepsNs) != 2 || r.DecodeStepsNs[0] != 2e6 || r.DecodeStepsNs[1] != 6e6 || r.TokenMs() != 4 {
		t.Errorf("run %+v", r)
	}
	recs[1].Success, recs[1].Reason = false, metrics.ReasonHTTP
	if _, err := serverRun(recs); err == nil || !strings.Contains(err.Error(), "request 1 failed") {
		t.Errorf("a failed request: %v", err)
	}
	if _, err := serverRun([]metrics.Record{{Success: true, TTFT: ms}}); err == nil {
		t.Error("a batch with no token after the first accepted")
	}
}

// scriptedServer answers every request with a first chunk after 5 ms and one chunk
// every 2 ms after it, OutputLen chunks in all (no sleeping: the record says so).
type scriptedServer struct{}

func (scriptedServer) Do(ctx context.Context, req *serving.Request, rec *metrics.Record, now func() time.Duration) {
	rec.Start = now()
	rec.TTFT = 5 * ms
	for range req.OutputLen - 1 {
		rec.ITL = append(rec.ITL, 2*ms)
	}
	rec.OutputTokens, rec.Success = req.OutputLen, true
}

// TestBatchServer runs the server benchmark on a scripted client: every run of
// every batch size has one decode step per token after the first, 2 ms each, and
// the result is marked approximate.
func TestBatchServer(t *testing.T) {
	f, err := gguf.Parse(builtin.Stories260K)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	w := 1
	b := &BatchServer{Spec: workloads.BatchSpec{Backend: "tgi", BaseURL: "http://x", SequenceLength: 20, DecodeLength: 6, BatchSize: []int{1, 8}, Runs: 2, Warmups: &w},
		Client: scriptedServer{}, Tok: tok, ModelID: "m", Backend: "tgi http://x"}
	res, done, _ := runBatchWorkload(t, context.Background(), b)
	if done.Err != nil || !res.Approximate || res.Label != "Server - http://x" || len(res.Points) != 2 {
		t.Fatalf("done %+v, result %+v", done, res)
	}
	for _, p := range res.Points {
		if len(p.Runs) != 2 {
			t.Fatalf("batch %d: %d runs", p.BatchSize, len(p.Runs))
		}
		for _, r := range p.Runs {
			if len(r.DecodeStepsNs) != 5 || r.DecodeNs != 10e6 || r.TokenMs() != 2 {
				t.Errorf("batch %d run %+v", p.BatchSize, r)
			}
		}
	}
	if ids, err := loremTokens(tok, 700, false); err != nil || len(ids) != 700 {
		t.Errorf("prompt of %d tokens (%v), want 700", len(ids), err)
	}
	if _, err := loremTokens(silent{}, 4, false); err == nil {
		t.Error("a tokenizer that makes no tokens gave a prompt")
	}
}

// silent is a tokenizer that makes no tokens.
type silent struct{}

func (silent) Encode(string, bool, bool) []int32 { return nil }
