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
	rows, mem := jetStreamRows(t)
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(mdCell(c))
		}
		b.WriteString("\n")
	}
	for _, r := range rows[1:] {
		line(r)
	}
	b.WriteString("\n")
	line(mem[0])
	b.WriteString("----- | ------- | -------- | ------------ | -------------- | --------\n")
	for _, r := range mem[1:] {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JetStreamTableAligned writes JetStreamTable's two tables with the same cells as
// aligned markdown tables ("| dtype    | … |", every column padded to its widest
// cell), for a screen that shows whole columns.
func JetStreamTableAligned(w io.Writer, t *result.Throughput) error {
	rows, mem := jetStreamRows(t)
	_, err := io.WriteString(w, tgiTable(rows)+"\n"+tgiTable(mem))
	return err
}

// jetStreamRows returns the cells of both tables (not yet escaped for markdown), each
// with its header first: JetStream's columns (the header as words), then the memory
// and rolling window.
func jetStreamRows(t *result.Throughput) (rows, mem [][]string) {
	rows = [][]string{{"Date", "Device", "dtype", "batch size", "cache length", "max input length", "max output length", "throughput (token/s)"}}
	mem = [][]string{{"dtype", "weights", "KV cache", "weights + KV", "rolling window", "requests"}}
	for _, r := range t.Rows {
		rows = append(rows, []string{r.Date, r.Device, r.Dtype, fmt.Sprint(r.BatchSize), fmt.Sprint(r.CacheLength),
			fmt.Sprint(r.MaxInput), fmt.Sprint(r.MaxOutput), fmt.Sprintf("%.1f", r.Throughput)})
		mem = append(mem, []string{r.Dtype, fmt.Sprintf("%s (%s)", BytesIEC(uint64(r.WeightBytes)), strings.ToLower(r.Weights)),
			fmt.Sprintf("%s (%s)", BytesIEC(uint64(r.KVBytes)), r.KV), BytesIEC(uint64(r.MemoryBytes())), rollingNote(r),
			fmt.Sprintf("%d of %d finished", r.Completed, r.Requests)})
	}
	return rows, mem
}

// rollingNote says whether a row ran rolling-window attention and why.
func rollingNote(r result.ThroughputRow) string {
	if r.RollingWindow == 0 {
		return fmt.Sprintf("not used (cache %d ≥ %d + %d)", r.CacheLength, r.MaxInput, r.MaxOutput)
	}
	return fmt.Sprintf("used: last %d positions (cache %d < %d + %d), %d sequences rolled", r.RollingWindow, r.CacheLength, r.MaxInput, r.MaxOutput, r.Rolled)
}
