package report

import (
	"fmt"
	"io"
	"strings"

	"llmbench/workloads/result"
)

// JetStreamTable writes a throughput run's rows as JetStream's published table, its
// columns and header spelled as there (Date | Device | dtype | batch size | cache
// length | max input length | max output length | throughput (token/s)), then a
// table of what each row needed and did: weights, KV cache pool, their total, the
// rolling window and the requests finished.
func JetStreamTable(w io.Writer, t *result.Throughput) error {
	var b strings.Builder
	b.WriteString("Date | Device  | dtype | batch size | cache length |max input length |max output length| throughput (token/s)\n")
	b.WriteString("----| ------- | ------ |---------- | -------------|-----------------|------------------|----------------------\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "%s | %s | %s | %d | %d | %d | %d | %.1f\n", r.Date, mdCell(r.Device), mdCell(r.Dtype),
			r.BatchSize, r.CacheLength, r.MaxInput, r.MaxOutput, r.Throughput)
	}
	b.WriteString("\ndtype | weights | KV cache | weights + KV | rolling window | requests\n")
	b.WriteString("----- | ------- | -------- | ------------ | -------------- | --------\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "%s | %s (%s) | %s (%s) | %s | %s | %d of %d finished\n", mdCell(r.Dtype),
			BytesIEC(uint64(r.WeightBytes)), strings.ToLower(r.Weights), BytesIEC(uint64(r.KVBytes)), r.KV,
			BytesIEC(uint64(r.MemoryBytes())), rollingNote(r), r.Completed, r.Requests)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// rollingNote says whether a row ran rolling-window attention and why.
func rollingNote(r result.ThroughputRow) string {
	if r.RollingWindow == 0 {
		return fmt.Sprintf("not used (cache %d ≥ %d + %d)", r.CacheLength, r.MaxInput, r.MaxOutput)
	}
	return fmt.Sprintf("used: last %d positions (cache %d < %d + %d), %d sequences rolled", r.RollingWindow, r.CacheLength, r.MaxInput, r.MaxOutput, r.Rolled)
}
