package workloads

import (
	"strings"
	"testing"

	"llmbench/engine/sample"
)

func f64(v float64) *float64 { return &v }
func iptr(v int) *int        { return &v }

// TestBatchSpecDefaults checks TGI's defaults: batch sizes 1…32, sequence length 10,
// decode length 8, 10 runs, 1 warmup, the built-in model in process.
func TestBatchSpecDefaults(t *testing.T) {
	s := BatchSpec{}.WithDefaults()
	if s.Backend != "inproc" || s.Model.Path != BuiltinModel || s.SequenceLength != 10 || s.DecodeLength != 8 || s.Runs != 10 ||
		s.NWarmups() != 1 || len(s.BatchSize) != 6 || s.BatchSize[5] != 32 || s.KVType != "f16" {
		t.Errorf("defaults: %+v", s)
	}
	if err := s.Validate(); err != nil {
		t.Error(err)
	}
	if got := s.SectionLabel(4); got != "CPU - 4 threads" {
		t.Errorf("label %q", got)
	}
	s.Label = "Tensor Parallel (TP) - 2 GPUs"
	if got := s.SectionLabel(4); got != s.Label {
		t.Errorf("label %q", got)
	}
}

// TestBatchSpecRefuses checks each bad value is refused naming its flag, the
// sampling options the sampler lacks included.
func TestBatchSpecRefuses(t *testing.T) {
	for _, c := range []struct {
		flag string
		edit func(*BatchSpec)
	}{
		{"--backend", func(s *BatchSpec) { s.Backend = "vllm" }},
		{"--url", func(s *BatchSpec) { s.Backend = "tgi" }},
		{"-m", func(s *BatchSpec) { s.Model = BenchModel{} }},
		{"--sequence-length", func(s *BatchSpec) { s.SequenceLength = -1 }},
		{"--decode-length", func(s *BatchSpec) { s.DecodeLength = 1 }},
		{"--runs", func(s *BatchSpec) { s.Runs = -2 }},
		{"--warmups", func(s *BatchSpec) { s.Warmups = iptr(-1) }},
		{"--batch-size", func(s *BatchSpec) { s.BatchSize = []int{4, 0} }},
		{"-t", func(s *BatchSpec) { s.Threads = 1 << 20 }},
		{"--typical-p", func(s *BatchSpec) { s.TypicalP = f64(0.9) }},
		{"--watermark", func(s *BatchSpec) { s.Watermark = true }},
		{"--temperature", func(s *BatchSpec) { s.Temperature = f64(0) }},
		{"--top-k", func(s *BatchSpec) { s.TopK = iptr(-1) }},
		{"--top-p", func(s *BatchSpec) { s.TopP = f64(1.5) }},
		{"--repetition-penalty", func(s *BatchSpec) { s.RepetitionPenalty = f64(-1) }},
	} {
		s := BatchSpec{}.WithDefaults()
		c.edit(&s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%s: %v", c.flag, err)
		}
	}
}

// TestBatchSpecSampling maps TGI's sampling flags to the sampler as TGI decides:
// greedy unless --do-sample or a warper; temperature 1 when sampling without one;
// the repetition penalty over the whole sequence.
func TestBatchSpecSampling(t *testing.T) {
	for _, c := range []struct {
		name string
		spec BatchSpec
		want sample.Params
	}{
		{"greedy", BatchSpec{}, sample.Params{}},
		{"temperature 1 alone stays greedy", BatchSpec{Temperature: f64(1)}, sample.Params{}},
		{"do-sample", BatchSpec{DoSample: true, Seed: 3}, sample.Params{Temperature: 1, Seed: 3}},
		{"temperature", BatchSpec{Temperature: f64(0.5)}, sample.Params{Temperature: 0.5}},
		{"top-k warps", BatchSpec{TopK: iptr(40)}, sample.Params{Temperature: 1, TopK: 40}},
		{"top-p 1 does not", BatchSpec{TopP: f64(1)}, sample.Params{}},
		{"top-p", BatchSpec{TopP: f64(0.9)}, sample.Params{Temperature: 1, TopP: 0.9}},
		{"repetition penalty", BatchSpec{RepetitionPenalty: f64(1.2)}, sample.Params{RepeatPenalty: 1.2, RepeatLastN: -1}},
	} {
		if got := c.spec.Sampling(); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
