package workloads

import (
	"fmt"
	"slices"
	"strings"
)

// KernelSpec is a kernel benchmark (`llmbench kernels`): a suite of kernel cases on
// shapes, timed directly on the CPU backend with no model. Zero values take the
// suite's defaults (WithDefaults).
type KernelSpec struct {
	// Suite names the suite: attention-masks or paged-attention.
	Suite string `yaml:"suite" json:"suite"`
	// Cases limits the suite to these cases (attention-masks: mask names such as
	// causal, sliding_window, document; paged-attention: case names such as
	// decode-long); empty: all of them.
	Cases []string `yaml:"cases,omitempty" json:"cases,omitempty"`
	// Batch, Heads, SeqLen and HeadDim are the attention shape (attention-masks; the
	// paged-attention cases have their own shapes).
	Batch   int `yaml:"batch,omitempty" json:"batch,omitempty"`
	Heads   int `yaml:"heads,omitempty" json:"heads,omitempty"`
	SeqLen  int `yaml:"seq_len,omitempty" json:"seq_len,omitempty"`
	HeadDim int `yaml:"head_dim,omitempty" json:"head_dim,omitempty"`
	// BlockSize is the side of a block-mask tile and of the flash kernels' tiles.
	BlockSize int `yaml:"block_size,omitempty" json:"block_size,omitempty"`
	// Window is the sliding-window mask's window; PrefixLen the prefix-LM mask's
	// prefix; Documents the number of documents of the document mask.
	Window    int `yaml:"window,omitempty" json:"window,omitempty"`
	PrefixLen int `yaml:"prefix_len,omitempty" json:"prefix_len,omitempty"`
	Documents int `yaml:"documents,omitempty" json:"documents,omitempty"`
	// Threads is the CPU backend's thread count (0 = all cores).
	Threads int `yaml:"threads,omitempty" json:"threads,omitempty"`
	// Reps is how many timed repetitions each case runs after one warmup (the median
	// counts).
	Reps int `yaml:"repetitions,omitempty" json:"repetitions,omitempty"`
	// Seed seeds the random inputs and the document lengths.
	Seed uint64 `yaml:"seed,omitempty" json:"seed,omitempty"`
	// Check fails the run when the suite's acceptance checks do not pass
	// (attention-masks: block-sparse over dense at least half the ideal speed-up on
	// the sliding-window and document masks; paged-attention: the paths agree, the
	// automatic choice within 5 % of the better path, partitions winning the long
	// single-sequence decodes).
	Check bool `yaml:"check,omitempty" json:"check,omitempty"`
}

// The kernel suites.
const (
	SuiteAttentionMasks = "attention-masks"
	SuitePagedAttention = "paged-attention"
)

// KernelSuites lists the suite names a KernelSpec accepts.
var KernelSuites = []string{SuiteAttentionMasks, SuitePagedAttention}

// The attention-masks defaults: a shape that runs in seconds per mask on 2 cores
// (attention-gym's is B=16 H=16 S=8192 D=64 on a GPU), attention-gym's window and
// prefix of 1024 and 12 documents, flex attention's 128-wide blocks.
const (
	DefaultKernelBatch     = 1
	DefaultKernelHeads     = 4
	DefaultKernelSeqLen    = 2048
	DefaultKernelHeadDim   = 64
	DefaultKernelBlockSize = 128
	DefaultKernelWindow    = 1024
	DefaultKernelPrefixLen = 1024
	DefaultKernelDocuments = 12
	DefaultKernelReps      = 3
)

// WithDefaults fills the zero values.
func (s KernelSpec) WithDefaults() KernelSpec {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&s.Batch, DefaultKernelBatch)
	def(&s.Heads, DefaultKernelHeads)
	def(&s.SeqLen, DefaultKernelSeqLen)
	def(&s.HeadDim, DefaultKernelHeadDim)
	def(&s.BlockSize, DefaultKernelBlockSize)
	def(&s.Window, DefaultKernelWindow)
	def(&s.PrefixLen, DefaultKernelPrefixLen)
	def(&s.Documents, DefaultKernelDocuments)
	def(&s.Reps, DefaultKernelReps)
	return s
}

// Validate reports the first value that cannot run, naming its flag.
func (s KernelSpec) Validate() error {
	if !slices.Contains(KernelSuites, s.Suite) {
		return fmt.Errorf("--suite: %q is not one of %s", s.Suite, strings.Join(KernelSuites, ", "))
	}
	for _, v := range []struct {
		name   string
		v, min int
	}{{"--batch", s.Batch, 1}, {"--heads", s.Heads, 1}, {"--seq-len", s.SeqLen, 1}, {"--head-dim", s.HeadDim, 1},
		{"--block-size", s.BlockSize, 1}, {"--window", s.Window, 1}, {"--prefix-len", s.PrefixLen, 1},
		{"--documents", s.Documents, 1}, {"-r", s.Reps, 1}, {"-t", s.Threads, 0}} {
		if v.v < v.min {
			return fmt.Errorf("%s: %d is below the minimum (%d)", v.name, v.v, v.min)
		}
	}
	if s.Documents > s.SeqLen {
		return fmt.Errorf("--documents: %d documents do not fit in %d positions", s.Documents, s.SeqLen)
	}
	return nil
}
