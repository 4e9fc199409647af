package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refAttn is masked attention in float64 with its analytic gradients, the reference
// of every masked kernel: for each row, s_j = mod(Scale·q·k_j) over the allowed j,
// P = softmax(s), O = P·V; dV_j += P_j·dO, dP_j = dO·V_j, dS_j = P_j·(dP_j − dO·O),
// dS_j ·= (1 − tanh²) under a soft cap, dQ += Scale·dS_j·K_j, dK_j += Scale·dS_j·Q.
// A row with nothing allowed has O = 0 and no gradient.
func refAttn(p *AttnProblem, mask MaskFunc, dO []float32) (o, dq, dk, dv []float64) {
	d := p.D
	o, dq = make([]float64, len(p.Q)), make([]float64, len(p.Q))
	dk, dv = make([]float64, len(p.K)), make([]float64, len(p.V))
	s, t, pr := make([]float64, p.Skv), make([]float64, p.Skv), make([]float64, p.Skv)
	for b := range p.B {
		for h := range p.H {
			head := b*p.H + h
			for qi := range p.Sq {
				row := (head*p.Sq + qi) * d
				mx := math.Inf(-1)
				for kv := range p.Skv {
					s[kv] = math.Inf(-1)
					if !mask(b, h, qi, kv) {
						continue
					}
					var dot float64
					for x := range d {
						dot += float64(p.Q[row+x]) * float64(p.K[(head*p.Skv+kv)*d+x])
					}
					v := dot * float64(p.Scale)
					if p.Mod.ALiBi != nil {
						v += float64(p.Mod.ALiBi[h]) * float64(kv-qi)
					}
					if c := float64(p.Mod.Softcap); c > 0 {
						t[kv] = math.Tanh(v / c)
						v = c * t[kv]
					}
					s[kv] = v
					mx = math.Max(mx, v)
				}
				if math.IsInf(mx, -1) {
					continue
				}
				var sum float64
				for kv := range p.Skv {
					pr[kv] = math.Exp(s[kv] - mx)
					sum += pr[kv]
				}
				for kv := range p.Skv {
					pr[kv] /= sum
					for x := range d {
						o[row+x] += pr[kv] * float64(p.V[(head*p.Skv+kv)*d+x])
					}
				}
				var dr float64
				for x := range d {
					dr += float64(dO[row+x]) * o[row+x]
				}
				for kv := range p.Skv {
					if pr[kv] == 0 {
						continue
					}
					kvRow := (head*p.Skv + kv) * d
					var dp float64
					for x := range d {
						dv[kvRow+x] += pr[kv] * float64(dO[row+x])
						dp += float64(dO[row+x]) * float64(p.V[kvRow+x])
					}
					ds := pr[kv] * (dp - dr)
					if p.Mod.Softcap > 0 {
						ds *= 1 - t[kv]*t[kv]
					}
					ds *= float64(p.Scale)
					for x := range d {
						dq[row+x] += ds * float64(p.K[kvRow+x])
						dk[kvRow+x] += ds * float64(p.Q[row+x])
					}
				}
			}
		}
	}
	return o, dq, dk, dv
}

// relErr is max|x − ref| / max(max|ref|, 1): the error relative to the tensor's
// scale (an element-wise ratio is meaningless where the reference is near zero), and
// absolute for a tensor whose values are all below 1 (the inputs are N(0, 1), so a
// tiny gradient is a cancellation, e.g. a row with one allowed key, whose float32
// rounding is of the order of the terms, not of the result).
func relErr(x []float32, ref []float64) float64 {
	diff, scale := 0.0, 1.0
	for i, r := range ref {
		diff = math.Max(diff, math.Abs(float64(x[i])-r))
		scale = math.Max(scale, math.Abs(r))
	}
	return diff / scale
}

func randSlice(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

func newProblem(rng *rand.Rand, b, h, sq, skv, d int, mod ScoreMod) *AttnProblem {
	return &AttnProblem{B: b, H: h, Sq: sq, Skv: skv, D: d, Scale: float32(1 / math.Sqrt(float64(d))), Mod: mod,
		Q: randSlice(rng, b*h*sq*d), K: randSlice(rng, b*h*skv*d), V: randSlice(rng, b*h*skv*d)}
}

// testMasks are small versions of attention-gym's masks (the suite's own live in
// workloads/kernelbench, which kernels may not import).
func testMasks(s int) map[string]MaskFunc {
	causal := func(_, _, q, kv int) bool { return kv <= q }
	w, prefix := s/5, s/3
	docs := []int{0, s / 7, s / 2, s/2 + 3, s} // document starts; batch 1 shifts them
	doc := func(b, q int) int {
		q = (q + b*s/9) % s
		for i := 1; i < len(docs); i++ {
			if q < docs[i] {
				return i
			}
		}
		return len(docs)
	}
	return map[string]MaskFunc{
		"causal":         causal,
		"none":           func(_, _, _, _ int) bool { return true },
		"sliding_window": func(_, _, q, kv int) bool { return kv <= q && q-kv <= w },
		"prefix_lm":      func(_, _, q, kv int) bool { return kv <= q || kv < prefix },
		"document":       func(b, _, q, kv int) bool { return kv <= q && doc(b, q) == doc(b, kv) },
		"head_checker":   func(_, h, q, kv int) bool { return (q/9+kv/13+h)%3 != 0 },
	}
}

// maskDepends says which masks of testMasks depend on the batch or the head, so the
// maps and dense masks are built per batch/head for them.
var maskDepends = map[string][2]bool{"document": {true, false}, "head_checker": {false, true}}

// attnBounds are the largest relative errors (relErr) allowed against the float64
// reference: float32 accumulation over a few hundred terms.
const (
	fwdBound = 2e-5
	bwdBound = 1e-4
)

type attnKernel struct {
	name string
	fwd  func(c *CPU, o, lse []float32, p *AttnProblem)
	bwd  func(c *CPU, g AttnGrads, p *AttnProblem, o, lse, dO []float32)
}

// kernelsFor returns the kernels that compute mask f: dense and block-sparse always,
// the fused causal kernel when f is causal.
func kernelsFor(c *CPU, p *AttnProblem, f MaskFunc, causal bool, mb, mh, block int) []attnKernel {
	dm := c.NewDenseMask(f, mb, mh, p.Sq, p.Skv)
	bm := c.NewBlockMap(f, mb, mh, p.Sq, p.Skv, block)
	ks := []attnKernel{
		{"dense", func(c *CPU, o, lse []float32, p *AttnProblem) { c.AttnDense(o, lse, p, dm) },
			func(c *CPU, g AttnGrads, p *AttnProblem, o, lse, dO []float32) {
				c.AttnDenseBackward(g, p, dm, o, lse, dO)
			}},
		{"block-sparse", func(c *CPU, o, lse []float32, p *AttnProblem) { c.AttnBlockSparse(o, lse, p, bm) },
			func(c *CPU, g AttnGrads, p *AttnProblem, o, lse, dO []float32) {
				c.AttnBlockSparseBackward(g, p, bm, o, lse, dO)
			}},
	}
	if causal {
		ks = append(ks, attnKernel{"causal", func(c *CPU, o, lse []float32, p *AttnProblem) { c.AttnCausal(o, lse, p, block) },
			func(c *CPU, g AttnGrads, p *AttnProblem, o, lse, dO []float32) {
				c.AttnCausalBackward(g, p, block, o, lse, dO)
			}})
	}
	return ks
}

// checkKernels runs every kernel for mask f on p against the float64 reference and
// returns the worst forward and backward relative errors per kernel.
func checkKernels(t *testing.T, c *CPU, p *AttnProblem, f MaskFunc, causal bool, mb, mh, block int, rng *rand.Rand) map[string][2]float64 {
	t.Helper()
	dO := randSlice(rng, len(p.Q))
	ro, rdq, rdk, rdv := refAttn(p, f, dO)
	out := map[string][2]float64{}
	for _, k := range kernelsFor(c, p, f, causal, mb, mh, block) {
		o, lse := make([]float32, len(p.Q)), make([]float32, p.B*p.H*p.Sq)
		k.fwd(c, o, lse, p)
		g := AttnGrads{DQ: make([]float32, len(p.Q)), DK: make([]float32, len(p.K)), DV: make([]float32, len(p.V))}
		for i := range g.DQ { // stale values must be overwritten
			g.DQ[i] = 7
		}
		k.bwd(c, g, p, o, lse, dO)
		fe := relErr(o, ro)
		be := max(relErr(g.DQ, rdq), relErr(g.DK, rdk), relErr(g.DV, rdv))
		if fe > fwdBound || be > bwdBound || math.IsNaN(fe) || math.IsNaN(be) {
			t.Errorf("%s: relative error forward %.2e (bound %.0e), backward %.2e (bound %.0e)", k.name, fe, fwdBound, be, bwdBound)
		}
		out[k.name] = [2]float64{fe, be}
	}
	return out
}

// TestMaskedAttention checks every kernel on every mask and score modification of
// attention-gym's list against the float64 reference, forward and backward, on a
// shape whose lengths are not multiples of the block and with Sq ≠ Skv.
func TestMaskedAttention(t *testing.T) {
	c := New(2)
	defer c.Close()
	const s = 150
	masks := testMasks(s)
	alibi := []float32{0.5, 0.0625}
	mods := map[string]ScoreMod{
		"plain":          {},
		"alibi":          {ALiBi: alibi},
		"softcap":        {Softcap: 30},
		"softcap_approx": {Softcap: 30, ApproxTanh: true},
		"softcap_tight":  {Softcap: 2, ApproxTanh: true}, // scores well into tanh's bend
		"alibi_softcap":  {ALiBi: alibi, Softcap: 5},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for mname, f := range masks {
		for modName, mod := range mods {
			if mname != "causal" && mname != "none" && modName != "plain" && modName != "softcap_approx" {
				continue // every mod on causal and no mask; the masks with two mods
			}
			t.Run(mname+"/"+modName, func(t *testing.T) {
				p := newProblem(rng, 2, 2, s, s, 24, mod)
				dep := maskDepends[mname]
				mb, mh := 1, 1
				if dep[0] {
					mb = p.B
				}
				if dep[1] {
					mh = p.H
				}
				errs := checkKernels(t, c, p, f, mname == "causal", mb, mh, 32, rng)
				t.Logf("%-30s max relative error fwd/bwd:%s", mname+"/"+modName, fmtErrs(errs))
			})
		}
	}
	t.Run("sq!=skv", func(t *testing.T) {
		p := newProblem(rng, 1, 2, 70, 130, 16, ScoreMod{ALiBi: alibi})
		checkKernels(t, c, p, masks["causal"], true, 1, 1, 32, rng)
		checkKernels(t, c, p, masks["head_checker"], false, 1, 2, 16, rng)
	})
}

func fmtErrs(m map[string][2]float64) string {
	s := ""
	for _, k := range []string{"causal", "dense", "block-sparse"} {
		if e, ok := m[k]; ok {
			s += fmt.Sprintf(" %s %.1e/%.1e", k, e[0], e[1])
		}
	}
	return s
}

// TestRefAttnGradients checks the reference's analytic gradients against central
// finite differences of L = Σ O∘dO in float64 (so a wrong formula in the reference
// cannot hide behind kernels that share it), with ALiBi, a soft cap and a mask.
func TestRefAttnGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := newProblem(rng, 1, 2, 9, 11, 4, ScoreMod{ALiBi: []float32{0.3, 0.7}, Softcap: 1.5})
	p.Scale = 0.9 // scores large enough for the soft cap to bend
	mask := func(_, h, q, kv int) bool { return kv <= q+2 && (q+kv+h)%4 != 1 }
	dO := randSlice(rng, len(p.Q))
	_, dq, dk, dv := refAttn(p, mask, dO)
	loss := func() float64 {
		o, _, _, _ := refAttn(p, mask, dO)
		var l float64
		for i, v := range o {
			l += v * float64(dO[i])
		}
		return l
	}
	for _, tc := range []struct {
		name string
		x    []float32
		g    []float64
	}{{"Q", p.Q, dq}, {"K", p.K, dk}, {"V", p.V, dv}} {
		var worst float64
		for i := range tc.x {
			// float32 inputs: a step of 1e-2 keeps the difference exact enough.
			const h = 1e-2
			x0 := tc.x[i]
			tc.x[i] = x0 + h
			lp := loss()
			tc.x[i] = x0 - h
			lm := loss()
			tc.x[i] = x0
			fd := (lp - lm) / (float64(float32(x0+h)) - float64(float32(x0-h)))
			worst = math.Max(worst, math.Abs(fd-tc.g[i]))
		}
		if worst > 2e-3 {
			t.Errorf("d%s: analytic vs finite difference differ by %.2e (bound 2e-3)", tc.name, worst)
		}
	}
}

// TestTanhApprox measures TanhApprox against math.Tanh on a dense grid over
// [−12, 12] (beyond, both are ±1 in float32) and checks TanhApproxMaxAbsErr bounds it.
func TestTanhApprox(t *testing.T) {
	var worst float64
	at := 0.0
	for i := -1_200_000; i <= 1_200_000; i++ {
		x := float32(i) * 1e-5
		e := math.Abs(float64(TanhApprox(x)) - math.Tanh(float64(x)))
		if e > worst {
			worst, at = e, float64(x)
		}
	}
	for _, x := range []float32{-1e30, -40, 40, 1e30, float32(math.Inf(1)), float32(math.Inf(-1))} {
		worst = math.Max(worst, math.Abs(float64(TanhApprox(x))-math.Tanh(float64(x))))
	}
	t.Logf("max |TanhApprox − tanh| = %.3g at x = %.5f", worst, at)
	if worst > TanhApproxMaxAbsErr {
		t.Errorf("max error %.3g at %g exceeds TanhApproxMaxAbsErr %.3g", worst, at, TanhApproxMaxAbsErr)
	}
}

// TestSoftmaxExp measures softmaxExp against math.Exp over [−87, 0] (and a little
// above 0, where a backward pass can land by rounding) and checks SoftmaxExpMaxRelErr
// bounds it; below −87 it is 0.
func TestSoftmaxExp(t *testing.T) {
	var worst, at float64
	for i := -870_000; i <= 1000; i++ {
		x := float32(i) * 1e-4
		r := math.Exp(float64(x))
		if e := math.Abs(float64(softmaxExp(x))-r) / r; e > worst {
			worst, at = e, float64(x)
		}
	}
	t.Logf("max relative error %.3g at x = %.4f", worst, at)
	if worst > SoftmaxExpMaxRelErr {
		t.Errorf("max relative error %.3g at %g exceeds SoftmaxExpMaxRelErr %.3g", worst, at, SoftmaxExpMaxRelErr)
	}
	if softmaxExp(-88) != 0 || softmaxExp(float32(math.Inf(-1))) != 0 {
		t.Error("softmaxExp below −87 is not 0")
	}
}

// TestBlockMap checks the tile kinds of a mask against a direct count and the
// sparsity against the share of empty tiles, with lengths that leave ragged edges.
func TestBlockMap(t *testing.T) {
	c := New(2)
	defer c.Close()
	const sq, skv, n = 100, 70, 16
	f := func(_, _, q, kv int) bool { return kv <= q && q-kv < 30 }
	m := c.NewBlockMap(f, 1, 1, sq, skv, n)
	if m.NQ != 7 || m.NK != 5 {
		t.Fatalf("blocks %dx%d, want 7x5", m.NQ, m.NK)
	}
	empty := 0
	for qb := range m.NQ {
		for kb := range m.NK {
			allowed, total := 0, 0
			for q := qb * n; q < min(sq, (qb+1)*n); q++ {
				for kv := kb * n; kv < min(skv, (kb+1)*n); kv++ {
					total++
					if f(0, 0, q, kv) {
						allowed++
					}
				}
			}
			want := BlockPartial
			switch allowed {
			case 0:
				want = BlockEmpty
				empty++
			case total:
				want = BlockFull
			}
			if got := m.Kind(0, 3, qb, kb); got != want {
				t.Errorf("tile (%d,%d): kind %d, want %d", qb, kb, got, want)
			}
		}
	}
	if got, want := m.Sparsity(), float64(empty)/35; got != want {
		t.Errorf("sparsity %v, want %v", got, want)
	}
}

// TestAttnValidate covers the shape errors.
func TestAttnValidate(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	good := newProblem(rng, 1, 2, 4, 4, 8, ScoreMod{})
	for _, tc := range []struct {
		name string
		edit func(p *AttnProblem)
	}{
		{"zero dim", func(p *AttnProblem) { p.D = 0 }},
		{"short Q", func(p *AttnProblem) { p.Q = p.Q[1:] }},
		{"short V", func(p *AttnProblem) { p.V = p.V[1:] }},
		{"slopes", func(p *AttnProblem) { p.Mod.ALiBi = []float32{1} }},
		{"cap", func(p *AttnProblem) { p.Mod.Softcap = -1 }},
	} {
		p := *good
		tc.edit(&p)
		if p.Validate() == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if err := good.Validate(); err != nil {
		t.Errorf("good problem: %v", err)
	}
}

// FuzzMaskedAttention runs the dense, block-sparse and (for causal masks) fused
// causal kernels on random shapes, block sizes, masks and score modifications
// against the float64 reference.
func FuzzMaskedAttention(f *testing.F) {
	f.Add(uint64(1), uint8(2), uint8(40), uint8(33), uint8(8), uint8(16), uint8(0))
	f.Add(uint64(7), uint8(1), uint8(1), uint8(90), uint8(5), uint8(3), uint8(5))
	f.Add(uint64(9), uint8(3), uint8(64), uint8(64), uint8(32), uint8(64), uint8(2))
	c := New(2)
	f.Cleanup(c.Close)
	f.Fuzz(func(t *testing.T, seed uint64, heads, sq, skv, d, block, kind uint8) {
		h, q, kv, dd, n := 1+int(heads)%3, 1+int(sq)%96, 1+int(skv)%96, 1+int(d)%40, 1+int(block)%48
		rng := rand.New(rand.NewPCG(seed, 11))
		var mod ScoreMod
		if kind&1 != 0 {
			mod.ALiBi = make([]float32, h)
			for i := range mod.ALiBi {
				mod.ALiBi[i] = float32(rng.Float64())
			}
		}
		if kind&2 != 0 {
			mod.Softcap, mod.ApproxTanh = float32(0.5+10*rng.Float64()), kind&4 != 0
		}
		p := newProblem(rng, 1+int(kind>>4)%2, h, q, kv, dd, mod)
		// A random mask: a band, a per-head pattern, or random tiles of random density.
		tileP, density, lo, hi := 1+rng.IntN(20), rng.Float64(), rng.IntN(q+1)-q/2, rng.IntN(kv+1)
		salt := rng.Uint64()
		var f MaskFunc
		causal := false
		switch (kind >> 3) % 3 {
		case 0:
			f, causal = func(_, _, q, kv int) bool { return kv <= q }, true
		case 1:
			f = func(_, _, q, kv int) bool { return kv-q >= lo && kv-q <= hi }
		default:
			f = func(b, h, q, kv int) bool {
				x := uint64(b*7919+h*104729+q/tileP*1299709+kv/tileP) ^ salt
				x ^= x >> 33
				x *= 0xff51afd7ed558ccd
				x ^= x >> 29
				return float64(x%1000) < 1000*density
			}
		}
		checkKernels(t, c, p, f, causal, p.B, h, n, rng)
	})
}

// BenchmarkMaskedAttention times the three kernels forward and backward on a
// sliding-window mask (S=1024, window 256, H=2, D=64, tiles of 128); GFLOP/s counts
// the useful work as attention-gym does (4·H·S²·D·density forward, 2.5× that
// backward; density = 1 − sparsity, 0.5 for the causal kernel).
func BenchmarkMaskedAttention(b *testing.B) {
	c := New(0)
	defer c.Close()
	const s, w, n = 1024, 256, 128
	rng := rand.New(rand.NewPCG(1, 1))
	p := newProblem(rng, 1, 2, s, s, 64, ScoreMod{})
	f := func(_, _, q, kv int) bool { return kv <= q && q-kv <= w }
	dm, bm := c.NewDenseMask(f, 1, 1, s, s), c.NewBlockMap(f, 1, 1, s, s, n)
	dO := randSlice(rng, len(p.Q))
	o, lse := make([]float32, len(p.Q)), make([]float32, p.H*s)
	g := AttnGrads{DQ: make([]float32, len(p.Q)), DK: make([]float32, len(p.K)), DV: make([]float32, len(p.V))}
	fwdFLOPs := 4 * float64(p.H) * s * s * float64(p.D)
	for _, k := range []struct {
		name     string
		density  float64
		fwd, bwd func()
	}{
		{"causal", 0.5, func() { c.AttnCausal(o, lse, p, n) }, func() { c.AttnCausalBackward(g, p, n, o, lse, dO) }},
		{"dense", 1 - bm.Sparsity(), func() { c.AttnDense(o, lse, p, dm) }, func() { c.AttnDenseBackward(g, p, dm, o, lse, dO) }},
		{"block-sparse", 1 - bm.Sparsity(), func() { c.AttnBlockSparse(o, lse, p, bm) }, func() { c.AttnBlockSparseBackward(g, p, bm, o, lse, dO) }},
	} {
		b.Run(k.name+"/fwd", func(b *testing.B) {
			for b.Loop() {
				k.fwd()
			}
			b.ReportMetric(fwdFLOPs*k.density*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
		})
		k.fwd()
		b.Run(k.name+"/bwd", func(b *testing.B) {
			for b.Loop() {
				k.bwd()
			}
			b.ReportMetric(2.5*fwdFLOPs*k.density*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "GFLOP/s")
		})
	}
}
