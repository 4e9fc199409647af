package kernelbench

// The paged-attention suite: vllm-metal's partitioned paged-attention comparison on
// the CPU kernels. Its API is RunPaged (the cases, timed, with a progress callback),
// PagedCases (the cases) and WritePagedTable (the case | mode | shape | after_ms |
// before_ms | delta_ms | speedup | auto table).

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"llmbench/kernels"
	"llmbench/kernels/cpu"
)

// PagedCase is one shape of the paged-attention suite: one (q, kv) pair per sequence
// (q new tokens whose last one sees kv positions: decode rows are q = 1).
type PagedCase struct {
	Name string
	Mode string // "decode" or "varlen"
	Seqs [][2]int
	// BigHead doubles the head size (decode-big-head, "a larger head dimension").
	BigHead bool
	// Extra marks the cases added to the ten published ones for the acceptance check
	// (one sequence, long context).
	Extra bool
}

func decodeCase(name string, b, kv int) PagedCase {
	c := PagedCase{Name: name, Mode: "decode"}
	for range b {
		c.Seqs = append(c.Seqs, [2]int{1, kv})
	}
	return c
}

// pagedCases are vllm-metal's ten published shapes, then the two single-sequence long
// decodes the acceptance check needs.
var pagedCases = []PagedCase{
	decodeCase("decode-small", 1, 128),
	decodeCase("decode-typical", 8, 2048),
	func() PagedCase { c := decodeCase("decode-big-head", 8, 2048); c.BigHead = true; return c }(),
	decodeCase("decode-long", 32, 8192),
	decodeCase("decode-long-16384", 32, 16384),
	{Name: "varlen-light", Mode: "varlen", Seqs: [][2]int{{1, 128}, {4, 256}, {16, 512}, {64, 1024}}},
	{Name: "varlen-typical", Mode: "varlen", Seqs: [][2]int{{32, 512}, {64, 1024}, {128, 2048}, {256, 4096}}},
	{Name: "varlen-single-long", Mode: "varlen", Seqs: [][2]int{{256, 4096}}},
	{Name: "varlen-ragged-longtail", Mode: "varlen", Seqs: [][2]int{{1, 4096}, {1, 8192}, {8, 512}, {128, 2048}}},
	{Name: "varlen-ultra-long", Mode: "varlen", Seqs: [][2]int{{1, 8192}, {1, 16384}, {8, 4096}, {128, 16384}}},
	func() PagedCase { c := decodeCase("decode-single-8192", 1, 8192); c.Extra = true; return c }(),
	func() PagedCase { c := decodeCase("decode-single-16384", 1, 16384); c.Extra = true; return c }(),
}

// PagedCases returns the suite's cases: the ten published shapes, then the extras.
func PagedCases() []PagedCase { return slices.Clone(pagedCases) }

// Shape returns the case's shape as the published table writes it ("B=8, q=1,
// kv=2048" for decode, the q/kv pairs for varlen).
func (c PagedCase) Shape() string {
	if c.Mode == "decode" {
		return fmt.Sprintf("B=%d, q=1, kv=%d", len(c.Seqs), c.Seqs[0][1])
	}
	var parts []string
	for _, s := range c.Seqs {
		parts = append(parts, fmt.Sprintf("%d/%d", s[0], s[1]))
	}
	return strings.Join(parts, " ")
}

// PagedOptions configures RunPaged; zero fields take the defaults.
type PagedOptions struct {
	Threads int // 0 = every core
	// Reps is the fewest timings of each path per case, alternating paths (short
	// cases take more, see Budget); the fastest counts. 0 = 3.
	Reps int
	// Budget is the time per path and case that short cases fill with more timings
	// (at most pagedMaxReps); 0 = pagedBudget, negative = Reps timings only.
	Budget time.Duration
	// Heads, KVHeads and HeadDim are the head layout; 0 = 32, 4 and 64 (TinyLlama
	// 1.1B, a llama-1b-like model). decode-big-head doubles HeadDim.
	Heads, KVHeads, HeadDim int
	KVType                  kernels.DType // F32, F16 or Q8_0; 0 (F32) = F16, the engine's default
	KVTypeSet               bool          // KVType was chosen, so F32 means F32
	Flash                   bool          // the one-pass ("before") path is flash, not plain (the engine's default)
	BlockSize               int           // KV cache block; 0 = 16 (the engine's default)
	Partition               int           // positions per partition; 0 = 512
	// PartitionFrom is the automatic choice's crossover; 0 = measured at the start
	// (kernels/cpu MeasureCrossover up to the longest context of the cases run).
	PartitionFrom int
	// Scale divides every q and kv length (at least 1 each); 0 or 1 = the published
	// shapes. Tests use it; the published table is unscaled.
	Scale int
	// Cases names the cases to run; nil = all (PagedCases).
	Cases []string
}

func (o PagedOptions) withDefaults() PagedOptions {
	if o.Threads <= 0 {
		o.Threads = runtime.NumCPU()
	}
	o.Reps = pagedOr(o.Reps, 3)
	if o.Budget == 0 {
		o.Budget = pagedBudget
	}
	o.Heads, o.KVHeads, o.HeadDim = pagedOr(o.Heads, 32), pagedOr(o.KVHeads, 4), pagedOr(o.HeadDim, 64)
	if o.KVType == kernels.F32 && !o.KVTypeSet {
		o.KVType = kernels.F16
	}
	o.BlockSize, o.Partition, o.Scale = pagedOr(o.BlockSize, 16), pagedOr(o.Partition, 512), pagedOr(o.Scale, 1)
	return o
}

func pagedOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// PagedResult is one case's measurement. After is the partitioned path, Before the
// one-pass path (vllm-metal's naming), Auto the automatic choice.
type PagedResult struct {
	Case, Mode, Shape string
	Extra             bool
	AfterMs, BeforeMs float64
	// AutoMs is the automatic choice's time: the chosen path's when it chose one path
	// for every row, timed on its own when it mixed them.
	AutoMs float64
	// AutoRows and Rows count the rows the automatic choice partitioned and all rows.
	AutoRows, Rows int
	// MaxRelDiff is the largest |after − before| over the largest |before| output.
	MaxRelDiff float64
}

// DeltaMs is after − before.
func (r PagedResult) DeltaMs() float64 { return r.AfterMs - r.BeforeMs }

// Speedup is (before − after) / before: the time partitions save (negative: lose).
func (r PagedResult) Speedup() float64 { return (r.BeforeMs - r.AfterMs) / r.BeforeMs }

// AutoPick names what the automatic choice ran: "after", "before" or "mixed k/n".
func (r PagedResult) AutoPick() string {
	switch r.AutoRows {
	case 0:
		return "before"
	case r.Rows:
		return "after"
	}
	return fmt.Sprintf("mixed %d/%d", r.AutoRows, r.Rows)
}

// AutoLoss is how much slower the automatic choice was than the better path (0 when
// it was the faster).
func (r PagedResult) AutoLoss() float64 {
	return max(0, r.AutoMs/min(r.AfterMs, r.BeforeMs)-1)
}

// PagedCheck is one acceptance check of the suite.
type PagedCheck struct {
	Name   string
	Pass   bool
	Detail string
}

// PagedTolerance is the agreement asked of the two paths: the largest difference at
// most 1e-5 of the largest output (kernels/cpu's tests ask the same).
const PagedTolerance = 1e-5

// AutoSlack is how much slower than the better path the automatic choice may be.
const AutoSlack = 0.05

// PagedReport is a run of the suite.
type PagedReport struct {
	Options   PagedOptions // defaults filled
	Backend   string
	Crossover kernels.Crossover // the measurement behind the crossover (no points when given)
	From      int               // the crossover used: rows with this much context or more take partitions (0: none)
	Results   []PagedResult
	Checks    []PagedCheck
	Partial   bool // interrupted before every case ran
}

// RunPaged runs the suite's cases (o.Cases, all when nil), calling progress (may be
// nil) before each case and once at the end (done == total). Every case times the
// one-pass and partitioned paths (and the automatic choice when it mixes them)
// alternately at least o.Reps times (after one untimed call each) over one paged KV cache of random values (blocks of
// o.BlockSize in shuffled order), checks the two paths agree within PagedTolerance,
// and the report's checks say whether the automatic choice stayed within AutoSlack of
// the better path on every case and whether partitions won on the single long
// decodes. Interrupted, it returns the cases done (Partial) and ctx's error.
func RunPaged(ctx context.Context, o PagedOptions, progress func(done, total int, name string)) (*PagedReport, error) {
	o = o.withDefaults()
	var cases []PagedCase
	for _, c := range pagedCases {
		if o.Cases == nil || slices.Contains(o.Cases, c.Name) {
			cases = append(cases, c.scaled(o.Scale))
		}
	}
	for _, n := range o.Cases {
		if !slices.ContainsFunc(pagedCases, func(c PagedCase) bool { return c.Name == n }) {
			return nil, fmt.Errorf("kernels: no paged-attention case %q", n)
		}
	}
	if progress == nil {
		progress = func(int, int, string) {}
	}
	c := cpu.New(o.Threads)
	defer c.Close()
	rep := &PagedReport{Options: o, Backend: c.Name(), From: o.PartitionFrom}
	longest, positions := 0, 0
	for _, pc := range cases {
		n := 0
		for _, s := range pc.Seqs {
			longest = max(longest, s[1])
			n += (s[1] + o.BlockSize - 1) / o.BlockSize * o.BlockSize
		}
		positions = max(positions, n)
	}
	kv := newPagedKV(positions)
	if o.PartitionFrom == 0 {
		progress(0, len(cases), "calibrating the crossover")
		a := kv.attention(o, false)
		rep.Crossover = c.MeasureCrossover(&a, o.Partition, longest)
		rep.From = rep.Crossover.From
	}
	for i, pc := range cases {
		if err := ctx.Err(); err != nil {
			rep.Partial = true
			return rep, err
		}
		progress(i, len(cases), pc.Name)
		// A collection the KV pool's allocation (hundreds of MiB) or the calibration
		// started would otherwise run beside the first cases' timings on one of the two
		// cores: decode-small, a 0.06 ms call, read 0.090 ms in some processes.
		runtime.GC()
		rep.Results = append(rep.Results, runPagedCase(c, o, kv, pc, rep.From))
	}
	progress(len(cases), len(cases), "")
	rep.Checks = pagedChecks(rep)
	return rep, nil
}

// scaled returns c with every length divided by s (at least 1).
func (c PagedCase) scaled(s int) PagedCase {
	c.Seqs = slices.Clone(c.Seqs)
	for i, q := range c.Seqs {
		kv := max(1, q[1]/s)
		c.Seqs[i] = [2]int{min(kv, max(1, q[0]/s)), kv}
	}
	return c
}

// pagedKV is the suite's KV cache: a pool of key rows and one of value rows for each
// head size, filled with unit-normal values, shared by every case (each lays its
// sequences over shuffled blocks of it).
type pagedKV struct {
	rows  int
	views map[[2]int]kernels.KVView // by head size and K (0) or V (1)
}

func newPagedKV(rows int) *pagedKV {
	return &pagedKV{rows: rows, views: map[[2]int]kernels.KVView{}}
}

// view returns (making on first use) the key (which 0) or value (1) pool for head
// size hd.
func (p *pagedKV) view(o PagedOptions, hd, which int) kernels.KVView {
	if v, ok := p.views[[2]int{hd, which}]; ok {
		return v
	}
	n := p.rows * o.KVHeads * hd
	rng := rand.New(rand.NewPCG(uint64(hd), uint64(which)))
	// A table of random values copied from random offsets: filling hundreds of MiB one
	// random value at a time would take longer than the cases.
	table := make([]float32, 1<<16)
	for i := range table {
		table[i] = float32(rng.NormFloat64())
	}
	fill := func(dst []float32) {
		for i := 0; i < len(dst); i += len(table) / 2 {
			off := rng.IntN(len(table) / 2)
			copy(dst[i:min(len(dst), i+len(table)/2)], table[off:])
		}
	}
	v := kernels.KVView{Type: o.KVType}
	buf := make([]float32, 1<<15)
	switch o.KVType {
	case kernels.F16:
		v.F16 = make([]uint16, n)
		for i := 0; i < n; i += len(buf) {
			b := buf[:min(len(buf), n-i)]
			fill(b)
			for k, x := range b {
				v.F16[i+k] = kernels.F32ToF16(x)
			}
		}
	case kernels.Q8_0:
		v.Q8 = make([]byte, n/32*34)
		for i := 0; i < n; i += len(buf) {
			b := buf[:min(len(buf), n-i)]
			fill(b)
			kernels.TraitsOf(kernels.Q8_0).FromFloat(b, v.Q8[i/32*34:])
		}
	default:
		v.F32 = make([]float32, n)
		fill(v.F32)
	}
	p.views[[2]int{hd, which}] = v
	return v
}

// attention returns the suite's Attention for the head size of big or not.
func (p *pagedKV) attention(o PagedOptions, big bool) kernels.Attention {
	hd := o.HeadDim
	if big {
		hd *= 2
	}
	return kernels.Attention{Heads: o.Heads, KVHeads: o.KVHeads, HeadDim: hd, Scale: float32(1 / math.Sqrt(float64(hd))),
		K: p.view(o, hd, 0), V: p.view(o, hd, 1), BlockSize: o.BlockSize, Flash: o.Flash}
}

// pagedBudget and pagedMaxReps set the timings of a case beyond PagedOptions.Reps:
// as many as fit in the budget (default pagedBudget) per path, judged by the warm-up
// call, at most pagedMaxReps, so that short cases are timed often enough for their
// best to be reliable on a busy machine.
const (
	pagedBudget  = time.Second
	pagedMaxReps = 1000
)

// runPagedCase times one case.
func runPagedCase(c *cpu.CPU, o PagedOptions, kv *pagedKV, pc PagedCase, from int) PagedResult {
	a := kv.attention(o, pc.BigHead)
	rng := rand.New(rand.NewPCG(uint64(len(pc.Seqs)), 2))
	perm := rng.Perm(kv.rows / o.BlockSize)
	seqs := make([]kernels.VarSeq, len(pc.Seqs))
	res := PagedResult{Case: pc.Name, Mode: pc.Mode, Shape: pc.Shape(), Extra: pc.Extra}
	for i, s := range pc.Seqs {
		blocks := make([]int32, (s[1]+o.BlockSize-1)/o.BlockSize)
		for b := range blocks {
			blocks[b], perm = int32(perm[0]), perm[1:]
		}
		seqs[i] = kernels.VarSeq{N: s[0], Start: s[1] - s[0], Blocks: blocks}
		res.Rows += s[0]
		for t := range s[0] {
			if from > 0 && s[1]-s[0]+t+1 >= from {
				res.AutoRows++
			}
		}
	}
	q := make([]float32, res.Rows*a.Heads*a.HeadDim)
	for i := range q {
		q[i] = float32(rng.NormFloat64())
	}
	outs := [3][]float32{make([]float32, len(q)), make([]float32, len(q)), make([]float32, len(q))}
	paths := [3]kernels.Attention{a, a, a} // before, after, auto
	paths[1].Partition = o.Partition
	if from > 0 {
		paths[2].Partition, paths[2].PartitionMin = o.Partition, from
	}
	n := 2
	if res.AutoRows != 0 && res.AutoRows != res.Rows {
		n = 3
	}
	var slowest time.Duration
	for p := range n { // warm up: scratch grown, caches and pages touched
		t0 := time.Now()
		c.AttendVarlen(outs[p], q, &paths[p], seqs)
		slowest = max(slowest, time.Since(t0))
	}
	reps := o.Reps
	if o.Budget > 0 {
		reps = max(reps, min(pagedMaxReps, int(o.Budget/max(slowest, 1))))
	}
	best := [3]time.Duration{math.MaxInt64, math.MaxInt64, math.MaxInt64}
	for range reps {
		for p := range n {
			t0 := time.Now()
			c.AttendVarlen(outs[p], q, &paths[p], seqs)
			best[p] = min(best[p], time.Since(t0))
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	res.BeforeMs, res.AfterMs = ms(best[0]), ms(best[1])
	switch {
	case n == 3:
		res.AutoMs = ms(best[2])
	case res.AutoRows == 0:
		res.AutoMs = res.BeforeMs
	default:
		res.AutoMs = res.AfterMs
	}
	var diff, scale float64
	for i, v := range outs[0] {
		scale = math.Max(scale, math.Abs(float64(v)))
		diff = math.Max(diff, math.Abs(float64(v-outs[1][i])))
	}
	res.MaxRelDiff = diff / scale
	return res
}

// pagedChecks makes the suite's acceptance checks: the paths agree on every case, the
// automatic choice is within AutoSlack of the better path on every published case,
// and partitions win every single-sequence decode of 8192 positions or more.
func pagedChecks(r *PagedReport) []PagedCheck {
	agree := PagedCheck{Name: "partitioned agrees with one-pass", Pass: true}
	auto := PagedCheck{Name: fmt.Sprintf("automatic choice within %.0f %% of the better path", 100*AutoSlack), Pass: true}
	long := PagedCheck{Name: fmt.Sprintf("partitions win a single sequence of ≥ 8192 positions at %d threads", r.Options.Threads), Pass: true}
	var worstDiff, worstLoss float64
	worstCase, longs := "", 0
	for _, x := range r.Results {
		if x.MaxRelDiff > worstDiff {
			worstDiff = x.MaxRelDiff
		}
		if x.MaxRelDiff > PagedTolerance {
			agree.Pass = false
		}
		if !x.Extra && x.AutoLoss() >= worstLoss {
			worstLoss, worstCase = x.AutoLoss(), x.Case
		}
		if !x.Extra && x.AutoLoss() > AutoSlack {
			auto.Pass = false
		}
		if x.Extra { // the single long decodes
			longs++
			if x.AfterMs >= x.BeforeMs {
				long.Pass = false
			}
			long.Detail += fmt.Sprintf("%s: %.3f vs %.3f ms (%+.1f %%); ", x.Case, x.AfterMs, x.BeforeMs, 100*x.Speedup())
		}
	}
	agree.Detail = fmt.Sprintf("largest difference %.2g of the largest output (tolerance %.0g)", worstDiff, PagedTolerance)
	auto.Detail = fmt.Sprintf("worst %s, %.1f %% slower (crossover %d positions)", worstCase, 100*worstLoss, r.From)
	out := []PagedCheck{agree, auto}
	if longs > 0 {
		long.Detail = strings.TrimSuffix(long.Detail, "; ")
		out = append(out, long)
	}
	return out
}

// PagedColumns are the table's columns: the published ones, then auto.
var PagedColumns = []string{"case", "mode", "shape", "after_ms", "before_ms", "delta_ms", "speedup", "auto"}

// PagedRows returns the table's rows as text cells (PagedColumns): times in ms with
// three decimals, speedup = (before − after) / before in %, auto = what the automatic
// choice ran ("after", "before" or "mixed k/n" rows partitioned) and "faster" or how
// much slower than the better path it was.
func (r *PagedReport) PagedRows() [][]string {
	var rows [][]string
	for _, x := range r.Results {
		auto := x.AutoPick() + ", faster"
		if l := x.AutoLoss(); l > 0 {
			auto = fmt.Sprintf("%s, %.1f%% slower", x.AutoPick(), 100*l)
		}
		rows = append(rows, []string{x.Case, x.Mode, x.Shape, fmt.Sprintf("%.3f", x.AfterMs), fmt.Sprintf("%.3f", x.BeforeMs),
			fmt.Sprintf("%.3f", x.DeltaMs()), fmt.Sprintf("%.1f%%", 100*x.Speedup()), auto})
	}
	return rows
}

// WritePagedTable writes the report as the published table (case | mode | shape |
// after_ms | before_ms | delta_ms | speedup, plus auto; text columns left-aligned,
// numbers right-aligned), then a line on the settings, the crossover and the checks.
func WritePagedTable(w io.Writer, r *PagedReport) error {
	rows := append([][]string{PagedColumns}, r.PagedRows()...)
	width := make([]int, len(PagedColumns))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		var line strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				line.WriteString(" | ")
			}
			if i >= 3 && i <= 6 {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	o := r.Options
	path := "plain"
	if o.Flash {
		path = "flash"
	}
	scale := "published shapes"
	if o.Scale > 1 {
		scale = fmt.Sprintf("lengths divided by %d", o.Scale)
	}
	fmt.Fprintf(w, "%s, %d threads; %d q heads / %d kv heads of %d (big-head %d), %s cache, blocks of %d; after = partitions of %d, before = one-pass %s; best of ≥ %d alternating; %s\n",
		r.Backend, o.Threads, o.Heads, o.KVHeads, o.HeadDim, 2*o.HeadDim, strings.ToLower(o.KVType.String()), o.BlockSize, o.Partition, path, o.Reps, scale)
	if len(r.Crossover.Points) > 0 {
		var pts []string
		for _, p := range r.Crossover.Points {
			pts = append(pts, fmt.Sprintf("%d: %.3f/%.3f", p.Ctx, float64(p.OnePass)/1e6, float64(p.Partitioned)/1e6))
		}
		fmt.Fprintf(w, "crossover measured: %d (context: one-pass/partitioned ms, one decode row: %s)\n", r.From, strings.Join(pts, ", "))
	} else {
		fmt.Fprintf(w, "crossover given: %d\n", r.From)
	}
	for _, c := range r.Checks {
		mark := "PASS"
		if !c.Pass {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "check %s: %s: %s\n", mark, c.Name, c.Detail)
	}
	return nil
}
