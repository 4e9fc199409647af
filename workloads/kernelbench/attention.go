package kernelbench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"llmbench/kernels/cpu"
	"llmbench/workloads"
)

// The rows of an attention-masks table: attention-gym's "causal FA2", "F.sdpa + mask"
// and "flexattention".
const (
	ImplCausal = "causal fused"
	ImplDense  = "dense + mask"
	ImplSparse = "block-sparse"
)

// CorrectnessBound is the largest relative error (max|x − ref| / max(max|ref|, 1)
// per tensor) allowed between the block-sparse and the dense kernel, forward output
// and each gradient: both are float32 and within 2e-5 / 1e-4 of a float64
// reference in kernels/cpu's tests, so 1e-4 between them leaves no room for a wrong
// tile.
const CorrectnessBound = 1e-4

// MaskResult is what one mask variant measured.
type MaskResult struct {
	Mask  string `json:"mask"`
	Title string `json:"title"`
	// Sparsity is the share of BlockSize×BlockSize tiles the block map skips.
	Sparsity float64 `json:"sparsity"`
	// Correct: the block-sparse kernel's output and gradients are within
	// CorrectnessBound of the dense kernel's; FwdErr and BwdErr are the measured
	// relative errors (BwdErr: the worst of dQ, dK, dV).
	Correct bool    `json:"correct"`
	FwdErr  float64 `json:"fwd_rel_err"`
	BwdErr  float64 `json:"bwd_rel_err"`
	Impls   []Impl  `json:"impls"`
	// Picture is the block-mask drawing (BlockMap.String's form).
	Picture string `json:"picture"`
}

// Impl is one implementation's timings on a mask: the median of the repetitions.
type Impl struct {
	Name      string    `json:"name"`
	FwdMs     float64   `json:"fwd_ms"`
	BwdMs     float64   `json:"bwd_ms"`
	FwdTFLOPS float64   `json:"fwd_tflops"`
	BwdTFLOPS float64   `json:"bwd_tflops"`
	FwdRunsMs []float64 `json:"fwd_runs_ms"`
	BwdRunsMs []float64 `json:"bwd_runs_ms"`
}

// FLOPFormula states how the attention-masks tables count FLOPs.
const FLOPFormula = "FLOPs as attention-gym counts them: FW = 4·B·H·Sq·Skv·D·density, BW = 2.5·FW; " +
	"density = 1 − sparsity for dense + mask and block-sparse (useful work: the dense kernel does more), 0.5 for causal fused"

// FwdFLOPs is a forward pass's FLOP count as attention-gym counts it:
// 4·B·H·Sq·Skv·D·density (two matrix products of 2·Sq·Skv·D each, scaled by the
// share of tiles not skipped).
func FwdFLOPs(b, h, sq, skv, d int, density float64) float64 {
	return 4 * float64(b) * float64(h) * float64(sq) * float64(skv) * float64(d) * density
}

// BwdFLOPs is the backward pass's count, 2.5 times the forward's (attention-gym's
// multiplier 10 against 4).
func BwdFLOPs(b, h, sq, skv, d int, density float64) float64 {
	return 2.5 * FwdFLOPs(b, h, sq, skv, d, density)
}

// CheckedMasks are the masks the acceptance check reads: block-sparse must beat
// dense + mask by at least half the ideal ratio 1/(1 − sparsity) on them.
var CheckedMasks = []string{"sliding_window", "document"}

// runAttentionMasks is the attention-masks suite: per mask, the three kernels timed
// forward and backward, the block-sparse kernel checked against the dense one, the
// block map drawn.
func runAttentionMasks(ctx context.Context, spec workloads.KernelSpec, obs Observer) (*Report, error) {
	selected := masks
	if len(spec.Cases) > 0 {
		selected = nil
		for _, n := range spec.Cases {
			m, err := maskByName(n)
			if err != nil {
				return nil, err
			}
			selected = append(selected, m)
		}
	}
	c := cpu.New(spec.Threads)
	defer c.Close()
	b, h, s, d := spec.Batch, spec.Heads, spec.SeqLen, spec.HeadDim
	rng := rand.New(rand.NewPCG(spec.Seed, 0x6b65726e656c73))
	randn := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		return x
	}
	n := b * h * s * d
	base := cpu.AttnProblem{B: b, H: h, Sq: s, Skv: s, D: d, Q: randn(n), K: randn(n), V: randn(n),
		Scale: float32(1 / math.Sqrt(float64(d)))}
	dO := randn(n)
	rep := &Report{Spec: spec, Notes: []string{
		fmt.Sprintf("shape: B=%d H=%d S=%d D=%d, float32, block %d, %d threads (%s); times: the median of %d rounds after a warmup round, the three kernels taking turns",
			b, h, s, d, spec.BlockSize, c.Threads(), c.Name(), spec.Reps),
		FLOPFormula,
	}}
	var results []MaskResult
	steps := spec.Reps + 1 // a warmup round, then the timed rounds
	total := steps * len(selected)
	var err error
	for i, m := range selected {
		var res MaskResult
		var sec Section
		res, sec, err = measureMask(ctx, c, spec, m, base, dO, func(round int) {
			label := m.Name + " · warmup"
			if round > 0 {
				label = fmt.Sprintf("%s · round %d/%d", m.Name, round, spec.Reps)
			}
			obs(Event{Done: steps*i + round, Total: total, Unit: "rounds", Case: label})
		})
		if err != nil {
			break
		}
		results = append(results, res)
		rep.Sections = append(rep.Sections, sec)
		obs(Event{Done: steps * (i + 1), Total: total, Unit: "rounds", Case: m.Name + " done", Section: &rep.Sections[len(rep.Sections)-1]})
	}
	rep.Partial = len(results) < len(selected)
	if spec.Check && !rep.Partial {
		rep.Checks = sparseChecks(results)
	}
	rep.Data, _ = json.Marshal(results)
	return rep, err
}

// measureMask times the three kernels on mask m and checks block-sparse against
// dense. The kernels take turns: a warmup round, then spec.Reps rounds in each of
// which every kernel runs its forward and its backward pass once (the starting
// kernel rotating), so that the load of other processes falls on all three alike
// and the ratios between them hold on a shared machine. progress(round) says which
// round starts (0: the warmup).
func measureMask(ctx context.Context, c *cpu.CPU, spec workloads.KernelSpec, m Mask, base cpu.AttnProblem, dO []float32, progress func(int)) (MaskResult, Section, error) {
	v := m.build(spec)
	f := v.mask
	if f == nil {
		f = func(_, _, _, _ int) bool { return true }
	}
	mb := 1
	if v.perBatch {
		mb = base.B
	}
	bm := c.NewBlockMap(f, mb, 1, base.Sq, base.Skv, spec.BlockSize)
	dm := c.NewDenseMask(f, mb, 1, base.Sq, base.Skv)
	res := MaskResult{Mask: m.Name, Title: v.title, Sparsity: bm.Sparsity(), Picture: Picture(bm)}
	density := 1 - res.Sparsity
	plain := base // attention-gym's causal FA2: plain causal attention, no score_mod
	modded := base
	modded.Mod = v.mod
	type impl struct {
		name    string
		density float64
		fwd     func(o, lse []float32)
		bwd     func(g cpu.AttnGrads, o, lse []float32)
	}
	impls := []impl{
		{ImplCausal, 0.5,
			func(o, lse []float32) { c.AttnCausal(o, lse, &plain, spec.BlockSize) },
			func(g cpu.AttnGrads, o, lse []float32) { c.AttnCausalBackward(g, &plain, spec.BlockSize, o, lse, dO) }},
		{ImplDense, density,
			func(o, lse []float32) { c.AttnDense(o, lse, &modded, dm) },
			func(g cpu.AttnGrads, o, lse []float32) { c.AttnDenseBackward(g, &modded, dm, o, lse, dO) }},
		{ImplSparse, density,
			func(o, lse []float32) { c.AttnBlockSparse(o, lse, &modded, bm) },
			func(g cpu.AttnGrads, o, lse []float32) { c.AttnBlockSparseBackward(g, &modded, bm, o, lse, dO) }},
	}
	type outs struct {
		o []float32
		g cpu.AttnGrads
	}
	kept := map[string]outs{}
	b, h, s, d := base.B, base.H, base.Sq, base.D
	bufs := make([]outs, len(impls))
	lses := make([][]float32, len(impls))
	fwdMs, bwdMs := make([][]float64, len(impls)), make([][]float64, len(impls))
	for i := range impls {
		bufs[i] = outs{make([]float32, len(base.Q)), cpu.AttnGrads{DQ: make([]float32, len(base.Q)), DK: make([]float32, len(base.K)), DV: make([]float32, len(base.V))}}
		lses[i] = make([]float32, b*h*s)
	}
	for round := range spec.Reps + 1 {
		if err := ctx.Err(); err != nil {
			return res, Section{}, err
		}
		progress(round)
		for j := range impls {
			i := (j + round) % len(impls)
			im := impls[i]
			t0 := time.Now()
			im.fwd(bufs[i].o, lses[i])
			t1 := time.Now()
			im.bwd(bufs[i].g, bufs[i].o, lses[i])
			t2 := time.Now()
			if round > 0 {
				fwdMs[i] = append(fwdMs[i], float64(t1.Sub(t0).Nanoseconds())/1e6)
				bwdMs[i] = append(bwdMs[i], float64(t2.Sub(t1).Nanoseconds())/1e6)
			}
		}
	}
	for i, im := range impls {
		r := Impl{Name: im.name, FwdRunsMs: fwdMs[i], BwdRunsMs: bwdMs[i], FwdMs: median(fwdMs[i]), BwdMs: median(bwdMs[i])}
		r.FwdTFLOPS = FwdFLOPs(b, h, s, s, d, im.density) / (r.FwdMs * 1e-3) / 1e12
		r.BwdTFLOPS = BwdFLOPs(b, h, s, s, d, im.density) / (r.BwdMs * 1e-3) / 1e12
		res.Impls = append(res.Impls, r)
		kept[im.name] = bufs[i]
	}
	de, sp := kept[ImplDense], kept[ImplSparse]
	res.FwdErr = RelErr(sp.o, de.o)
	res.BwdErr = max(RelErr(sp.g.DQ, de.g.DQ), RelErr(sp.g.DK, de.g.DK), RelErr(sp.g.DV, de.g.DV))
	res.Correct = res.FwdErr <= CorrectnessBound && res.BwdErr <= CorrectnessBound
	return res, maskSection(res, spec, mb), nil
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// RelErr is max|x − ref| / max(max|ref|, 1): the error relative to the tensor's
// scale, absolute for a tensor whose values are all below 1.
func RelErr(x, ref []float32) float64 {
	diff, scale := 0.0, 1.0
	for i, r := range ref {
		diff = math.Max(diff, math.Abs(float64(x[i])-float64(r)))
		scale = math.Max(scale, math.Abs(float64(r)))
	}
	if math.IsNaN(diff) || slices.ContainsFunc(x, func(v float32) bool { return math.IsNaN(float64(v)) }) {
		return math.NaN()
	}
	return diff / scale
}

// maskSection prints one mask as attention-gym does: the title box, the correctness
// line, the table, the block mask.
func maskSection(r MaskResult, spec workloads.KernelSpec, mb int) Section {
	t := &Table{Columns: []string{"Operation", "FW Time (ms)", "FW FLOPS (TF/s)", "BW Time (ms)", "BW FLOPS (TF/s)"},
		Numeric: []bool{false, true, true, true, true}}
	for _, im := range r.Impls {
		t.Rows = append(t.Rows, []string{im.Name, fmt.Sprintf("%.4f", im.FwdMs), fmt.Sprintf("%.4f", im.FwdTFLOPS),
			fmt.Sprintf("%.4f", im.BwdMs), fmt.Sprintf("%.4f", im.BwdTFLOPS)})
	}
	var b strings.Builder
	b.WriteString(Box(r.Title))
	if r.Correct {
		fmt.Fprintf(&b, "Correctness check passed ✅ (block-sparse vs dense + mask, max relative error: FW %.1e, BW %.1e)\n", r.FwdErr, r.BwdErr)
	} else {
		fmt.Fprintf(&b, "Correctness check FAILED ❌: block-sparse vs dense + mask, max relative error FW %.2e, BW %.2e (bound %.0e)\n", r.FwdErr, r.BwdErr, CorrectnessBound)
	}
	b.WriteString(Grid(t))
	fmt.Fprintf(&b, "\nBlock Mask:\nBlockMask(shape=(%d, 1, %d, %d), sparsity=%.2f%%,\n%s)\n\n", mb, spec.SeqLen, spec.SeqLen, 100*r.Sparsity, r.Picture)
	return Section{Title: r.Title, Text: b.String(), Table: t}
}

// pictureCells is the most cells a block-mask picture draws per side (torch's
// BlockMask.to_string grid).
const pictureCells = 20

// Picture draws batch 0 of a block map as torch's BlockMask does: one cell (two
// characters) per tile, or per square group of tiles when there are more than 20 a
// side; "██" when every tile of the cell is full, "  " when every tile is skipped,
// "░░" otherwise (partial tiles, or a mix). Trailing blanks are trimmed.
func Picture(bm *cpu.BlockMap) string {
	step := (max(bm.NQ, bm.NK) + pictureCells - 1) / pictureCells
	var b strings.Builder
	for r0 := 0; r0 < bm.NQ; r0 += step {
		var line strings.Builder
		for c0 := 0; c0 < bm.NK; c0 += step {
			full, empty := true, true
			for qb := r0; qb < min(bm.NQ, r0+step); qb++ {
				for kb := c0; kb < min(bm.NK, c0+step); kb++ {
					k := bm.Kind(0, 0, qb, kb)
					full = full && k == cpu.BlockFull
					empty = empty && k == cpu.BlockEmpty
				}
			}
			switch {
			case full:
				line.WriteString("██")
			case empty:
				line.WriteString("  ")
			default:
				line.WriteString("░░")
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}

// sparseChecks is the acceptance check: on each checked mask measured, block-sparse
// beats dense + mask, forward and backward, by at least half the ideal ratio
// 1/(1 − sparsity). The ratio is of each kernel's fastest round: other processes'
// load only ever adds time, and on a shared machine a round's time can triple, so
// the fastest round is the estimate of the kernel's own time (the tables show the
// median).
func sparseChecks(results []MaskResult) []Check {
	var out []Check
	for _, r := range results {
		if !slices.Contains(CheckedMasks, r.Mask) {
			continue
		}
		ideal := 1 / (1 - r.Sparsity)
		var dense, sparse Impl
		for _, im := range r.Impls {
			switch im.Name {
			case ImplDense:
				dense = im
			case ImplSparse:
				sparse = im
			}
		}
		fw := slices.Min(dense.FwdRunsMs) / slices.Min(sparse.FwdRunsMs)
		bw := slices.Min(dense.BwdRunsMs) / slices.Min(sparse.BwdRunsMs)
		out = append(out, Check{Name: r.Mask + " block-sparse vs dense + mask",
			Pass: fw >= ideal/2 && bw >= ideal/2,
			Detail: fmt.Sprintf("sparsity %.2f%%, ideal %.2f×, bound %.2f×: FW %.2f×, BW %.2f× (fastest of %d rounds each)",
				100*r.Sparsity, ideal, ideal/2, fw, bw, len(dense.FwdRunsMs))})
	}
	if len(out) == 0 {
		out = append(out, Check{Name: "block-sparse vs dense + mask", Detail: "none of the checked masks (" + strings.Join(CheckedMasks, ", ") + ") ran"})
	}
	return out
}
