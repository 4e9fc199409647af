package synth

import (
	"context"
	"fmt"
	"io"
	"math/bits"
	"os"
	"runtime"
	"strings"
	"sync"

	"llmbench/engine/gguf"
	"llmbench/kernels"
)

// DefaultSeed is the seed used when none is given.
const DefaultSeed uint64 = 0

// Version identifies the generator. It is written into every file (llmbench.synth.version)
// and changes whenever the same Spec would produce different bytes, so stale cached files
// are regenerated.
const Version = 1

// Spec is one synthetic model: a shape, a quantization mix and a seed.
type Spec struct {
	Shape Shape
	Type  FileType
	Seed  uint64
}

// NewSpec returns the Spec for a shape name and a mix name ("llama-1b", "Q4_K_M").
func NewSpec(shape, typ string, seed uint64) (Spec, error) {
	sh, err := Lookup(shape)
	if err != nil {
		return Spec{}, err
	}
	ft, err := ParseFileType(typ)
	if err != nil {
		return Spec{}, err
	}
	return Spec{Shape: sh, Type: ft, Seed: seed}, nil
}

// String returns "shape Type".
func (s Spec) String() string { return s.Shape.Name + " " + s.Type.Name }

// TensorSpec describes one tensor of a synthetic model and how its values are drawn.
type TensorSpec struct {
	Name  string
	Type  kernels.DType
	Shape []uint64 // ne[0] (the row length) first, as in GGUF

	role  tensorRole
	layer int     // block index, -1 outside the blocks
	gen   int     // the generator's tensor number (a draft's: its target's)
	mean  float32 // values are mean + std·z, z roughly standard normal
	std   float32
}

// Elements returns the number of elements of the tensor.
func (t TensorSpec) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= int64(d)
	}
	return n
}

// Bytes returns the size of the tensor's data.
func (t TensorSpec) Bytes() int64 {
	return t.Elements() / int64(t.Type.BlockSize()) * int64(t.Type.BlockBytes())
}

// Scales of the random values: projections and embeddings ~ N(0, 0.02²) as in the usual
// initialisation of Llama-family models, norm weights ≈ 1, biases small.
const (
	weightStd = 0.02
	normStd   = 0.05
	biasStd   = 0.02
)

// Tensors returns the model's tensors in file order, with the type llama.cpp's quantizer
// would give each of them under the Spec's mix.
func (s Spec) Tensors() []TensorSpec {
	if s.Shape.DraftOf != "" {
		return s.draftTensors()
	}
	sh := s.Shape
	e := uint64(sh.Embd)
	hd := uint64(sh.headDim())
	q := uint64(sh.Heads) * hd
	kv := uint64(sh.HeadsKV) * hd
	ff := uint64(sh.FF)
	var out []TensorSpec
	add := func(name string, role tensorRole, layer int, shape ...uint64) {
		t := TensorSpec{Name: name, Shape: shape, role: role, layer: layer, std: weightStd, gen: len(out)}
		switch {
		case sh.DraftLayers > 0 && layer >= sh.DraftLayers && (role == roleAttnOutput || role == roleFFNDown):
			t.std *= sh.ExtraScale
		case sh.OutputScale > 0 && name == "output_norm.weight":
			t.mean, t.std = sh.OutputScale, normStd*sh.OutputScale
		case role != roleOther:
		case len(shape) == 1 && len(name) > 5 && name[len(name)-5:] == ".bias":
			t.std = biasStd
		default:
			t.mean, t.std = 1, normStd
		}
		t.Type = tensorType(s.Type, sh, role, layer, int(shape[0]))
		out = append(out, t)
	}
	add("token_embd.weight", roleTokenEmbd, -1, e, uint64(sh.Vocab))
	for l := range sh.Layers {
		p := fmt.Sprintf("blk.%d.", l)
		add(p+"attn_norm.weight", roleOther, l, e)
		add(p+"attn_q.weight", roleAttnQ, l, e, q)
		if sh.QKVBias {
			add(p+"attn_q.bias", roleOther, l, q)
		}
		if sh.QKNorm {
			add(p+"attn_q_norm.weight", roleOther, l, hd)
		}
		add(p+"attn_k.weight", roleAttnK, l, e, kv)
		if sh.QKVBias {
			add(p+"attn_k.bias", roleOther, l, kv)
		}
		if sh.QKNorm {
			add(p+"attn_k_norm.weight", roleOther, l, hd)
		}
		add(p+"attn_v.weight", roleAttnV, l, e, kv)
		if sh.QKVBias {
			add(p+"attn_v.bias", roleOther, l, kv)
		}
		add(p+"attn_output.weight", roleAttnOutput, l, q, e)
		if sh.gptOSS() { // llama.cpp's gpt-oss: output bias, sinks, post_attention_norm
			add(p+"attn_output.bias", roleOther, l, e)
			add(p+"attn_sinks.weight", roleOther, l, uint64(sh.Heads))
			add(p+"post_attention_norm.weight", roleOther, l, e)
		} else {
			add(p+"ffn_norm.weight", roleOther, l, e)
		}
		if sh.Experts > 0 { // llama.cpp's qwen3moe: the router, then 3-D [.., .., experts] stacks
			ne, eff := uint64(sh.Experts), uint64(sh.ExpertFF)
			add(p+"ffn_gate_inp.weight", roleRouter, l, e, ne)
			if sh.gptOSS() {
				add(p+"ffn_gate_inp.bias", roleOther, l, ne)
			}
			add(p+"ffn_gate_exps.weight", roleFFNGate, l, e, eff, ne)
			add(p+"ffn_up_exps.weight", roleFFNUp, l, e, eff, ne)
			add(p+"ffn_down_exps.weight", roleFFNDown, l, eff, e, ne)
			if sh.gptOSS() { // one bias row per expert: [eff or e, experts]
				add(p+"ffn_gate_exps.bias", roleOther, l, eff, ne)
				add(p+"ffn_up_exps.bias", roleOther, l, eff, ne)
				add(p+"ffn_down_exps.bias", roleOther, l, e, ne)
			}
			continue
		}
		add(p+"ffn_gate.weight", roleFFNGate, l, e, ff)
		add(p+"ffn_up.weight", roleFFNUp, l, e, ff)
		add(p+"ffn_down.weight", roleFFNDown, l, ff, e)
	}
	add("output_norm.weight", roleOther, -1, e)
	if !sh.Tied {
		add("output.weight", roleOutput, -1, e, uint64(sh.Vocab))
	}
	return out
}

// draftTensors returns a draft shape's tensors: its target's, less the blocks past
// the draft's, each drawn as in the target (same generator number and scales) and
// typed for the draft's mix.
func (s Spec) draftTensors() []TensorSpec {
	t, err := s.Shape.target()
	if err != nil {
		return nil // declare reports it
	}
	var out []TensorSpec
	for _, ts := range (Spec{Shape: t, Type: s.Type, Seed: s.Seed}).Tensors() {
		if ts.layer >= s.Shape.Layers {
			continue
		}
		ts.Type = tensorType(s.Type, s.Shape, ts.role, ts.layer, int(ts.Shape[0]))
		out = append(out, ts)
	}
	return out
}

// ActiveParams returns the parameters one token's forward pass uses: all of Params
// but, in a mixture-of-experts shape, only ExpertsUsed of each block's experts.
func (s Spec) ActiveParams() int64 {
	var n int64
	for _, t := range s.Tensors() {
		if s.Shape.Experts > 0 && isExpertStack(t) {
			n += t.Elements() / int64(s.Shape.Experts) * int64(s.Shape.ExpertsUsed)
			continue
		}
		n += t.Elements()
	}
	return n
}

// isExpertStack reports whether t holds one slice per routed expert: a 3-D expert weight
// stack or a gpt-oss expert bias (ffn_*_exps.bias, one row per expert).
func isExpertStack(t TensorSpec) bool {
	return len(t.Shape) == 3 || strings.HasSuffix(t.Name, "_exps.bias")
}

// Params returns the number of parameters (tied embeddings counted once).
func (s Spec) Params() int64 {
	var n int64
	for _, t := range s.Tensors() {
		n += t.Elements()
	}
	return n
}

// FileSize returns the exact size in bytes of the file Write produces.
func (s Spec) FileSize() (int64, error) {
	gw, _, err := s.declare(io.Discard)
	if err != nil {
		return 0, err
	}
	return int64(gw.Size()), nil
}

// declare builds a GGUF writer with every key and tensor of the model declared.
func (s Spec) declare(w io.Writer) (*gguf.Writer, []TensorSpec, error) {
	if err := s.Shape.Validate(); err != nil {
		return nil, nil, err
	}
	if s.Type.Name == "" {
		return nil, nil, fmt.Errorf("synth: no type given")
	}
	ts := s.Tensors()
	for _, t := range ts {
		if quantizer(t.Type) == nil {
			return nil, nil, fmt.Errorf("synth: %s: no quantizer for %s (tensor %s) in package kernels", s, t.Type, t.Name)
		}
	}
	gw := gguf.NewWriter(w)
	s.addKVs(gw.AddKV)
	for _, t := range ts {
		gw.AddTensor(t.Name, t.Type, t.Shape...)
	}
	return gw, ts, nil
}

// addKVs adds the metadata keys, named and typed as llama.cpp's converter writes them.
func (s Spec) addKVs(add func(string, any)) {
	sh := s.Shape
	a := sh.Arch + "."
	add("general.architecture", sh.Arch)
	add("general.type", "model")
	add("general.name", fmt.Sprintf("llmbench synthetic %s (%s shape)", sh.Name, sh.Description))
	add("general.file_type", s.Type.ID)
	add("general.quantization_version", uint32(2))
	add("llmbench.synth.shape", sh.Name)
	add("llmbench.synth.seed", s.Seed)
	add("llmbench.synth.version", uint32(Version))
	if sh.DraftOf != "" {
		add("llmbench.synth.draft_of", sh.DraftOf)
	}
	add(a+"vocab_size", uint32(sh.Vocab))
	add(a+"context_length", uint32(sh.Context))
	add(a+"embedding_length", uint32(sh.Embd))
	add(a+"block_count", uint32(sh.Layers))
	add(a+"feed_forward_length", uint32(sh.FF))
	if sh.Experts > 0 {
		add(a+"expert_count", uint32(sh.Experts))
		add(a+"expert_used_count", uint32(sh.ExpertsUsed))
		add(a+"expert_feed_forward_length", uint32(sh.ExpertFF))
	}
	add(a+"attention.head_count", uint32(sh.Heads))
	add(a+"attention.head_count_kv", uint32(sh.HeadsKV))
	if sh.HeadDim > 0 {
		add(a+"attention.key_length", uint32(sh.HeadDim))
		add(a+"attention.value_length", uint32(sh.HeadDim))
	}
	add(a+"attention.layer_norm_rms_epsilon", sh.RMSEps)
	add(a+"rope.freq_base", sh.RopeBase)
	add(a+"rope.dimension_count", uint32(sh.headDim()))
	if sh.SlidingWindow > 0 {
		add(a+"attention.sliding_window", uint32(sh.SlidingWindow))
	}
	if sh.YaRNFactor > 0 {
		add(a+"rope.scaling.type", "yarn")
		add(a+"rope.scaling.factor", sh.YaRNFactor)
		add(a+"rope.scaling.original_context_length", uint32(sh.YaRNContext))
	}
	buildVocab(sh).addKVs(add)
}

// quantizer returns the float→type conversion for t, or nil if kernels has none.
func quantizer(t kernels.DType) func([]float32, []byte) {
	if tr := kernels.TraitsOf(t); tr != nil && tr.FromFloat != nil {
		return tr.FromFloat
	}
	return nil
}

// chunkElems bounds the float32 values generated at once per worker (1 MiB).
const chunkElems = 1 << 18

// chunk is a range of rows of one tensor, the unit of parallel work.
type chunk struct {
	t          int // tensor index
	row, nrows int
}

// result is a finished chunk: n bytes of quantized data in buf.
type result struct {
	buf *[]byte
	n   int
	err error // the chunk's values could not be made
}

// task is a chunk handed to a worker, with the channel its result goes to.
type task struct {
	c   chunk
	out chan result
}

// Write generates the model described by spec and writes it to w as GGUF. progress, if
// not nil, is called after each chunk with the bytes of the file written so far (header
// included) and its size (FileSize); done never decreases and ends at the size.
// Work is spread over GOMAXPROCS goroutines; the bytes do not depend on their number.
// Write stops early, returning ctx's error, when ctx is cancelled.
func Write(ctx context.Context, w io.Writer, spec Spec, progress func(done, total int64)) error {
	gw, ts, err := spec.declare(w)
	if err != nil {
		return err
	}
	if err := gw.WriteHeader(); err != nil {
		return fmt.Errorf("synth: %s: %w", spec, err)
	}
	return writeData(ctx, gw, ts, spec.String(), func(t, row int, f []float32) error {
		fill(f, spec.Seed, ts[t].gen, row, ts[t].mean, ts[t].std)
		return nil
	}, progress)
}

// WriteSparse writes spec's GGUF header (metadata and tensor list) to f and extends f
// to the model's full size without writing the tensor data: a hole that takes no disk
// and reads as zeros. It is for reading a full-size shape's metadata, tensor list and
// sizes (model info) in milliseconds; its weights are all zero, so it is no model to run.
func WriteSparse(f *os.File, spec Spec) error {
	gw, _, err := spec.declare(f)
	if err != nil {
		return err
	}
	if err := gw.WriteHeader(); err != nil {
		return fmt.Errorf("synth: %s: %w", spec, err)
	}
	if err := gw.Flush(); err != nil {
		return fmt.Errorf("synth: %s: %w", spec, err)
	}
	return f.Truncate(int64(gw.Size()))
}

// writeData streams the data of the tensors ts, declared in gw whose header is written,
// in file order: produce fills f with the float32 values of len(f)/rowLen rows of tensor
// t from row on, and workers on every core convert them to the tensor's type. label names
// the file in errors. progress is as for Write.
func writeData(ctx context.Context, gw *gguf.Writer, ts []TensorSpec, label string, produce func(t, row int, f []float32) error, progress func(done, total int64)) error {
	var err error
	var chunks []chunk
	total := int64(gw.Size())
	maxBytes := 0
	for i, t := range ts {
		rowLen := int(t.Shape[0])
		rows := int(t.Elements() / int64(rowLen))
		per := max(1, chunkElems/rowLen)
		for r := 0; r < rows; r += per {
			chunks = append(chunks, chunk{t: i, row: r, nrows: min(per, rows-r)})
		}
		rb, _ := t.Type.RowBytes(rowLen)
		maxBytes = max(maxBytes, rb*min(per, rows))
	}

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel() // stop the dispatcher and workers, then wait for them
		wg.Wait()
	}()
	workers := runtime.GOMAXPROCS(0)
	// order carries each chunk's result channel in file order; its capacity bounds
	// how far generation runs ahead of the writer (and so the memory in use).
	order := make(chan chan result, 2*workers)
	work := make(chan task)
	bufs := sync.Pool{New: func() any { b := make([]byte, maxBytes); return &b }}

	// Dispatcher: queues chunks in file order, bounded by the order channel.
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(work)
		defer close(order)
		for _, c := range chunks {
			out := make(chan result, 1)
			select {
			case order <- out:
			case <-ctx.Done():
				return
			}
			select {
			case work <- task{c, out}:
			case <-ctx.Done():
				return
			}
		}
	}()
	// Workers: generate and quantize.
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var f []float32
			for j := range work {
				t := &ts[j.c.t]
				rowLen := int(t.Shape[0])
				n := j.c.nrows * rowLen
				if cap(f) < n {
					f = make([]float32, n)
				}
				if err := produce(j.c.t, j.c.row, f[:n]); err != nil {
					j.out <- result{err: err}
					continue
				}
				rb, _ := t.Type.RowBytes(rowLen)
				bp := bufs.Get().(*[]byte)
				nb := rb * j.c.nrows
				quantizer(t.Type)(f[:n], (*bp)[:nb])
				j.out <- result{buf: bp, n: nb}
			}
		}()
	}

	cur := -1
	var tw io.Writer
	for _, c := range chunks {
		var out chan result
		var ok bool
		select {
		case out, ok = <-order:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !ok {
			return ctx.Err()
		}
		var r result
		select {
		case r = <-out:
		case <-ctx.Done():
			return ctx.Err()
		}
		if r.err != nil {
			return fmt.Errorf("synth: %s: tensor %s: %w", label, ts[c.t].Name, r.err)
		}
		if c.t != cur {
			cur = c.t
			if tw, err = gw.BeginTensor(ts[cur].Name); err != nil {
				return fmt.Errorf("synth: %s: %w", label, err)
			}
		}
		if _, err := tw.Write((*r.buf)[:r.n]); err != nil {
			return fmt.Errorf("synth: %s: tensor %s: %w", label, ts[cur].Name, err)
		}
		bufs.Put(r.buf)
		if progress != nil {
			progress(int64(gw.Written()), total)
		}
	}
	if err := gw.Close(); err != nil {
		return fmt.Errorf("synth: %s: %w", label, err)
	}
	return ctx.Err()
}

// fill writes mean + std·z into f, where z are approximately standard normal values
// (Irwin–Hall with four 16-bit uniforms: bell-shaped, variance 1, bounded by ±3.46)
// from a generator seeded by (seed, tensor, first row), so every chunk can be made
// independently and the result does not depend on how the work was split.
func fill(f []float32, seed uint64, tensor, row int, mean, std float32) {
	r := wyrand(mix(seed, uint64(tensor), uint64(row)))
	const scale = 1.7320508 / 65536 // √3 / 2¹⁶
	k := std * scale
	c := mean - 131070*k // the sum of four 16-bit uniforms has mean 131070
	for i := range f {
		x := r.next()
		s := (x & 0xffff) + (x >> 16 & 0xffff) + (x >> 32 & 0xffff) + (x >> 48)
		f[i] = float32(s)*k + c
	}
}

// mix hashes the chunk coordinates into a generator state (splitmix64 finalizer).
func mix(seed, tensor, row uint64) uint64 {
	z := seed ^ tensor*0x9e3779b97f4a7c15 ^ row*0xbf58476d1ce4e5b9
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// wyrand is a small, fast 64-bit generator (Wang Yi's wyrand).
type wyrand uint64

func (r *wyrand) next() uint64 {
	*r += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(uint64(*r), uint64(*r)^0xe7037ed1a0b428db)
	return hi ^ lo
}
