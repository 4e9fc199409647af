package model

import (
	"fmt"
	"math"

	"llmbench/engine/gguf"
	"llmbench/kernels"
)

func init() {
	// llama covers Llama 1/2/3, Mistral and TinyLlama: adjacent-pair RoPE, no biases.
	Register("llama", func(f *gguf.File) (*Model, error) { return buildDecoder(f, false, false) })
	// qwen2: NeoX-style RoPE and biases on the q, k and v projections.
	Register("qwen2", func(f *gguf.File) (*Model, error) { return buildDecoder(f, true, true) })
}

// Layer holds one transformer block's weights.
type Layer struct {
	AttnNorm, FFNNorm []float32
	Q, K, V, O        *kernels.Matrix
	QBias, KBias      []float32
	VBias             []float32
	Gate, Up, Down    *kernels.Matrix
}

// Model is a loaded decoder-only transformer: pre-norm blocks of grouped-query
// attention with RoPE and a SwiGLU feed-forward network.
type Model struct {
	Config
	Embed      *kernels.Matrix // token_embd, Vocab rows of Embd
	Blocks     []Layer
	OutputNorm []float32
	Output     *kernels.Matrix // output.weight, or Embed when tied
}

func buildDecoder(f *gguf.File, neox, bias bool) (*Model, error) {
	c, err := readConfig(f)
	if err != nil {
		return nil, err
	}
	c.Rope.NeoX = neox
	c.QKVBias = bias
	te, ok := f.Tensor("token_embd.weight")
	if !ok || len(te.Shape) != 2 {
		return nil, fmt.Errorf("model: tensor \"token_embd.weight\" is missing or not 2-D")
	}
	c.Vocab = int(te.Shape[1])
	l := &loader{f: f}
	m := &Model{Config: c}
	m.Embed = l.matrix("token_embd.weight", c.Embd, c.Vocab)
	qDim, kvDim := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	m.Blocks = make([]Layer, c.Layers)
	for i := range m.Blocks {
		p := fmt.Sprintf("blk.%d.", i)
		m.Blocks[i] = Layer{
			AttnNorm: l.vector(p+"attn_norm.weight", c.Embd, false),
			Q:        l.matrix(p+"attn_q.weight", c.Embd, qDim),
			K:        l.matrix(p+"attn_k.weight", c.Embd, kvDim),
			V:        l.matrix(p+"attn_v.weight", c.Embd, kvDim),
			O:        l.matrix(p+"attn_output.weight", qDim, c.Embd),
			QBias:    l.vector(p+"attn_q.bias", qDim, !bias),
			KBias:    l.vector(p+"attn_k.bias", kvDim, !bias),
			VBias:    l.vector(p+"attn_v.bias", kvDim, !bias),
			FFNNorm:  l.vector(p+"ffn_norm.weight", c.Embd, false),
			Gate:     l.matrix(p+"ffn_gate.weight", c.Embd, c.FF),
			Up:       l.matrix(p+"ffn_up.weight", c.Embd, c.FF),
			Down:     l.matrix(p+"ffn_down.weight", c.FF, c.Embd),
		}
	}
	m.OutputNorm = l.vector("output_norm.weight", c.Embd, false)
	m.Output = l.optionalMatrix("output.weight", c.Embd, c.Vocab)
	if m.Output == nil {
		m.Output, m.TiedOutput = m.Embed, true
	}
	m.Rope.Factors = l.vector("rope_freqs.weight", c.Rope.Dims/2, true)
	if l.err != nil {
		return nil, l.err
	}
	return m, nil
}

// Cache is one sequence's key/value cache: per layer, Context rows of KVHeads*HeadDim.
type Cache struct {
	Type    kernels.DType // F16 (llama.cpp's default), F32 or Q8_0
	Context int
	K, V    []kernels.KVView
}

// NewCache allocates a cache for ctx positions of element type typ (F16, F32 or Q8_0;
// Q8_0 needs a head size that is a multiple of 32).
func (m *Model) NewCache(ctx int, typ kernels.DType) (*Cache, error) {
	if typ != kernels.F16 && typ != kernels.F32 && typ != kernels.Q8_0 {
		return nil, fmt.Errorf("model: KV cache type %s is not supported (f16, f32, q8_0)", typ)
	}
	if typ == kernels.Q8_0 && m.HeadDim%32 != 0 {
		return nil, fmt.Errorf("model: KV cache type q8_0 needs a head size that is a multiple of 32, not %d", m.HeadDim)
	}
	if ctx <= 0 {
		return nil, fmt.Errorf("model: context size %d", ctx)
	}
	c := &Cache{Type: typ, Context: ctx, K: make([]kernels.KVView, len(m.Blocks)), V: make([]kernels.KVView, len(m.Blocks))}
	n := ctx * m.KVHeads * m.HeadDim
	for i := range c.K {
		c.K[i], c.V[i] = newKV(typ, n), newKV(typ, n)
	}
	return c, nil
}

// Bytes returns the memory the cache holds.
func (c *Cache) Bytes() int64 {
	var n int64
	for i := range c.K {
		for _, kv := range []*kernels.KVView{&c.K[i], &c.V[i]} {
			n += int64(len(kv.F32)*4 + len(kv.F16)*2 + len(kv.Q8))
		}
	}
	return n
}

func newKV(typ kernels.DType, n int) kernels.KVView {
	if typ == kernels.Q8_0 {
		return kernels.KVView{Type: typ, Q8: make([]byte, n/32*34)}
	}
	if typ == kernels.F16 {
		return kernels.KVView{Type: typ, F16: make([]uint16, n)}
	}
	return kernels.KVView{Type: typ, F32: make([]float32, n)}
}

// storeKV writes src (whole rows) at element offset off (a row boundary).
func storeKV(kv *kernels.KVView, off int, src []float32) {
	if kv.Type == kernels.Q8_0 {
		kernels.TraitsOf(kernels.Q8_0).FromFloat(src, kv.Q8[off/32*34:(off+len(src))/32*34])
		return
	}
	if kv.Type == kernels.F16 {
		dst := kv.F16[off : off+len(src)]
		for i, v := range src {
			dst[i] = kernels.F32ToF16(v)
		}
		return
	}
	copy(kv.F32[off:], src)
}

// State holds the activations of one forward pass for up to Batch tokens, reused
// between calls so a steady decode allocates nothing.
type State struct {
	Batch                 int
	Flash                 bool // use the fused attention path (llama-bench's -fa 1)
	x, h, q, k, v, att, o []float32
	gate, up              []float32
	logits                []float32
	attn                  kernels.Attention // reused so that a step allocates nothing
}

// NewState allocates activations for batches of up to batch tokens.
func (m *Model) NewState(batch int) *State {
	qDim, kvDim := m.Heads*m.HeadDim, m.KVHeads*m.HeadDim
	return &State{
		Batch: batch,
		x:     make([]float32, batch*m.Embd), h: make([]float32, batch*m.Embd),
		q: make([]float32, batch*qDim), k: make([]float32, batch*kvDim), v: make([]float32, batch*kvDim),
		att: make([]float32, batch*qDim), o: make([]float32, batch*m.Embd),
		gate: make([]float32, batch*m.FF), up: make([]float32, batch*m.FF),
		logits: make([]float32, batch*m.Vocab),
	}
}

// Forward runs tokens at positions start… through the model, appending their keys and
// values to cache. It returns the logits of the last token, or of every token when
// all is set (rows of Vocab). The slice is reused by the next call.
func (m *Model) Forward(be kernels.Backend, st *State, cache *Cache, tokens []int32, start int, all bool) ([]float32, error) {
	n := len(tokens)
	if n == 0 || n > st.Batch {
		return nil, fmt.Errorf("model: batch of %d tokens (state holds %d)", n, st.Batch)
	}
	if start+n > cache.Context {
		return nil, fmt.Errorf("model: position %d exceeds the context of %d", start+n, cache.Context)
	}
	e := m.Embd
	qDim, kvDim := m.Heads*m.HeadDim, m.KVHeads*m.HeadDim
	embTr := kernels.TraitsOf(m.Embed.Type)
	rowBytes := m.Embed.Cols / embTr.BlockSize * embTr.BlockBytes
	for i, t := range tokens {
		if t < 0 || int(t) >= m.Vocab {
			return nil, fmt.Errorf("model: token id %d outside the vocabulary of %d", t, m.Vocab)
		}
		embTr.ToFloat(m.Embed.Data[int(t)*rowBytes:(int(t)+1)*rowBytes], st.x[i*e:(i+1)*e])
	}
	x, h := st.x[:n*e], st.h[:n*e]
	q, k, v := st.q[:n*qDim], st.k[:n*kvDim], st.v[:n*kvDim]
	att, o := st.att[:n*qDim], st.o[:n*e]
	gate, up := st.gate[:n*m.FF], st.up[:n*m.FF]
	attn := &st.attn
	*attn = kernels.Attention{N: n, Start: start, Heads: m.Heads, KVHeads: m.KVHeads, HeadDim: m.HeadDim,
		Scale: float32(1 / math.Sqrt(float64(m.HeadDim))), Flash: st.Flash}
	for li := range m.Blocks {
		L := &m.Blocks[li]
		be.RMSNorm(h, x, L.AttnNorm, m.NormEps)
		be.MatMul(q, L.Q, h, n)
		be.MatMul(k, L.K, h, n)
		be.MatMul(v, L.V, h, n)
		if L.QBias != nil {
			addBias(q, L.QBias)
			addBias(k, L.KBias)
			addBias(v, L.VBias)
		}
		be.ApplyRoPE(q, n, start, m.Heads, m.HeadDim, &m.Rope)
		be.ApplyRoPE(k, n, start, m.KVHeads, m.HeadDim, &m.Rope)
		storeKV(&cache.K[li], start*kvDim, k)
		storeKV(&cache.V[li], start*kvDim, v)
		attn.K, attn.V = cache.K[li], cache.V[li]
		be.Attend(att, q, attn)
		be.MatMul(o, L.O, att, n)
		addInto(x, o)
		be.RMSNorm(h, x, L.FFNNorm, m.NormEps)
		be.MatMul(gate, L.Gate, h, n)
		be.MatMul(up, L.Up, h, n)
		be.SwiGLU(gate, gate, up)
		be.MatMul(o, L.Down, gate, n)
		addInto(x, o)
	}
	rows := x
	if !all {
		rows = x[(n-1)*e:]
	}
	nOut := len(rows) / e
	be.RMSNorm(h[:len(rows)], rows, m.OutputNorm, m.NormEps)
	logits := st.logits[:nOut*m.Vocab]
	be.MatMul(logits, m.Output, h[:len(rows)], nOut)
	return logits, nil
}

func addBias(x, b []float32) {
	for i := 0; i < len(x); i += len(b) {
		row := x[i : i+len(b)]
		for j, v := range b {
			row[j] += v
		}
	}
}

func addInto(x, y []float32) {
	for i, v := range y {
		x[i] += v
	}
}
