package kernels

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Matrix is a weight matrix stored row-major in one of the block formats: Rows rows of
// Cols elements, each row RowBytes(Cols) bytes.
type Matrix struct {
	Type       DType
	Rows, Cols int
	Data       []byte
}

// RoPE describes rotary position embedding as ggml's rope op does it.
type RoPE struct {
	Dims      int       // rotated dimensions per head (≤ head size); the rest pass through
	Base      float32   // frequency base (theta)
	FreqScale float32   // linear position scale (1 = none)
	NeoX      bool      // rotate (i, i+Dims/2) pairs instead of adjacent (2i, 2i+1) pairs
	Factors   []float32 // optional per-pair frequency divisors (llama 3.1's rope_freqs)
}

// Attention describes causal self-attention of a batch of N new tokens against a KV
// cache that holds positions [0, Start+N) of one sequence.
//
// The cache is paged: the sequence's position p lives in row Row(p) of K and V, found
// through the block table Blocks (block b holds rows b*BlockSize … b*BlockSize+
// BlockSize-1). A nil Blocks is the contiguous case, where position p is row p.
type Attention struct {
	N, Start       int // new tokens, position of the first of them
	Heads, KVHeads int // query heads and key/value heads (grouped-query when fewer)
	HeadDim        int
	Scale          float32
	K, V           KVView
	Blocks         []int32 // block table: the cache block of positions i*BlockSize…; nil = contiguous
	BlockSize      int     // positions per block (used with Blocks)
	Flash          bool    // fused (online-softmax) attention instead of materialised scores
	// Partition, when > 0, sends every query row whose context (Start+t+1 positions for
	// row t) is at least PartitionMin positions to partitioned attention: the context is
	// cut into partitions of Partition positions, each partition's running maximum, sum
	// and unnormalised output are computed apart (in parallel, the query heads of one
	// key/value head together), then reduced. The other rows take the one-pass path
	// (Flash or plain). The choice is made per row from its own context length, so a
	// row's output does not depend on the rows it shares a call with.
	Partition, PartitionMin int
	// Window, when > 0, is a sliding (rolling) window: the row at position p attends
	// over positions max(0, p+1-Window) … p only (First), so the cache need only hold
	// the last Window positions before each new token; RoPE positions are unchanged.
	Window int
	// Sinks, when not nil, holds one logit per query head (gpt-oss's attention sinks):
	// exp(Sinks[h]) joins every row's softmax denominator as the score of a position
	// with no value, so the weights of the real positions sum to less than one. The
	// logit is used as it is (Scale does not apply to it).
	Sinks []float32
}

// First returns the first position the row at position p attends over: 0, or the
// start of its window.
func (a *Attention) First(p int) int {
	if a.Window > 0 {
		return max(0, p+1-a.Window)
	}
	return 0
}

// VarSeq is one sequence of a varlen attention call (several sequences of different
// query and context lengths at once): N new tokens at positions Start…Start+N-1 whose
// cache rows the block table Blocks gives (nil: position p is row p). The call's
// Attention gives everything else; its own N, Start and Blocks are ignored.
type VarSeq struct {
	N, Start int
	Blocks   []int32
}

// Row returns the cache row that holds the sequence's position p.
func (a *Attention) Row(p int) int {
	r, _ := a.Span(p, p+1)
	return r
}

// Span returns the cache row of position p and how many of the positions p…end-1
// lie in consecutive rows from it (to the end of p's block), so that kernels walk
// the cache a block at a time.
func (a *Attention) Span(p, end int) (row, n int) {
	if a.Blocks == nil {
		return p, end - p
	}
	b := p / a.BlockSize
	in := p - b*a.BlockSize
	return int(a.Blocks[b])*a.BlockSize + in, min(a.BlockSize-in, end-p)
}

// KVView is one layer's key or value cache: each row holds one position's
// KVHeads*HeadDim values, stored as F32, F16 or Q8_0 (ggml blocks of 32 values; a row
// is KVHeads*HeadDim/32 blocks, and HeadDim must be a multiple of 32). Which position
// a row holds is the block table's business (Attention.Row).
type KVView struct {
	Type DType // F32, F16 or Q8_0
	F32  []float32
	F16  []uint16
	Q8   []byte
}

// StoreKV writes src (whole head rows) into kv at element offset off (a row
// boundary), converted to kv's type: the reference conversion, which a KVStorer's
// must match value for value.
func StoreKV(kv *KVView, off int, src []float32) {
	switch kv.Type {
	case Q8_0:
		TraitsOf(Q8_0).FromFloat(src, kv.Q8[off/32*34:(off+len(src))/32*34])
	case F16:
		dst := kv.F16[off : off+len(src)]
		for i, v := range src {
			dst[i] = F32ToF16(v)
		}
	default:
		copy(kv.F32[off:], src)
	}
}

// KVStorer is implemented by a backend with its own (faster) conversion of new keys
// and values into the cache: the values StoreKV writes.
type KVStorer interface {
	StoreKV(kv *KVView, off int, src []float32)
}

// VarlenAttender is implemented by backends that run the attention of several
// sequences sharing one cache in one call: q and dst hold the sequences' rows one after
// another, a gives the heads, scale, cache and path, seqs each sequence's tokens, first
// position and block table. Each row's output must equal Attend's for its sequence
// alone, bit for bit.
type VarlenAttender interface {
	AttendVarlen(dst, q []float32, a *Attention, seqs []VarSeq)
}

// CrossoverPoint is one context length measured by a partition calibration: the
// time of one decode row's attention on the one-pass path and on the partitioned path.
type CrossoverPoint struct {
	Ctx                  int
	OnePass, Partitioned time.Duration
}

// Crossover is a measured partition crossover: rows whose context reaches From take
// partitions (0: none); From is the measured length (or never) whose choice loses the
// least time over the Points, the measurements.
type Crossover struct {
	From   int
	Points []CrossoverPoint
}

// PartitionCalibrator is implemented by backends with partitioned attention
// (Attention.Partition): MeasureCrossover times one decode row of a's head layout,
// cache type and one-pass path (a.Flash) at context lengths up to maxCtx, on the
// backend's threads, one-pass and partitioned (partitions of part positions)
// alternately, and returns the crossover.
type PartitionCalibrator interface {
	MeasureCrossover(a *Attention, part, maxCtx int) Crossover
}

// Backend is the compute contract the engine runs on. Activations are host float32
// rows; weights are Matrices in any supported block format. Implementations choose
// how to spread work over threads; results must not depend on the thread count.
type Backend interface {
	// Name identifies the backend and its fast paths ("cpu/avx2").
	Name() string
	// Threads reports how many threads the backend computes with.
	Threads() int
	// MatMul computes dst[i*w.Rows+r] = Σ_c w[r][c]·x[i*w.Cols+c] for n rows of x.
	MatMul(dst []float32, w *Matrix, x []float32, n int)
	// RMSNorm normalises each row of x (len(weight) wide) by its root mean square and
	// multiplies by weight, writing dst (which may alias x).
	RMSNorm(dst, x, weight []float32, eps float32)
	// ApplyRoPE rotates, in place, n rows of heads*headDim values at positions start….
	ApplyRoPE(x []float32, n, start, heads, headDim int, r *RoPE)
	// Attend computes attention outputs (N rows of Heads*HeadDim) into dst from queries q.
	Attend(dst, q []float32, a *Attention)
	// SwiGLU computes dst[i] = silu(gate[i]) * up[i].
	SwiGLU(dst, gate, up []float32)
	// Close releases the backend's threads.
	Close()
}

// SharedMatMuler is implemented by backends that multiply several matrices by the
// same activations in one parallel step (a layer's Q, K and V; gate and up): one
// hand-over to their threads instead of one per matrix, and a matrix too small to be
// worth splitting alone (K and V in decode) shares the step with the others. The
// results equal those of one MatMul per matrix, bit for bit.
type SharedMatMuler interface {
	// MatMulShared computes, for every i, MatMul(dst[i], w[i], x, n).
	MatMulShared(dst [][]float32, w []*Matrix, x []float32, n int)
}

// MatMulShared computes MatMul(dst[i], w[i], x, n) for every i: in one step where b
// is a SharedMatMuler, else one MatMul after another.
func MatMulShared(b Backend, dst [][]float32, w []*Matrix, x []float32, n int) {
	if s, ok := b.(SharedMatMuler); ok {
		s.MatMulShared(dst, w, x, n)
		return
	}
	for i := range w {
		b.MatMul(dst[i], w[i], x, n)
	}
}

// Preparer is implemented by backends that multiply some weight types from a layout
// of their own (the CPU backend's tiles). The engine calls Prepare for every matrix it
// will multiply when it loads a model, so that no request pays for the conversion.
type Preparer interface {
	// Prepare converts w to the backend's layout ahead of its first MatMul, and reports
	// whether MatMul will now read the backend's copy instead of w.Data: the caller may
	// then let the memory behind w.Data go (reading it again must still work, as a
	// memory-mapped file's pages do). w must stay the same *Matrix with the same Data.
	Prepare(w *Matrix) bool
}

// The phases KernelChoice distinguishes.
const (
	PhaseDecode = "decode" // one token per sequence and step
	PhasePrompt = "prompt" // several tokens per step (a prompt, or a batch of sequences)
	// PhaseAttention is the attention over a key/value cache; its KernelChoice.Type is
	// the cache's type, not a weight type.
	PhaseAttention = "attention"
)

// KernelChoice names the kernel a backend runs for one weight type in one phase, and
// why (the CPU features, or settings, that chose it).
type KernelChoice struct {
	Type   DType  `json:"type"`
	Phase  string `json:"phase"`  // PhaseDecode, PhasePrompt or PhaseAttention
	Kernel string `json:"kernel"` // a short name, such as "f16-x4"
	Detail string `json:"detail"` // what it does, such as "4 rows × 1 token, VCVTPH2PS + FMA"
	Why    string `json:"why"`
}

// KernelLister is implemented by backends that can say which kernels they run.
type KernelLister interface {
	Kernels() []KernelChoice
}

// ImplName returns b's name and, where b is a KernelLister, the kernels it runs for
// the weight types given (decode and prompt), as in
// "cpu/avx512vnni (F16 decode f16-x4, prompt f16-gemm)".
func ImplName(b Backend, types []DType) string {
	name := b.Name()
	l, ok := b.(KernelLister)
	if !ok || len(types) == 0 {
		return name
	}
	ks := l.Kernels()
	var parts []string
	for _, t := range types {
		var ph []string
		for _, k := range ks {
			if k.Type == t && k.Phase != PhaseAttention {
				ph = append(ph, k.Phase+" "+k.Kernel)
			}
		}
		if len(ph) > 0 {
			parts = append(parts, t.String()+" "+strings.Join(ph, ", "))
		}
	}
	if len(parts) == 0 {
		return name
	}
	return name + " (" + strings.Join(parts, "; ") + ")"
}

// Factory makes a backend with the given number of threads (0 = all cores).
type Factory func(threads int) (Backend, error)

var backends = map[string]Factory{}

// Register makes a backend available by name; called from init functions.
func Register(name string, f Factory) { backends[name] = f }

// Select returns a new backend of the named kind.
func Select(name string, threads int) (Backend, error) {
	f, ok := backends[name]
	if !ok {
		return nil, fmt.Errorf("no backend %q (have %v)", name, Backends())
	}
	return f(threads)
}

// Backends lists the registered backend names.
func Backends() []string {
	var names []string
	for n := range backends {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
