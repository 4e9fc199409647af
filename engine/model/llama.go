package model

import (
	"fmt"
	"math"
	"slices"

	"llmbench/engine/gguf"
	"llmbench/kernels"
)

func init() {
	// llama covers Llama 1/2/3, Mistral and TinyLlama: adjacent-pair RoPE, no biases.
	Register("llama", func(f *gguf.File) (*Model, error) { return buildDecoder(f, false, false) })
	// qwen2: NeoX-style RoPE and biases on the q, k and v projections.
	Register("qwen2", func(f *gguf.File) (*Model, error) { return buildDecoder(f, true, true) })
	// qwen3: NeoX-style RoPE, no biases, and an RMSNorm of every query and key head
	// (attn_q_norm, attn_k_norm: HeadDim weights each) before RoPE, as llama.cpp's qwen3.
	Register("qwen3", func(f *gguf.File) (*Model, error) { return buildDecoder(f, true, false) })
	// qwen3moe: qwen3's attention and, in place of the dense FFN, routed experts
	// (ffn_gate_inp, ffn_{gate,up,down}_exps): softmax over the router's logits, the
	// expert_used_count most likely experts, their weights renormalised to sum to one
	// (Qwen3-MoE's norm_topk_prob), a SwiGLU per expert, the weighted sum.
	Register("qwen3moe", func(f *gguf.File) (*Model, error) { return buildDecoder(f, true, false) })
	// gpt-oss (llama.cpp's LLM_ARCH_OPENAI_MOE, llm_build_openai_moe_iswa): NeoX RoPE
	// with YaRN scaling, q/k/v/o biases, a learned sink logit per head in every
	// softmax (attn_sinks), sliding-window attention (attention.sliding_window) on even
	// blocks and full attention on odd ones, post_attention_norm before the experts, a
	// router with a bias whose top expert_used_count logits are softmaxed into the
	// weights, and experts with biases and the clamped SwiGLU (swigluOAI).
	Register("gpt-oss", func(f *gguf.File) (*Model, error) { return buildDecoder(f, true, true) })
}

// Layer holds one transformer block's weights.
type Layer struct {
	AttnNorm, FFNNorm []float32
	Q, K, V, O        *kernels.Matrix
	QBias, KBias      []float32
	VBias             []float32
	QNorm, KNorm      []float32       // per-head RMSNorm weights of queries and keys (qwen3), or nil
	Gate, Up, Down    *kernels.Matrix // the dense FFN, or nil when the block routes to experts
	// Router (ffn_gate_inp: Experts rows of Embd) and the experts' projections (one
	// view per expert into the 3-D ffn_*_exps tensors) of a mixture-of-experts block;
	// nil in a dense one.
	Router                     *kernels.Matrix
	GateExps, UpExps, DownExps []*kernels.Matrix
	// gpt-oss: the attention output's bias, one sink logit per query head, the
	// router's bias and each expert's projection biases (one slice per expert); nil
	// elsewhere.
	OBias, Sinks, RouterBias               []float32
	GateExpsBias, UpExpsBias, DownExpsBias [][]float32
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
	qkNorm := c.Arch == "qwen3" || c.Arch == "qwen3moe"
	c.QKNorm = qkNorm
	oss := c.Arch == "gpt-oss"
	moe := c.Arch == "qwen3moe" || oss
	switch {
	case moe && c.Experts == 0:
		return nil, fmt.Errorf("model: metadata key %s.expert_count is missing", c.Arch)
	case !moe && c.Experts > 0:
		return nil, fmt.Errorf("model: %s with %d experts is not supported (mixture of experts: qwen3moe, gpt-oss)", c.Arch, c.Experts)
	}
	ffnNorm := "ffn_norm.weight"
	if oss { // alternating windows, not a rolling cache for every layer
		c.LayerWindow, c.SlidingWindow = c.SlidingWindow, 0
		ffnNorm = "post_attention_norm.weight"
	}
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
			QNorm:    l.vector(p+"attn_q_norm.weight", c.HeadDim, !qkNorm),
			KNorm:    l.vector(p+"attn_k_norm.weight", c.HeadDim, !qkNorm),
			FFNNorm:  l.vector(p+ffnNorm, c.Embd, false),
		}
		b := &m.Blocks[i]
		if oss {
			b.OBias = l.vector(p+"attn_output.bias", c.Embd, false)
			b.Sinks = l.vector(p+"attn_sinks.weight", c.Heads, false)
			b.RouterBias = l.vector(p+"ffn_gate_inp.bias", c.Experts, false)
			b.GateExpsBias = l.expertBias(p+"ffn_gate_exps.bias", c.ExpertFF, c.Experts)
			b.UpExpsBias = l.expertBias(p+"ffn_up_exps.bias", c.ExpertFF, c.Experts)
			b.DownExpsBias = l.expertBias(p+"ffn_down_exps.bias", c.Embd, c.Experts)
		}
		if moe {
			b.Router = l.matrix(p+"ffn_gate_inp.weight", c.Embd, c.Experts)
			b.GateExps = l.experts(p+"ffn_gate_exps.weight", c.Embd, c.ExpertFF, c.Experts)
			b.UpExps = l.experts(p+"ffn_up_exps.weight", c.Embd, c.ExpertFF, c.Experts)
			b.DownExps = l.experts(p+"ffn_down_exps.weight", c.ExpertFF, c.Embd, c.Experts)
		} else {
			b.Gate = l.matrix(p+"ffn_gate.weight", c.Embd, c.FF)
			b.Up = l.matrix(p+"ffn_up.weight", c.Embd, c.FF)
			b.Down = l.matrix(p+"ffn_down.weight", c.FF, c.Embd)
		}
	}
	m.OutputNorm = l.vector("output_norm.weight", c.Embd, false)
	m.Output = l.optionalMatrix("output.weight", c.Embd, c.Vocab)
	if m.Output == nil {
		m.Output, m.TiedOutput = m.Embed, true
	}
	if ff := l.vector("rope_freqs.weight", c.Rope.Dims/2, true); ff != nil {
		if m.Rope.Factors != nil { // YaRN's divisors on top of the file's
			ff = slices.Clone(ff)
			for i, d := range m.Rope.Factors {
				ff[i] *= d
			}
		}
		m.Rope.Factors = ff
	}
	if l.err != nil {
		return nil, l.err
	}
	return m, nil
}

// Matrices returns every weight matrix the forward pass multiplies, each once: the
// blocks' projections (every expert's, and the router, in a mixture-of-experts block)
// and the output (the embedding when tied; an untied embedding is only read a row at a
// time).
func (m *Model) Matrices() []*kernels.Matrix {
	ws := make([]*kernels.Matrix, 0, (7+3*m.Experts)*len(m.Blocks)+1)
	for i := range m.Blocks {
		b := &m.Blocks[i]
		ws = append(ws, b.Q, b.K, b.V, b.O)
		if b.Router == nil {
			ws = append(ws, b.Gate, b.Up, b.Down)
			continue
		}
		ws = append(ws, b.Router)
		for e := range b.GateExps {
			ws = append(ws, b.GateExps[e], b.UpExps[e], b.DownExps[e])
		}
	}
	return append(ws, m.Output)
}

// Cache is a pool of KV memory: per layer, Blocks×BlockSize rows of KVHeads*HeadDim
// values in the cache type. A sequence reaches its positions through a block table
// (Seq.Blocks); without one, position p is row p, as for a single sequence's
// contiguous cache (NewCache).
type Cache struct {
	Type      kernels.DType // F16 (llama.cpp's default), F32 or Q8_0
	BlockSize int           // positions per block
	Blocks    int           // blocks in the pool
	Context   int           // positions the pool holds: Blocks×BlockSize
	K, V      []kernels.KVView
}

// NewCache allocates a contiguous cache for ctx positions of one sequence, of element
// type typ (F16, F32 or Q8_0; Q8_0 needs a head size that is a multiple of 32).
func (m *Model) NewCache(ctx int, typ kernels.DType) (*Cache, error) {
	return m.NewPagedCache(1, ctx, typ)
}

// NewPagedCache allocates a pool of blocks KV blocks of blockSize positions each, of
// element type typ (F16, F32 or Q8_0).
func (m *Model) NewPagedCache(blocks, blockSize int, typ kernels.DType) (*Cache, error) {
	if err := m.CheckKVType(typ); err != nil {
		return nil, err
	}
	if blocks <= 0 || blockSize <= 0 {
		return nil, fmt.Errorf("model: KV cache of %d blocks of %d positions", blocks, blockSize)
	}
	ctx := blocks * blockSize
	c := &Cache{Type: typ, BlockSize: blockSize, Blocks: blocks, Context: ctx,
		K: make([]kernels.KVView, len(m.Blocks)), V: make([]kernels.KVView, len(m.Blocks))}
	n := ctx * m.KVHeads * m.HeadDim
	for i := range c.K {
		c.K[i], c.V[i] = newKV(typ, n), newKV(typ, n)
	}
	return c, nil
}

// CheckKVType reports whether typ can hold this model's KV cache: F16, F32, or Q8_0
// when the head size is a multiple of 32.
func (m *Model) CheckKVType(typ kernels.DType) error {
	if typ != kernels.F16 && typ != kernels.F32 && typ != kernels.Q8_0 {
		return fmt.Errorf("model: KV cache type %s is not supported (f16, f32, q8_0)", typ)
	}
	if typ == kernels.Q8_0 && m.HeadDim%32 != 0 {
		return fmt.Errorf("model: KV cache type q8_0 needs a head size that is a multiple of 32, not %d", m.HeadDim)
	}
	return nil
}

// KVBytesPerToken returns the KV cache memory of one position in element type typ:
// keys and values of every layer.
func (m *Model) KVBytesPerToken(typ kernels.DType) int64 {
	tr := kernels.TraitsOf(typ)
	row := int64(m.KVHeads*m.HeadDim) / int64(tr.BlockSize) * int64(tr.BlockBytes)
	return 2 * int64(len(m.Blocks)) * row
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

// storeRows writes the rows of src (positions start… of a sequence, width values
// each) into kv at the rows the attention's block table gives them, converted by the
// backend where it has its own conversion (kernels.KVStorer).
func storeRows(be kernels.Backend, kv *kernels.KVView, a *kernels.Attention, start, width int, src []float32) {
	store := kernels.StoreKV
	if s, ok := be.(kernels.KVStorer); ok {
		store = s.StoreKV
	}
	if a.Blocks == nil {
		store(kv, start*width, src)
		return
	}
	for i := 0; i < len(src)/width; i++ {
		store(kv, a.Row(start+i)*width, src[i*width:(i+1)*width])
	}
}

// State holds the activations of one forward pass for up to Batch tokens, reused
// between calls so a steady decode allocates nothing.
type State struct {
	Batch int
	Flash bool // use the fused attention path (llama-bench's -fa 1)
	// Partition and PartitionMin are kernels.Attention's: rows whose context reaches
	// PartitionMin take partitioned attention of Partition positions (0: none).
	Partition, PartitionMin int
	x, h, q, k, v, att, o   []float32
	gate, up                []float32
	vseqs                   []kernels.VarSeq  // a step's sequences for one varlen attention call
	logits                  []float32         // grown to the rows asked for
	outRows                 []int             // the rows that need logits, in order
	attn                    kernels.Attention // reused so that a step allocates nothing
	one                     [1]Seq            // Forward's batch of one
	// shared holds the outputs and matrices of one kernels.MatMulShared call (Q, K, V;
	// gate, up), so that the call allocates nothing.
	sharedDst [3][]float32
	sharedW   [3]*kernels.Matrix

	// Window is kernels.Attention's sliding (rolling) window: each position attends
	// over the last Window positions, so a sequence's block table need only map those
	// (Seq.Blocks). NewState sets the model's own (Config.SlidingWindow); 0 = none.
	Window int
	moe    moeState // routing and expert buffers (mixture of experts only)
}

// NewState allocates activations for batches of up to batch tokens.
func (m *Model) NewState(batch int) *State {
	qDim, kvDim := m.Heads*m.HeadDim, m.KVHeads*m.HeadDim
	ff := m.FF
	if m.Experts > 0 {
		ff = m.ExpertFF // the dense width is not used
	}
	// A layer's attention buffers (q, k, v, att) are dead once the output projection has
	// read att, and o once it is added into x; the feed-forward's gate is written only
	// after that, and its up before o is written again (the down projection's output,
	// when up has been consumed). So gate shares memory with the attention buffers and
	// up with o: a prefill batch's scratch is the larger phase's, not both (13 MiB less
	// for 512 tokens of llama-1b).
	attn := make([]float32, batch*max(ff, 2*qDim+2*kvDim))
	ffn := make([]float32, batch*max(ff, m.Embd))
	return &State{
		Batch: batch,
		x:     make([]float32, batch*m.Embd), h: make([]float32, batch*m.Embd),
		q: attn[:batch*qDim], att: attn[batch*qDim : 2*batch*qDim],
		k: attn[2*batch*qDim : 2*batch*qDim+batch*kvDim], v: attn[2*batch*qDim+batch*kvDim : 2*batch*(qDim+kvDim)],
		gate: attn[:batch*ff],
		o:    ffn[:batch*m.Embd], up: ffn[:batch*ff],
		Window: m.SlidingWindow,
		moe:    m.newMoEState(batch),
	}
}

// Seq is one sequence's share of a batched forward pass: its new tokens, the position
// of the first of them and the cache that holds its earlier positions and receives the
// new ones. A decode step is one token; a prefill chunk is several.
type Seq struct {
	Cache  *Cache
	Start  int
	Tokens []int32
	// Blocks is the sequence's block table in Cache: its positions i*BlockSize… live
	// in block Blocks[i]. It must cover Start+len(Tokens) positions. nil: the cache is
	// the sequence's own, position p in row p. Under a window (State.Window) only the
	// blocks of positions Start+1-Window… are read; earlier entries may be -1 (blocks
	// given back), and a block may be reused for later positions, as a ring.
	Blocks []int32
	// Logits asks for the logits of the sequence's last token (a decode step or the
	// last chunk of a prompt); an earlier prompt chunk needs none.
	Logits bool
	// AllLogits asks for the logits of every token of the sequence, one row each in
	// order (speculative decoding's verification of drafted tokens); it implies Logits.
	AllLogits bool
}

// Forward runs tokens at positions start… through the model, appending their keys and
// values to cache. It returns the logits of the last token, or of every token when
// all is set (rows of Vocab). The slice is reused by the next call.
func (m *Model) Forward(be kernels.Backend, st *State, cache *Cache, tokens []int32, start int, all bool) ([]float32, error) {
	st.one[0] = Seq{Cache: cache, Start: start, Tokens: tokens, Logits: true}
	out, err := m.forward(be, st, st.one[:], all)
	st.one[0] = Seq{}
	return out, err
}

// ForwardBatch runs the tokens of several sequences through the model in one pass:
// every weight matrix is applied once to all rows of the batch, while RoPE, the KV
// append and attention work on each sequence's rows with its own cache and positions.
// It returns one row of Vocab logits for each sequence that asks for them (a row per
// token for one with AllLogits), in the order of seqs; the slice is reused by the next call. Sequences may share one paged
// cache through their block tables, but no two may write the same rows; their tokens
// together fit in the state's Batch.
func (m *Model) ForwardBatch(be kernels.Backend, st *State, seqs []Seq) ([]float32, error) {
	return m.forward(be, st, seqs, false)
}

func (m *Model) forward(be kernels.Backend, st *State, seqs []Seq, all bool) ([]float32, error) {
	n, nOut := 0, 0
	for i := range seqs {
		s := &seqs[i]
		if len(s.Tokens) == 0 {
			return nil, fmt.Errorf("model: sequence %d of the batch has no tokens", i)
		}
		if err := s.check(st.Window); err != nil {
			return nil, fmt.Errorf("model: sequence %d of the batch: %w", i, err)
		}
		n += len(s.Tokens)
		switch {
		case s.AllLogits:
			nOut += len(s.Tokens)
		case s.Logits:
			nOut++
		}
	}
	if n == 0 || n > st.Batch {
		return nil, fmt.Errorf("model: batch of %d tokens (state holds %d)", n, st.Batch)
	}
	if all {
		nOut = n
	}
	// The rows that need logits, in order: the last layer runs its output projection
	// and feed-forward on those alone (as llama.cpp does), since no other row's result
	// reaches anything; the keys and values of every row are stored before that. Each
	// kept row's arithmetic is the same in a smaller batch (the kernels are
	// batch-invariant), so the logits are the same bit for bit.
	outRows := st.outRows[:0]
	if nOut < n {
		row := 0
		for i := range seqs {
			sn := len(seqs[i].Tokens)
			switch {
			case seqs[i].AllLogits:
				for t := range sn {
					outRows = append(outRows, row+t)
				}
			case seqs[i].Logits:
				outRows = append(outRows, row+sn-1)
			}
			row += sn
		}
		st.outRows = outRows
	}
	e := m.Embd
	qDim, kvDim := m.Heads*m.HeadDim, m.KVHeads*m.HeadDim
	embTr := kernels.TraitsOf(m.Embed.Type)
	rowBytes := m.Embed.Cols / embTr.BlockSize * embTr.BlockBytes
	row := 0
	for i := range seqs {
		for _, t := range seqs[i].Tokens {
			if t < 0 || int(t) >= m.Vocab {
				return nil, fmt.Errorf("model: token id %d outside the vocabulary of %d", t, m.Vocab)
			}
			embTr.ToFloat(m.Embed.Data[int(t)*rowBytes:(int(t)+1)*rowBytes], st.x[row*e:(row+1)*e])
			row++
		}
	}
	x, h := st.x[:n*e], st.h[:n*e]
	q, k, v := st.q[:n*qDim], st.k[:n*kvDim], st.v[:n*kvDim]
	att, o := st.att[:n*qDim], st.o[:n*e]
	var gate, up []float32 // the dense FFN's; experts take their rows from st.gate and st.up
	if m.Experts == 0 {
		gate, up = st.gate[:n*m.FF], st.up[:n*m.FF]
	}
	// Sequences sharing one cache (the scheduler's steps) take one varlen attention call
	// per layer where the backend has it: one parallel step instead of one per sequence,
	// the same outputs.
	varlen, _ := be.(kernels.VarlenAttender)
	for i := range seqs {
		if seqs[i].Cache != seqs[0].Cache {
			varlen = nil
		}
	}
	if len(seqs) < 2 {
		varlen = nil
	}
	if varlen != nil {
		st.vseqs = st.vseqs[:0]
		for i := range seqs {
			st.vseqs = append(st.vseqs, kernels.VarSeq{N: len(seqs[i].Tokens), Start: seqs[i].Start, Blocks: seqs[i].Blocks})
		}
	}
	attn := &st.attn
	scale := m.AttnScale
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(m.HeadDim)))
	}
	*attn = kernels.Attention{Heads: m.Heads, KVHeads: m.KVHeads, HeadDim: m.HeadDim,
		Scale: scale, Flash: st.Flash,
		Partition: st.Partition, PartitionMin: st.PartitionMin, Window: st.Window}
	for li := range m.Blocks {
		L := &m.Blocks[li]
		attn.Sinks, attn.Window = L.Sinks, st.Window
		if m.SlidingLayer(li) { // the layer's own window, or the state's if narrower
			attn.Window = m.LayerWindow
			if st.Window > 0 {
				attn.Window = min(st.Window, m.LayerWindow)
			}
		}
		be.RMSNorm(h, x, L.AttnNorm, m.NormEps)
		st.matMulShared(be, h, n, [3][]float32{q, k, v}, [3]*kernels.Matrix{L.Q, L.K, L.V})
		if L.QBias != nil {
			addBias(q, L.QBias)
			addBias(k, L.KBias)
			addBias(v, L.VBias)
		}
		if L.QNorm != nil { // qwen3: each head normalised in place
			be.RMSNorm(q, q, L.QNorm, m.NormEps)
			be.RMSNorm(k, k, L.KNorm, m.NormEps)
		}
		row := 0
		for i := range seqs {
			s := &seqs[i]
			sn, start := len(s.Tokens), s.Start
			sq, sk, sv := q[row*qDim:(row+sn)*qDim], k[row*kvDim:(row+sn)*kvDim], v[row*kvDim:(row+sn)*kvDim]
			be.ApplyRoPE(sq, sn, start, m.Heads, m.HeadDim, &m.Rope)
			be.ApplyRoPE(sk, sn, start, m.KVHeads, m.HeadDim, &m.Rope)
			attn.N, attn.Start = sn, start
			attn.K, attn.V = s.Cache.K[li], s.Cache.V[li]
			attn.Blocks, attn.BlockSize = s.Blocks, s.Cache.BlockSize
			storeRows(be, &attn.K, attn, start, kvDim, sk)
			storeRows(be, &attn.V, attn, start, kvDim, sv)
			if varlen == nil {
				be.Attend(att[row*qDim:(row+sn)*qDim], sq, attn)
			}
			row += sn
		}
		if varlen != nil {
			attn.N, attn.Start, attn.Blocks = 0, 0, nil
			varlen.AttendVarlen(att, q, attn, st.vseqs)
		}
		if li == len(m.Blocks)-1 && nOut < n {
			if nOut == 0 { // no logits: the keys and values were all this pass is for
				break
			}
			for j, r := range outRows { // r ≥ j: rows move forward only
				copy(att[j*qDim:(j+1)*qDim], att[r*qDim:(r+1)*qDim])
				copy(x[j*e:(j+1)*e], x[r*e:(r+1)*e])
			}
			n = nOut
			x, h, att, o = x[:n*e], h[:n*e], att[:n*qDim], o[:n*e]
			if m.Experts == 0 {
				gate, up = gate[:n*m.FF], up[:n*m.FF]
			}
		}
		be.MatMul(o, L.O, att, n)
		if L.OBias != nil {
			addBias(o, L.OBias)
		}
		addInto(x, o)
		be.RMSNorm(h, x, L.FFNNorm, m.NormEps)
		if L.Router != nil {
			m.moeFFN(be, st, L, x, h, n)
			continue
		}
		st.matMulShared(be, h, n, [3][]float32{gate, up}, [3]*kernels.Matrix{L.Gate, L.Up})
		be.SwiGLU(gate, gate, up)
		be.MatMul(o, L.Down, gate, n)
		addInto(x, o)
	}
	attn.K, attn.V, attn.Blocks, attn.Sinks = kernels.KVView{}, kernels.KVView{}, nil, nil // keep no cache alive
	clear(st.vseqs)
	if nOut == 0 {
		return st.logits[:0], nil
	}
	// The rows that need logits are x's first nOut: every row, or those the last layer
	// gathered (a model has at least one layer).
	hOut := h[:nOut*e]
	be.RMSNorm(hOut, x[:nOut*e], m.OutputNorm, m.NormEps)
	if cap(st.logits) < nOut*m.Vocab {
		st.logits = make([]float32, nOut*m.Vocab)
	}
	logits := st.logits[:nOut*m.Vocab]
	be.MatMul(logits, m.Output, hOut, nOut)
	return logits, nil
}

// matMulShared multiplies x (n rows) by the matrices of w (two or three, the rest nil)
// that take the same activations, each into its dst, in one backend step where the
// backend can (kernels.MatMulShared).
func (st *State) matMulShared(be kernels.Backend, x []float32, n int, dst [3][]float32, w [3]*kernels.Matrix) {
	k := 3
	if w[2] == nil {
		k = 2
	}
	st.sharedDst, st.sharedW = dst, w
	kernels.MatMulShared(be, st.sharedDst[:k], st.sharedW[:k], x, n)
	st.sharedDst, st.sharedW = [3][]float32{}, [3]*kernels.Matrix{} // keep nothing alive
}

// check validates the sequence's positions against its cache and block table: under
// a window, the blocks from the one of the first position read (Start+1-window) on.
func (s *Seq) check(window int) error {
	end := s.Start + len(s.Tokens)
	if s.Blocks == nil {
		if s.Start < 0 || end > s.Cache.Context {
			return fmt.Errorf("position %d exceeds the context of %d", end, s.Cache.Context)
		}
		return nil
	}
	if s.Start < 0 || end > len(s.Blocks)*s.Cache.BlockSize {
		return fmt.Errorf("position %d exceeds its block table of %d blocks of %d", end, len(s.Blocks), s.Cache.BlockSize)
	}
	first := 0
	if window > 0 {
		first = max(0, s.Start+1-window) / s.Cache.BlockSize
	}
	for _, b := range s.Blocks[first : (end+s.Cache.BlockSize-1)/s.Cache.BlockSize] {
		if b < 0 || int(b) >= s.Cache.Blocks {
			return fmt.Errorf("block %d outside the pool of %d", b, s.Cache.Blocks)
		}
	}
	return nil
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
