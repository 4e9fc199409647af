package model

import (
	"math"

	"llmbench/kernels"
)

// moeState holds a step's routing and the experts' working rows, sized for a State's
// batch so that a steady step allocates nothing.
type moeState struct {
	logits []float32 // router logits: Experts per token
	probs  []float64 // one token's softmax over the experts
	sel    []int32   // chosen experts: ExpertsUsed per token, most likely first
	weight []float32 // their renormalised weights, in the same slots
	start  []int32   // Experts+1 offsets into rows: expert e's rows are rows[start[e]:start[e+1]]
	next   []int32   // per expert, the next free place while rows is filled
	rows   []int32   // token·ExpertsUsed+slot, grouped by expert, in token order within each
	in     []float32 // the rows of h routed to one expert, gathered
	out    []float32 // one expert's outputs for its rows
	slots  []float32 // every (token, slot)'s expert output: Embd each, token·ExpertsUsed+slot
}

func (m *Model) newMoEState(batch int) moeState {
	if m.Experts == 0 {
		return moeState{}
	}
	k := m.ExpertsUsed
	return moeState{
		logits: make([]float32, batch*m.Experts), probs: make([]float64, m.Experts),
		sel: make([]int32, batch*k), weight: make([]float32, batch*k),
		start: make([]int32, m.Experts+1), next: make([]int32, m.Experts), rows: make([]int32, batch*k),
		in: make([]float32, batch*m.Embd), out: make([]float32, batch*m.Embd),
		slots: make([]float32, batch*k*m.Embd),
	}
}

// gpt-oss's clamped SwiGLU constants (llama.cpp's swiglu_oai: alpha 1.702, limit 7).
const (
	oaiAlpha = 1.702
	oaiLimit = 7.0
)

// swigluOAI writes gpt-oss's activation into gate: with g = min(gate, limit) and
// u = up clamped to ±limit, g·σ(alpha·g)·(u + 1).
func swigluOAI(gate, up []float32) {
	for i, g := range gate {
		g = min(g, oaiLimit)
		u := max(-oaiLimit, min(up[i], oaiLimit))
		gate[i] = g / (1 + float32(math.Exp(float64(-oaiAlpha*g)))) * (u + 1)
	}
}

// route picks a token's experts from its router logits: the softmax over all experts,
// the k most likely (the lower index first on a tie) into sel, most likely first, and
// their probabilities renormalised to sum to one into weight. probs is scratch of one
// value per expert. That is also gpt-oss's routing (the softmax over the k largest
// logits): the same experts and, up to rounding, the same weights.
func route(logits []float32, probs []float64, sel []int32, weight []float32) {
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = math.Max(mx, float64(v))
	}
	var sum float64
	for i, v := range logits {
		probs[i] = math.Exp(float64(v) - mx)
		sum += probs[i]
	}
	var chosen float64
	for s := range sel {
		best := -1
		for i, p := range probs {
			if p != -1 && (best < 0 || p > probs[best]) { // -1: taken (a NaN is never chosen over a number)
				best = i
			}
		}
		sel[s] = int32(best)
		weight[s] = float32(probs[best] / sum) // the softmax probability, for now
		chosen += probs[best] / sum
		probs[best] = -1 // taken
	}
	for s := range weight {
		weight[s] = float32(float64(weight[s]) / chosen)
	}
}

// moeFFN adds the mixture-of-experts feed-forward output of the n rows of h (the
// normalised residual) to x. Each token is routed on its own (route); the tokens are
// then grouped by expert, so that each expert that any token chose is multiplied once
// per step with all its rows (its weights read once, however many tokens chose it);
// each token's outputs land in its own slots, and its weighted sum is taken over the
// slots in routing order. A token's result therefore depends on its own row alone,
// whatever else the batch holds, as long as the backend's MatMul gives each row the
// same bits whatever the number of rows (kernels/cpu does).
func (m *Model) moeFFN(be kernels.Backend, st *State, L *Layer, x, h []float32, n int) {
	ms := &st.moe
	ne, k, e, ff := m.Experts, m.ExpertsUsed, m.Embd, m.ExpertFF
	logits := ms.logits[:n*ne]
	be.MatMul(logits, L.Router, h, n)
	if L.RouterBias != nil {
		addBias(logits, L.RouterBias)
	}
	sel, weight := ms.sel[:n*k], ms.weight[:n*k]
	for t := range n {
		route(logits[t*ne:(t+1)*ne], ms.probs, sel[t*k:(t+1)*k], weight[t*k:(t+1)*k])
	}
	// Group the (token, slot) pairs by expert: a counting sort that keeps token order.
	clear(ms.start)
	for _, ex := range sel {
		ms.start[ex+1]++
	}
	for i := range ne {
		ms.start[i+1] += ms.start[i]
	}
	copy(ms.next, ms.start[:ne])
	rows := ms.rows[:n*k]
	for r, ex := range sel {
		rows[ms.next[ex]] = int32(r)
		ms.next[ex]++
	}
	for ex := range ne {
		rs := rows[ms.start[ex]:ms.start[ex+1]]
		c := len(rs)
		if c == 0 {
			continue
		}
		in, out := ms.in[:c*e], ms.out[:c*e]
		for i, r := range rs {
			t := int(r) / k
			copy(in[i*e:(i+1)*e], h[t*e:(t+1)*e])
		}
		gate, up := st.gate[:c*ff], st.up[:c*ff]
		st.matMulShared(be, in, c, [3][]float32{gate, up}, [3]*kernels.Matrix{L.GateExps[ex], L.UpExps[ex]})
		if L.GateExpsBias != nil { // gpt-oss: biases and the clamped SwiGLU
			addBias(gate, L.GateExpsBias[ex])
			addBias(up, L.UpExpsBias[ex])
			swigluOAI(gate, up)
		} else {
			be.SwiGLU(gate, gate, up)
		}
		be.MatMul(out, L.DownExps[ex], gate, c)
		if L.DownExpsBias != nil {
			addBias(out, L.DownExpsBias[ex])
		}
		for i, r := range rs {
			copy(ms.slots[int(r)*e:(int(r)+1)*e], out[i*e:(i+1)*e])
		}
	}
	// Each token's weighted sum, slot by slot in routing order, then the residual.
	for t := range n {
		acc := ms.slots[t*k*e : (t*k+1)*e]
		w0 := weight[t*k]
		for j := range acc {
			acc[j] *= w0
		}
		for s := 1; s < k; s++ {
			w := weight[t*k+s]
			y := ms.slots[(t*k+s)*e : (t*k+s+1)*e]
			for j, v := range y {
				acc[j] += w * v
			}
		}
		addInto(x[t*e:(t+1)*e], acc)
	}
}
