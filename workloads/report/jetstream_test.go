package report

import (
	"bytes"
	"os"
	"testing"

	"llmbench/workloads/result"
)

// TestJetStreamTableGolden: the table has JetStream's published header and separator
// as written in its README (spacing included), one row per dtype, then the memory
// and rolling-window table; the golden file was written by hand from the rows below.
func TestJetStreamTableGolden(t *testing.T) {
	want, err := os.ReadFile("testdata/jetstream_table.golden")
	if err != nil {
		t.Fatal(err)
	}
	tp := &result.Throughput{Rows: []result.ThroughputRow{
		{Date: "2026-11-26", Device: "AMD EPYC · 2 threads", Dtype: "bfloat16", Weights: "BF16", KV: "f16", BatchSize: 16, CacheLength: 512,
			MaxInput: 256, MaxOutput: 512, Throughput: 120.46, Completed: 64, Requests: 64, RollingWindow: 512, Rolled: 64,
			WeightBytes: 2 << 20, KVBytes: 1 << 20},
		{Date: "2026-11-26", Device: "AMD EPYC · 2 threads", Dtype: "int8", Weights: "Q8_0", KV: "q8_0", BatchSize: 16, CacheLength: 1024,
			MaxInput: 256, MaxOutput: 512, Throughput: 250, Completed: 63, Requests: 64, WeightBytes: 1 << 20, KVBytes: 512 << 10},
	}}
	var b bytes.Buffer
	if err := JetStreamTable(&b, tp); err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("table differs:\n got:\n%s\nwant:\n%s", b.String(), want)
	}
	if tp.Rows[0].MemoryBytes() != 3<<20 {
		t.Errorf("memory %d", tp.Rows[0].MemoryBytes())
	}
}

// TestJetStreamTableAligned: the aligned tables hold the same cells as JetStream's
// (header as words), every line of a table as wide as its first, starting with "|".
func TestJetStreamTableAligned(t *testing.T) {
	tp := &result.Throughput{Rows: []result.ThroughputRow{
		{Date: "2026-11-26", Device: "AMD EPYC · 2 threads", Dtype: "bfloat16", Weights: "BF16", KV: "f16", BatchSize: 16, CacheLength: 512,
			MaxInput: 256, MaxOutput: 512, Throughput: 120.46, Completed: 64, Requests: 64, RollingWindow: 512, Rolled: 64,
			WeightBytes: 2 << 20, KVBytes: 1 << 20},
	}}
	var b bytes.Buffer
	if err := JetStreamTableAligned(&b, tp); err != nil {
		t.Fatal(err)
	}
	want := "| Date       | Device               | dtype    | batch size | cache length | max input length | max output length | throughput (token/s) |\n" +
		"|------------|----------------------|----------|------------|--------------|------------------|-------------------|----------------------|\n" +
		"| 2026-11-26 | AMD EPYC · 2 threads | bfloat16 | 16         | 512          | 256              | 512               | 120.5                |\n" +
		"\n" +
		"| dtype    | weights         | KV cache       | weights + KV | rolling window                                                        | requests          |\n" +
		"|----------|-----------------|----------------|--------------|-----------------------------------------------------------------------|-------------------|\n" +
		"| bfloat16 | 2.00 MiB (bf16) | 1.00 MiB (f16) | 3.00 MiB     | used: last 512 positions (cache 512 < 256 + 512), 64 sequences rolled | 64 of 64 finished |\n"
	if b.String() != want {
		t.Errorf("aligned:\n%s\nwant:\n%s", b.String(), want)
	}
}
