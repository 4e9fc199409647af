package model

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"llmbench/engine/gguf"
	"llmbench/engine/synth"
	"llmbench/kernels"
	"llmbench/kernels/cpu"
)

// ref64 is a plain float64 implementation of the llama/qwen2/qwen3 forward pass, written
// straight from the architecture's definition with every weight dequantized to
// float64. It shares no code with Model.Forward.
type ref64 struct {
	c                 Config
	embd, out         [][]float64
	outNorm           []float64
	attnNorm, ffnNorm [][]float64
	q, k, v, o        [][][]float64
	qb, kb, vb        [][]float64
	qn, kn            [][]float64 // per-head q/k RMSNorm weights (qwen3), or nil
	gate, up, down    [][][]float64
	window            int // sliding window of the attention mask (0: full causal)
	// qwen3moe: per layer the router (Experts rows) and each expert's gate, up and
	// down matrices; noRenorm drops the renormalisation of the chosen experts' weights
	// (a deliberately wrong routing, which the tests must tell apart).
	router            [][][]float64
	gateX, upX, downX [][][][]float64
	noRenorm          bool
	chosen            map[int]bool // every expert the routing picked

	// gpt-oss, read from the file by newRef: o bias, per-head sinks, router bias,
	// per-expert biases, the window of the even layers and YaRN's factor, original
	// context and betas. drop names one feature the reference leaves out (a
	// deliberately wrong model the tests must tell apart): "sinks", "window", "yarn",
	// "clamp", "biases" or "routing" (softmax over all experts, not the top k).
	oss                bool
	ob, sinks, routerB [][]float64
	gateB, upB, downB  [][][]float64
	layerWindow        int
	yarnFactor         float64
	yarnOrig           int
	drop               string
	clamped            int // activations the clamp changed
}

func dequant(t *testing.T, f *gguf.File, name string) ([][]float64, bool) {
	ti, ok := f.Tensor(name)
	if !ok {
		return nil, false
	}
	cols := int(ti.Shape[0])
	rows := int(ti.Rows())
	flat := make([]float32, cols*rows)
	kernels.TraitsOf(ti.Type).ToFloat(f.TensorData(ti), flat)
	m := make([][]float64, rows)
	for r := range m {
		m[r] = make([]float64, cols)
		for c := range m[r] {
			m[r][c] = float64(flat[r*cols+c])
		}
	}
	return m, true
}

func newRef(t *testing.T, f *gguf.File, c Config) *ref64 {
	must := func(name string) [][]float64 {
		m, ok := dequant(t, f, name)
		if !ok {
			t.Fatalf("missing %s", name)
		}
		return m
	}
	opt := func(name string) []float64 {
		if m, ok := dequant(t, f, name); ok {
			return m[0]
		}
		return nil
	}
	r := &ref64{c: c, embd: must("token_embd.weight"), outNorm: must("output_norm.weight")[0]}
	if m, ok := dequant(t, f, "output.weight"); ok {
		r.out = m
	} else {
		r.out = r.embd
	}
	r.oss = f.Architecture() == "gpt-oss"
	ffnNorm := "ffn_norm.weight"
	if r.oss {
		ffnNorm = "post_attention_norm.weight"
		w, _ := f.Uint("gpt-oss.attention.sliding_window")
		r.layerWindow = int(w)
		r.yarnFactor, _ = f.Float("gpt-oss.rope.scaling.factor")
		o, _ := f.Uint("gpt-oss.rope.scaling.original_context_length")
		r.yarnOrig = int(o)
	}
	for i := range c.Layers {
		p := fmt.Sprintf("blk.%d.", i)
		r.attnNorm = append(r.attnNorm, must(p + "attn_norm.weight")[0])
		r.ffnNorm = append(r.ffnNorm, must(p + ffnNorm)[0])
		if r.oss {
			r.ob = append(r.ob, must(p + "attn_output.bias")[0])
			r.sinks = append(r.sinks, must(p + "attn_sinks.weight")[0])
			r.routerB = append(r.routerB, must(p + "ffn_gate_inp.bias")[0])
			r.gateB = append(r.gateB, must(p+"ffn_gate_exps.bias"))
			r.upB = append(r.upB, must(p+"ffn_up_exps.bias"))
			r.downB = append(r.downB, must(p+"ffn_down_exps.bias"))
		}
		r.q = append(r.q, must(p+"attn_q.weight"))
		r.k = append(r.k, must(p+"attn_k.weight"))
		r.v = append(r.v, must(p+"attn_v.weight"))
		r.o = append(r.o, must(p+"attn_output.weight"))
		r.qb = append(r.qb, opt(p+"attn_q.bias"))
		r.kb = append(r.kb, opt(p+"attn_k.bias"))
		r.vb = append(r.vb, opt(p+"attn_v.bias"))
		r.qn = append(r.qn, opt(p+"attn_q_norm.weight"))
		r.kn = append(r.kn, opt(p+"attn_k_norm.weight"))
		if c.Experts > 0 {
			r.router = append(r.router, must(p+"ffn_gate_inp.weight"))
			r.gateX = append(r.gateX, splitExperts(must(p+"ffn_gate_exps.weight"), c.Experts))
			r.upX = append(r.upX, splitExperts(must(p+"ffn_up_exps.weight"), c.Experts))
			r.downX = append(r.downX, splitExperts(must(p+"ffn_down_exps.weight"), c.Experts))
			continue
		}
		r.gate = append(r.gate, must(p+"ffn_gate.weight"))
		r.up = append(r.up, must(p+"ffn_up.weight"))
		r.down = append(r.down, must(p+"ffn_down.weight"))
	}
	return r
}

// splitExperts cuts the rows of a dequantized 3-D expert tensor into n matrices.
func splitExperts(rows [][]float64, n int) [][][]float64 {
	out := make([][][]float64, n)
	per := len(rows) / n
	for e := range out {
		out[e] = rows[e*per : (e+1)*per]
	}
	return out
}

// swiglu returns down·(silu(gate·h) ⊙ up·h).
func swiglu(gate, up, down [][]float64, h []float64) []float64 {
	g, u := matvec(gate, h, nil), matvec(up, h, nil)
	for j := range g {
		g[j] = g[j] / (1 + math.Exp(-g[j])) * u[j]
	}
	return matvec(down, g, nil)
}

// ossMoE is gpt-oss's feed-forward network of layer l, from its definition: router
// logits plus bias, the ExpertsUsed largest logits softmaxed among themselves, and each
// chosen expert's gate and up projections plus biases, the clamped SwiGLU
// (g = min(gate, 7), u = clamp(up, ±7), g·σ(1.702·g)·(u + 1)), the down projection plus
// bias, weighted.
func (r *ref64) ossMoE(l int, h []float64) []float64 {
	logits := matvec(r.router[l], h, r.routerB[l])
	if r.drop == "biases" {
		logits = matvec(r.router[l], h, nil)
	}
	idx := make([]int, len(logits))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return logits[idx[a]] > logits[idx[b]] })
	chosen := idx[:r.c.ExpertsUsed]
	var sum float64
	for _, e := range chosen {
		sum += math.Exp(logits[e] - logits[chosen[0]])
	}
	if r.drop == "routing" { // the softmax over every expert, not renormalised
		sum = 0
		for _, v := range logits {
			sum += math.Exp(v - logits[chosen[0]])
		}
	}
	out := make([]float64, len(h))
	for _, e := range chosen {
		if r.chosen == nil {
			r.chosen = map[int]bool{}
		}
		r.chosen[e] = true
		bias := func(b [][]float64) []float64 {
			if r.drop == "biases" {
				return nil
			}
			return b[e]
		}
		g, u := matvec(r.gateX[l][e], h, bias(r.gateB[l])), matvec(r.upX[l][e], h, bias(r.upB[l]))
		for j := range g {
			gj, uj := g[j], u[j]
			if r.drop != "clamp" {
				gj, uj = math.Min(gj, 7), math.Max(-7, math.Min(uj, 7))
				if gj != g[j] || uj != u[j] {
					r.clamped++
				}
			}
			g[j] = gj / (1 + math.Exp(-1.702*gj)) * (uj + 1)
		}
		y := matvec(r.downX[l][e], g, bias(r.downB[l]))
		w := math.Exp(logits[e]-logits[chosen[0]]) / sum
		for j := range out {
			out[j] += w * y[j]
		}
	}
	return out
}

// moe is Qwen3-MoE's feed-forward network of layer l: the softmax of the router's
// logits, the ExpertsUsed largest probabilities, divided by their sum (unless
// noRenorm), weighting the chosen experts' SwiGLU outputs.
func (r *ref64) moe(l int, h []float64) []float64 {
	logits := matvec(r.router[l], h, nil)
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = math.Max(mx, v)
	}
	p := make([]float64, len(logits))
	var sum float64
	for i, v := range logits {
		p[i] = math.Exp(v - mx)
		sum += p[i]
	}
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] > p[idx[b]] })
	chosen := idx[:r.c.ExpertsUsed]
	var wsum float64
	for _, e := range chosen {
		if r.chosen == nil {
			r.chosen = map[int]bool{}
		}
		r.chosen[e] = true
		wsum += p[e] / sum
	}
	out := make([]float64, len(h))
	for _, e := range chosen {
		w := p[e] / sum
		if !r.noRenorm {
			w /= wsum
		}
		y := swiglu(r.gateX[l][e], r.upX[l][e], r.downX[l][e], h)
		for j := range out {
			out[j] += w * y[j]
		}
	}
	return out
}

func matvec(w [][]float64, x, bias []float64) []float64 {
	y := make([]float64, len(w))
	for r, row := range w {
		for c, v := range row {
			y[r] += v * x[c]
		}
		if bias != nil {
			y[r] += bias[r]
		}
	}
	return y
}

func rmsnorm(x, w []float64, eps float64) []float64 {
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	s := 1 / math.Sqrt(ss/float64(len(x))+eps)
	y := make([]float64, len(x))
	for i := range x {
		y[i] = x[i] * s * w[i]
	}
	return y
}

// rope rotates one head at position pos. Under YaRN (gpt-oss), from the paper's and
// llama.cpp's definition: each pair's angle mixes the interpolated angle (÷ factor)
// and the original one by a ramp over the correction dimensions of 32 and 1 rotations
// in the original context (floor and ceil), and the rotated values are scaled by
// 1 + 0.1·ln(factor).
func (r *ref64) rope(h []float64, pos int) {
	d := r.c.Rope.Dims
	base := float64(r.c.Rope.Base)
	yarn := r.yarnFactor > 1 && r.drop != "yarn"
	var lo, hi float64
	if yarn {
		corr := func(rot float64) float64 {
			return float64(d) * math.Log(float64(r.yarnOrig)/(rot*2*math.Pi)) / (2 * math.Log(base))
		}
		lo, hi = math.Max(0, math.Floor(corr(32))), math.Min(float64(d-1), math.Ceil(corr(1)))
	}
	for i := 0; i < d/2; i++ {
		theta := float64(pos) * math.Pow(base, -2*float64(i)/float64(d))
		mag := 1.0
		if yarn {
			ramp := 1 - math.Min(1, math.Max(0, (float64(i)-lo)/math.Max(0.001, hi-lo)))
			theta = theta/r.yarnFactor*(1-ramp) + theta*ramp
			mag = 1 + 0.1*math.Log(r.yarnFactor)
		}
		a, b := 2*i, 2*i+1
		if r.c.Rope.NeoX {
			a, b = i, i+d/2
		}
		x0, x1 := h[a], h[b]
		h[a] = (x0*math.Cos(theta) - x1*math.Sin(theta)) * mag
		h[b] = (x0*math.Sin(theta) + x1*math.Cos(theta)) * mag
	}
}

// forward returns the logits of every position of tokens.
func (r *ref64) forward(tokens []int32) [][]float64 {
	c := r.c
	hd := c.HeadDim
	n := len(tokens)
	xs := make([][]float64, n)
	for i, t := range tokens {
		xs[i] = append([]float64(nil), r.embd[t]...)
	}
	for l := range c.Layers {
		qs, ks, vs := make([][]float64, n), make([][]float64, n), make([][]float64, n)
		for i := range xs {
			h := rmsnorm(xs[i], r.attnNorm[l], float64(c.NormEps))
			qs[i], ks[i], vs[i] = matvec(r.q[l], h, r.qb[l]), matvec(r.k[l], h, r.kb[l]), matvec(r.v[l], h, r.vb[l])
			for hh := range c.Heads {
				if r.qn[l] != nil {
					copy(qs[i][hh*hd:], rmsnorm(qs[i][hh*hd:(hh+1)*hd], r.qn[l], float64(c.NormEps)))
				}
				r.rope(qs[i][hh*hd:(hh+1)*hd], i)
			}
			for hh := range c.KVHeads {
				if r.kn[l] != nil {
					copy(ks[i][hh*hd:], rmsnorm(ks[i][hh*hd:(hh+1)*hd], r.kn[l], float64(c.NormEps)))
				}
				r.rope(ks[i][hh*hd:(hh+1)*hd], i)
			}
		}
		for i := range xs {
			att := make([]float64, c.Heads*hd)
			for hh := range c.Heads {
				kh := hh / (c.Heads / c.KVHeads)
				lo := 0 // the first position in the window (the mask)
				if r.window > 0 {
					lo = max(0, i+1-r.window)
				}
				if r.oss && l%2 == 0 && r.drop != "window" { // gpt-oss: even layers slide
					lo = max(lo, i+1-r.layerWindow)
				}
				s := make([]float64, i+1-lo)
				mx := math.Inf(-1)
				for p := lo; p <= i; p++ {
					for d := range hd {
						s[p-lo] += qs[i][hh*hd+d] * ks[p][kh*hd+d]
					}
					s[p-lo] /= math.Sqrt(float64(hd))
					mx = math.Max(mx, s[p-lo])
				}
				var sum float64
				if r.oss && r.drop != "sinks" { // the sink: a score with no value
					mx = math.Max(mx, r.sinks[l][hh])
					sum = math.Exp(r.sinks[l][hh] - mx)
				}
				for p := range s {
					s[p] = math.Exp(s[p] - mx)
					sum += s[p]
				}
				for p := range s {
					for d := range hd {
						att[hh*hd+d] += s[p] / sum * vs[lo+p][kh*hd+d]
					}
				}
			}
			var ob []float64
			if r.oss && r.drop != "biases" {
				ob = r.ob[l]
			}
			o := matvec(r.o[l], att, ob)
			for j := range xs[i] {
				xs[i][j] += o[j]
			}
			h := rmsnorm(xs[i], r.ffnNorm[l], float64(c.NormEps))
			var d []float64
			switch {
			case r.oss:
				d = r.ossMoE(l, h)
			case c.Experts > 0:
				d = r.moe(l, h)
			default:
				d = swiglu(r.gate[l], r.up[l], r.down[l], h)
			}
			for j := range xs[i] {
				xs[i][j] += d[j]
			}
		}
	}
	out := make([][]float64, n)
	for i := range xs {
		out[i] = matvec(r.out, rmsnorm(xs[i], r.outNorm, float64(c.NormEps)), nil)
	}
	return out
}

// quantRef is the folder of llama.cpp's quantizations of one small llama model
// (../shared/models/quant-reference/README.md).
const quantRef = "../../../shared/models/quant-reference/"

// TestForwardMatchesFloat64Reference compares the engine's logits at every position of
// a prompt with the float64 reference. The bound is on the largest absolute logit
// difference relative to the largest absolute reference logit at that position:
//
//	F32 weights:  1e-4  (float32 accumulation only)
//	F16 weights:  2e-2  (activations rounded to F16 before the dot product, as ggml)
//	Q8_0 weights: 5e-2  (activations quantized to Q8_0 before the dot product, as ggml;
//	                     measured 2.5e-2 — the same weights dequantized to F32 and run
//	                     with F32 activations come within 6.3e-7)
//	IQ4_NL, IQ4_XS, MXFP4 (llama.cpp's tiny-llama files, where ../shared has them):
//	              5e-2  (activations quantized to Q8_0 / Q8_K; measured 1.2e-2, 1.9e-2,
//	                     1.2e-2)
//	Q5_K_M, Q3_K_M (llama.cpp's tiny-llama F32 file quantized here, as llama-quantize
//	does):        5e-2  (activations quantized to Q8_K; measured 1.6e-2, 1.8e-2)
//	Q2_K, Q4_1, Q5_0, Q5_1 (likewise): 5e-2 (activations quantized to Q8_K, Q8_1,
//	                     Q8_0, Q8_1)
//
// The KV cache is F32 here so the comparison measures the kernels, not cache rounding;
// the greedy test in package engine covers the default F16 cache.
func TestForwardMatchesFloat64Reference(t *testing.T) {
	cases := []struct {
		path  string
		tol   float64
		quant string // quantize path to this file type first (engine/synth)
	}{
		{"../builtin/stories260K.gguf", 1e-4, ""},
		{"../../testdata/models/TinyStories-656K.f16.gguf", 2e-2, ""},
		{"../../testdata/models/tinystories-656k-q8_0.gguf", 5e-2, ""},
		// llama.cpp's own IQ4_NL, IQ4_XS and MXFP4 files (../shared, skipped where absent):
		// the lookup-table kernels inside a whole forward pass.
		{quantRef + "tiny-llama-IQ4_NL.gguf", 5e-2, ""},
		{quantRef + "tiny-llama-IQ4_XS.gguf", 5e-2, ""},
		{quantRef + "tiny-llama-MXFP4-ffn.gguf", 5e-2, ""},
		// Q5_K, Q3_K and Q2_K (with Q4_K, Q6_K beside them), which llama.cpp's files here
		// lack.
		{quantRef + "tiny-llama-F32.gguf", 5e-2, "Q5_K_M"},
		{quantRef + "tiny-llama-F32.gguf", 5e-2, "Q3_K_M"},
		{quantRef + "tiny-llama-F32.gguf", 5e-2, "Q2_K"},
		// and the older Q4_1, Q5_0, Q5_1.
		{quantRef + "tiny-llama-F32.gguf", 5e-2, "Q4_1"},
		{quantRef + "tiny-llama-F32.gguf", 5e-2, "Q5_0"},
		{quantRef + "tiny-llama-F32.gguf", 5e-2, "Q5_1"},
	}
	// Token ids of "Once upon a time, there was a little girl" style text are model
	// specific; any in-vocabulary ids exercise the same arithmetic.
	tokens := []int32{1, 403, 407, 261, 378, 434, 300, 269, 9, 263, 402, 308, 343, 260, 370, 293, 275}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.path+" as "+c.quant, " as "), func(t *testing.T) {
			if _, err := os.Stat(c.path); os.IsNotExist(err) && strings.HasPrefix(c.path, quantRef) {
				t.Skipf("llama.cpp reference file absent (%s): not checked", c.path)
			}
			path := c.path
			if c.quant != "" {
				path = filepath.Join(t.TempDir(), c.quant+".gguf")
				if err := synth.QuantizeFile(context.Background(), c.path, path, c.quant, nil); err != nil {
					t.Fatal(err)
				}
			}
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := FromGGUF(f)
			if err != nil {
				t.Fatal(err)
			}
			be := cpu.New(2)
			defer be.Close()
			st := m.NewState(len(tokens))
			cache, err := m.NewCache(len(tokens), kernels.F32)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Forward(be, st, cache, tokens, 0, true)
			if err != nil {
				t.Fatal(err)
			}
			want := newRef(t, f, m.Config).forward(tokens)
			worst := 0.0
			for p := range tokens {
				var maxAbs, maxDiff float64
				for j, w := range want[p] {
					maxAbs = math.Max(maxAbs, math.Abs(w))
					maxDiff = math.Max(maxDiff, math.Abs(float64(got[p*m.Vocab+j])-w))
				}
				rel := maxDiff / maxAbs
				worst = math.Max(worst, rel)
				if rel > c.tol {
					t.Errorf("position %d: max |Δlogit| %.3g = %.3g of max |logit| %.3g, bound %.0e", p, maxDiff, rel, maxAbs, c.tol)
				}
			}
			t.Logf("worst relative logit difference over %d positions: %.2e (bound %.0e)", len(tokens), worst, c.tol)
		})
	}
}

// TestIncrementalMatchesBatch checks that decoding token by token through the KV cache
// gives the same logits as processing the prompt as one batch.
func TestIncrementalMatchesBatch(t *testing.T) {
	m := openStories(t)
	be := cpu.New(2)
	defer be.Close()
	tokens := []int32{1, 403, 407, 261, 378, 434, 300, 269}
	st := m.NewState(len(tokens))
	c1, _ := m.NewCache(len(tokens), kernels.F32)
	batch, err := m.Forward(be, st, c1, tokens, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	batch = append([]float32(nil), batch...)
	c2, _ := m.NewCache(len(tokens), kernels.F32)
	for p, tok := range tokens {
		one, err := m.Forward(be, st, c2, []int32{tok}, p, false)
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range one {
			if d := math.Abs(float64(v - batch[p*m.Vocab+j])); d > 1e-5 {
				t.Fatalf("position %d logit %d: incremental %g, batch %g", p, j, v, batch[p*m.Vocab+j])
			}
		}
	}
}

func TestLoadErrors(t *testing.T) {
	m := openStories(t)
	be := cpu.New(1)
	defer be.Close()
	st := m.NewState(4)
	cache, _ := m.NewCache(4, kernels.F16)
	if _, err := m.Forward(be, st, cache, []int32{1, 2, 3, 4, 5}, 0, false); err == nil {
		t.Error("batch larger than the state: no error")
	}
	if _, err := m.Forward(be, st, cache, []int32{1, 2}, 3, false); err == nil {
		t.Error("past the context: no error")
	}
	if _, err := m.Forward(be, st, cache, []int32{9999}, 0, false); err == nil {
		t.Error("token outside the vocabulary: no error")
	}
	if _, err := m.NewCache(4, kernels.Q4_0); err == nil {
		t.Error("Q4_0 cache: no error")
	}
}

// writeTiny writes a small random model of the given architecture (F32 weights) and
// returns it opened. qwen2 gets q/k/v biases; qwen3 per-head q/k norms (weights of
// varied sizes, so that a missed or misplaced norm shows) and a tiny norm epsilon;
// qwen3moe qwen3's attention and, for the FFN, 8 experts of 24 of which each token
// takes 2, with a router of large weights so that no two experts nearly tie.
func writeTiny(t testing.TB, arch string, seed uint64) *gguf.File {
	t.Helper()
	const embd, layers, heads, kvHeads, ff, vocab = 32, 2, 4, 2, 48, 40
	const experts, used, expertFF = 8, 2, 24
	hd := embd / heads
	rng := seed
	rnd := func(n int, scale float32) []byte {
		b := make([]byte, 4*n)
		for i := range n {
			rng = rng*6364136223846793005 + 1442695040888963407
			v := (float32(rng>>40)/float32(1<<24) - 0.5) * 2 * scale
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		return b
	}
	ones := func(n int) []byte {
		b := make([]byte, 4*n)
		for i := range n {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(1+float32(i%3)*0.1))
		}
		return b
	}
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf)
	w.AddKV("general.architecture", arch)
	w.AddKV(arch+".context_length", uint32(64))
	w.AddKV(arch+".embedding_length", uint32(embd))
	w.AddKV(arch+".block_count", uint32(layers))
	w.AddKV(arch+".feed_forward_length", uint32(ff))
	w.AddKV(arch+".attention.head_count", uint32(heads))
	w.AddKV(arch+".attention.head_count_kv", uint32(kvHeads))
	w.AddKV(arch+".attention.layer_norm_rms_epsilon", float32(1e-6))
	oss := arch == "gpt-oss"
	if oss { // a ramp over the pairs: corrections dims 2 and 6 of 8
		w.AddKV(arch+".rope.freq_base", float32(100))
		w.AddKV(arch+".rope.scaling.type", "yarn")
		w.AddKV(arch+".rope.scaling.factor", float32(32))
		w.AddKV(arch+".rope.scaling.original_context_length", uint32(4096))
		w.AddKV(arch+".attention.sliding_window", uint32(3))
	} else {
		w.AddKV(arch+".rope.freq_base", float32(1e6))
	}
	if arch == "qwen3moe" || oss {
		w.AddKV(arch+".expert_count", uint32(experts))
		w.AddKV(arch+".expert_used_count", uint32(used))
		w.AddKV(arch+".expert_feed_forward_length", uint32(expertFF))
	}
	type tensor struct {
		name  string
		shape []uint64
		data  []byte
	}
	ts := []tensor{{"token_embd.weight", []uint64{embd, vocab}, rnd(embd*vocab, 1)}}
	for l := range layers {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			tensor{p + "attn_norm.weight", []uint64{embd}, ones(embd)},
			tensor{p + "attn_q.weight", []uint64{embd, embd}, rnd(embd*embd, 0.3)},
			tensor{p + "attn_k.weight", []uint64{embd, uint64(kvHeads * hd)}, rnd(embd*kvHeads*hd, 0.3)},
			tensor{p + "attn_v.weight", []uint64{embd, uint64(kvHeads * hd)}, rnd(embd*kvHeads*hd, 0.3)},
			tensor{p + "attn_output.weight", []uint64{embd, embd}, rnd(embd*embd, 0.3)})
		if oss {
			// Expert weights large enough that the clamp at ±7 acts on some values.
			ts = append(ts,
				tensor{p + "attn_output.bias", []uint64{embd}, rnd(embd, 0.5)},
				tensor{p + "attn_sinks.weight", []uint64{heads}, rnd(heads, 3)},
				tensor{p + "post_attention_norm.weight", []uint64{embd}, ones(embd)},
				tensor{p + "ffn_gate_inp.weight", []uint64{embd, experts}, rnd(embd*experts, 1)},
				tensor{p + "ffn_gate_inp.bias", []uint64{experts}, rnd(experts, 1)},
				tensor{p + "ffn_gate_exps.weight", []uint64{embd, expertFF, experts}, rnd(embd*expertFF*experts, 2)},
				tensor{p + "ffn_up_exps.weight", []uint64{embd, expertFF, experts}, rnd(embd*expertFF*experts, 2)},
				tensor{p + "ffn_down_exps.weight", []uint64{expertFF, embd, experts}, rnd(embd*expertFF*experts, 0.1)},
				tensor{p + "ffn_gate_exps.bias", []uint64{expertFF, experts}, rnd(expertFF*experts, 1)},
				tensor{p + "ffn_up_exps.bias", []uint64{expertFF, experts}, rnd(expertFF*experts, 1)},
				tensor{p + "ffn_down_exps.bias", []uint64{embd, experts}, rnd(embd*experts, 0.5)},
				tensor{p + "attn_q.bias", []uint64{embd}, rnd(embd, 0.5)},
				tensor{p + "attn_k.bias", []uint64{uint64(kvHeads * hd)}, rnd(kvHeads*hd, 0.5)},
				tensor{p + "attn_v.bias", []uint64{uint64(kvHeads * hd)}, rnd(kvHeads*hd, 0.5)})
			continue
		}
		ts = append(ts, tensor{p + "ffn_norm.weight", []uint64{embd}, ones(embd)})
		if arch == "qwen3moe" {
			ts = append(ts,
				tensor{p + "ffn_gate_inp.weight", []uint64{embd, experts}, rnd(embd*experts, 1)},
				tensor{p + "ffn_gate_exps.weight", []uint64{embd, expertFF, experts}, rnd(embd*expertFF*experts, 0.3)},
				tensor{p + "ffn_up_exps.weight", []uint64{embd, expertFF, experts}, rnd(embd*expertFF*experts, 0.3)},
				tensor{p + "ffn_down_exps.weight", []uint64{expertFF, embd, experts}, rnd(embd*expertFF*experts, 0.3)})
		} else {
			ts = append(ts,
				tensor{p + "ffn_gate.weight", []uint64{embd, ff}, rnd(embd*ff, 0.3)},
				tensor{p + "ffn_up.weight", []uint64{embd, ff}, rnd(embd*ff, 0.3)},
				tensor{p + "ffn_down.weight", []uint64{ff, embd}, rnd(embd*ff, 0.3)})
		}
		if arch == "qwen3" || arch == "qwen3moe" {
			ts = append(ts,
				tensor{p + "attn_q_norm.weight", []uint64{uint64(hd)}, rnd(hd, 2)},
				tensor{p + "attn_k_norm.weight", []uint64{uint64(hd)}, rnd(hd, 2)})
		}
		if arch == "qwen2" {
			ts = append(ts,
				tensor{p + "attn_q.bias", []uint64{embd}, rnd(embd, 0.5)},
				tensor{p + "attn_k.bias", []uint64{uint64(kvHeads * hd)}, rnd(kvHeads*hd, 0.5)},
				tensor{p + "attn_v.bias", []uint64{uint64(kvHeads * hd)}, rnd(kvHeads*hd, 0.5)})
		}
	}
	ts = append(ts, tensor{"output_norm.weight", []uint64{embd}, ones(embd)})
	for _, x := range ts {
		w.AddTensor(x.name, kernels.F32, x.shape...)
	}
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		tw, err := w.BeginTensor(x.name)
		if err != nil {
			t.Fatal(err)
		}
		tw.Write(x.data)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSyntheticArchitecturesMatchReference covers what the real fixtures do not: qwen2
// (NeoX RoPE, q/k/v biases), qwen3 (NeoX RoPE, per-head q/k RMSNorm), qwen3moe (qwen3's
// attention, routed experts: top-2 of 8 with renormalised weights), tied output, a large
// RoPE base and full-width RoPE. F32 weights: bound 1e-4 relative to max(1, |logit|).
// For qwen3moe the same reference without the renormalisation must miss that bound by
// far, so the routing is checked, not only the attention.
func TestSyntheticArchitecturesMatchReference(t *testing.T) {
	for _, arch := range []string{"llama", "qwen2", "qwen3", "qwen3moe"} {
		t.Run(arch, func(t *testing.T) {
			f := writeTiny(t, arch, 7)
			m, err := FromGGUF(f)
			if err != nil {
				t.Fatal(err)
			}
			b := m.Blocks[0]
			qwen3 := arch == "qwen3" || arch == "qwen3moe"
			if m.Rope.NeoX != (arch != "llama") || (b.QBias != nil) != (arch == "qwen2") || !m.TiedOutput ||
				(b.QNorm != nil) != qwen3 || (b.KNorm != nil) != qwen3 || m.QKNorm != qwen3 ||
				(b.Router != nil) != (arch == "qwen3moe") || (b.Gate != nil) == (arch == "qwen3moe") {
				t.Fatalf("config: neox %v bias %v q/k norm %v %v tied %v", m.Rope.NeoX, b.QBias != nil, b.QNorm != nil, b.KNorm != nil, m.TiedOutput)
			}
			be := cpu.New(2)
			defer be.Close()
			tokens := []int32{3, 17, 39, 0, 22, 5, 5, 31}
			st := m.NewState(len(tokens))
			cache, _ := m.NewCache(len(tokens), kernels.F32)
			got, err := m.Forward(be, st, cache, tokens, 0, true)
			if err != nil {
				t.Fatal(err)
			}
			ref := newRef(t, f, m.Config)
			want := ref.forward(tokens)
			if worst := worstExcess(got, want, m.Vocab); worst > 1 {
				t.Fatalf("logits differ from the reference by %.3g × the bound 1e-4", worst)
			}
			if arch == "qwen3moe" {
				if len(ref.chosen) < m.Experts-1 {
					t.Fatalf("the tokens took only experts %v of %d: routing barely exercised", ref.chosen, m.Experts)
				}
				ref.noRenorm = true
				if worst := worstExcess(got, ref.forward(tokens), m.Vocab); worst < 10 {
					t.Fatalf("the reference without renormalised expert weights comes within %.3g × the bound: the test cannot see the routing", worst)
				} else {
					t.Logf("without renormalisation the reference is %.3g × the bound away", worst)
				}
			}
		})
	}
}

// worstExcess returns the largest |got − want| over every logit, in units of the bound
// 1e-4·max(1, |want|).
func worstExcess(got []float32, want [][]float64, vocab int) float64 {
	worst := 0.0
	for p := range want {
		for j, w := range want[p] {
			worst = math.Max(worst, math.Abs(float64(got[p*vocab+j])-w)/(1e-4*math.Max(1, math.Abs(w))))
		}
	}
	return worst
}

func TestConfigErrors(t *testing.T) {
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf)
	w.AddKV("general.architecture", "llama")
	w.AddKV("llama.embedding_length", uint32(32))
	w.Close()
	f, _ := gguf.Parse(buf.Bytes())
	if _, err := FromGGUF(f); err == nil || !strings.Contains(err.Error(), "block_count") {
		t.Errorf("missing keys: %v", err)
	}
	buf.Reset()
	w = gguf.NewWriter(&buf)
	w.AddKV("general.architecture", "mamba")
	w.Close()
	f, _ = gguf.Parse(buf.Bytes())
	if _, err := FromGGUF(f); err == nil || !strings.Contains(err.Error(), `"mamba" is not supported`) {
		t.Errorf("unknown architecture: %v", err)
	}
}

// openStories opens the built-in stories260K and builds its model; the file stays
// mapped until the test ends.
func openStories(tb testing.TB) *Model {
	tb.Helper()
	f, err := gguf.Open("../builtin/stories260K.gguf")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	m, err := FromGGUF(f)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestWindowMatchesFloat64Reference runs a prompt through a paged cache whose block
// table is a ring holding only the last Window positions (a prompt chunk, then one
// token at a time, as the scheduler does under a rolling window) and compares every
// position's logits with the float64 reference under the same sliding-window mask.
// The blocks a position no longer needs are overwritten by later ones, so reading
// outside the window would show. The full causal reference must differ once the
// context passes the window, so the test can fail.
func TestWindowMatchesFloat64Reference(t *testing.T) {
	f, err := gguf.Open("../builtin/stories260K.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	be := cpu.New(2)
	defer be.Close()
	tokens := []int32{1, 403, 407, 261, 378, 434, 300, 269, 9, 263, 402, 308, 343, 260, 370, 293, 275, 261, 378, 434}
	full := newRef(t, f, m.Config).forward(tokens)
	for _, c := range []struct{ window, chunk, bs int }{{5, 6, 4}, {8, 3, 4}, {16, 16, 16}, {3, 1, 2}} {
		t.Run(fmt.Sprintf("window%d", c.window), func(t *testing.T) {
			ring := (c.window+c.chunk-1+c.bs-1)/c.bs + 1
			cache, err := m.NewPagedCache(ring, c.bs, kernels.F32)
			if err != nil {
				t.Fatal(err)
			}
			blocks := make([]int32, (len(tokens)+c.bs-1)/c.bs)
			for i := range blocks {
				blocks[i] = int32(i % ring)
			}
			st := m.NewState(c.chunk)
			st.Window = c.window
			r := newRef(t, f, m.Config)
			r.window = c.window
			want := r.forward(tokens)
			differs := false
			for pos := 0; pos < len(tokens); {
				n := 1
				if pos == 0 {
					n = c.chunk
				}
				seq := []Seq{{Cache: cache, Start: pos, Tokens: tokens[pos : pos+n], Blocks: blocks, Logits: true}}
				got, err := m.ForwardBatch(be, st, seq)
				if err != nil {
					t.Fatal(err)
				}
				pos += n
				p := pos - 1
				var maxAbs, maxDiff, fullDiff float64
				for j, w := range want[p] {
					maxAbs = math.Max(maxAbs, math.Abs(w))
					maxDiff = math.Max(maxDiff, math.Abs(float64(got[j])-w))
					fullDiff = math.Max(fullDiff, math.Abs(full[p][j]-w))
				}
				if maxDiff > 1e-4*maxAbs {
					t.Errorf("position %d: max |Δlogit| %.3g of max |logit| %.3g", p, maxDiff, maxAbs)
				}
				differs = differs || fullDiff > 1e-3*maxAbs
			}
			if !differs {
				t.Errorf("the window of %d changed no logit of %d positions", c.window, len(tokens))
			}
		})
	}
}

// TestSlidingWindowFromMetadata: a model whose metadata has ARCH.attention.sliding_window
// reads it (Config.SlidingWindow), its states attend under it by default, and its
// logits equal the float64 reference with that window as the mask.
func TestSlidingWindowFromMetadata(t *testing.T) {
	src := writeTiny(t, "llama", 11)
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf)
	for _, kv := range src.KV {
		w.AddKV(kv.Key, kv.Value)
	}
	w.AddKV("llama.attention.sliding_window", uint32(3))
	for _, ti := range src.Tensors {
		w.AddTensor(ti.Name, ti.Type, ti.Shape...)
	}
	if err := w.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	for i := range src.Tensors {
		tw, err := w.BeginTensor(src.Tensors[i].Name)
		if err != nil {
			t.Fatal(err)
		}
		tw.Write(src.TensorData(&src.Tensors[i]))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	st := m.NewState(8)
	if m.SlidingWindow != 3 || st.Window != 3 {
		t.Fatalf("sliding window %d, state window %d; want 3", m.SlidingWindow, st.Window)
	}
	be := cpu.New(2)
	defer be.Close()
	tokens := []int32{3, 17, 39, 0, 22, 5, 5, 31}
	cache, _ := m.NewCache(len(tokens), kernels.F32)
	got, err := m.Forward(be, st, cache, tokens, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	r := newRef(t, f, m.Config)
	r.window = 3
	want := r.forward(tokens)
	for p := range tokens {
		for j, v := range want[p] {
			if d := math.Abs(float64(got[p*m.Vocab+j]) - v); d > 1e-4*math.Max(1, math.Abs(v)) {
				t.Fatalf("position %d logit %d: %g, windowed reference %g", p, j, got[p*m.Vocab+j], v)
			}
		}
	}
}

// TestGptOSSMatchesReference compares a small F32 gpt-oss (writeTiny: 2 blocks, the
// first under a window of 3, YaRN ×32 over an original context of 4096 with the ramp
// inside the 4 rotated pairs, sinks, every bias, top-2 of 8 experts with weights large
// enough that the SwiGLU clamp acts) with the float64 reference on 12 positions, on the
// plain, flash and partitioned attention paths: bound 1e-4 × max(1, |logit|). Then the
// reference with each feature left out (sinks, the window, YaRN, the clamp, the biases,
// top-k-then-softmax routing) must be at least 10× the bound away, so each feature is
// checked, not only the whole.
func TestGptOSSMatchesReference(t *testing.T) {
	f := writeTiny(t, "gpt-oss", 7)
	m, err := FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Blocks[0]
	if m.LayerWindow != 3 || m.SlidingWindow != 0 || !m.SlidingLayer(0) || m.SlidingLayer(1) || !m.Rope.NeoX ||
		b.Sinks == nil || b.OBias == nil || b.QBias == nil || b.RouterBias == nil || b.DownExpsBias == nil || m.AttnScale == 0 {
		t.Fatalf("config: layer window %d, sliding window %d, neox %v, sinks %v, o bias %v, attention scale %g",
			m.LayerWindow, m.SlidingWindow, m.Rope.NeoX, b.Sinks != nil, b.OBias != nil, m.AttnScale)
	}
	if st := m.NewState(1); st.Window != 0 {
		t.Fatalf("state window %d: the full layers need every position", st.Window)
	}
	be := cpu.New(2)
	defer be.Close()
	tokens := []int32{3, 17, 39, 0, 22, 5, 5, 31, 12, 8, 27, 1}
	ref := newRef(t, f, m.Config)
	want := ref.forward(tokens)
	if ref.clamped == 0 || len(ref.chosen) < m.Experts-1 {
		t.Fatalf("the clamp changed %d values, the tokens took experts %v of %d: features barely exercised", ref.clamped, ref.chosen, m.Experts)
	}
	var got []float32
	for _, path := range []struct {
		name       string
		flash      bool
		part, pMin int
	}{{"plain", false, 0, 0}, {"flash", true, 0, 0}, {"partitioned", false, 2, 0}} {
		st := m.NewState(len(tokens))
		st.Flash, st.Partition, st.PartitionMin = path.flash, path.part, path.pMin
		cache, _ := m.NewCache(len(tokens), kernels.F32)
		out, err := m.Forward(be, st, cache, tokens, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		worst := worstExcess(out, want, m.Vocab)
		if worst > 1 {
			t.Errorf("%s: logits differ from the reference by %.3g × the bound 1e-4", path.name, worst)
		}
		t.Logf("%s: worst logit difference %.3g × the bound", path.name, worst)
		got = append(got[:0], out...)
	}
	for _, drop := range []string{"sinks", "window", "yarn", "clamp", "biases", "routing"} {
		r := newRef(t, f, m.Config)
		r.drop = drop
		if worst := worstExcess(got, r.forward(tokens), m.Vocab); worst < 10 {
			t.Errorf("the reference without %s comes within %.3g × the bound: the test cannot see it", drop, worst)
		} else {
			t.Logf("without %s the reference is %.3g × the bound away", drop, worst)
		}
	}
}
