package workloads

import (
	"strings"
	"testing"
)

// TestThroughputRows: rows pair weights and KV types (one KV type for all, one per
// row, or the int8 default of q8_0 with Q8_0 weights), and name their dtype as
// JetStream's table does.
func TestThroughputRows(t *testing.T) {
	cases := []struct {
		weights, kv []string
		want        []ThroughputRow
		dtypes      []string
	}{
		{[]string{"bf16", "Q8_0"}, nil, []ThroughputRow{{"BF16", "f16"}, {"Q8_0", "q8_0"}}, []string{"bfloat16", "int8"}},
		{[]string{"Q8_0"}, []string{"F16"}, []ThroughputRow{{"Q8_0", "f16"}}, []string{"q8_0 / f16"}},
		{[]string{"F16", "Q4_0"}, []string{"f16", "q8_0"}, []ThroughputRow{{"F16", "f16"}, {"Q4_0", "q8_0"}}, []string{"float16", "q4_0 / q8_0"}},
		{nil, nil, []ThroughputRow{{"", "f16"}}, []string{"f32 / f16"}},
	}
	for _, c := range cases {
		s := ThroughputSpec{WeightsTypes: c.weights, KVCacheTypes: c.kv}
		got := s.Rows()
		if len(got) != len(c.want) {
			t.Fatalf("%v/%v: rows %+v", c.weights, c.kv, got)
		}
		for i := range got {
			if got[i] != c.want[i] || got[i].Dtype("F32") != c.dtypes[i] {
				t.Errorf("%v/%v row %d: %+v %q, want %+v %q", c.weights, c.kv, i, got[i], got[i].Dtype("F32"), c.want[i], c.dtypes[i])
			}
		}
	}
}

// TestThroughputRollingWindowRule: the window is used exactly when the cache is
// shorter than input + output (JetStream's rule).
func TestThroughputRollingWindowRule(t *testing.T) {
	for _, c := range []struct {
		cache, in, out int
		want           bool
	}{{512, 256, 512, true}, {1024, 256, 512, false}, {768, 256, 512, false}, {767, 256, 512, true}} {
		s := ThroughputSpec{MaxCacheLength: c.cache, MaxInputLength: c.in, MaxOutputLength: c.out}
		if s.RollingWindow() != c.want {
			t.Errorf("cache %d, in %d, out %d: rolling window %v", c.cache, c.in, c.out, !c.want)
		}
	}
}

func TestThroughputValidate(t *testing.T) {
	good := ThroughputSpec{Model: "llama-tiny", BatchSize: 1, MaxCacheLength: 8, MaxInputLength: 4, MaxOutputLength: 4, NumPrompts: 1, DatasetPath: "x.json"}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(*ThroughputSpec)
		want string
	}{
		{func(s *ThroughputSpec) { s.NumPrompts = 0 }, "--num-prompts"},
		{func(s *ThroughputSpec) { s.MaxInputLength = 0 }, "--max-input-length"},
		{func(s *ThroughputSpec) { s.Threads = -1 }, "-t"},
		{func(s *ThroughputSpec) { s.WeightsTypes = []string{"Q8_0"}; s.Model = "" }, "built-in model"},
	} {
		s := good
		c.edit(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", s, err, c.want)
		}
	}
}

// TestThroughputRollingWindowNote: the note says used or not, with the numbers, as
// the run's log says it.
func TestThroughputRollingWindowNote(t *testing.T) {
	used := ThroughputSpec{MaxCacheLength: 512, MaxInputLength: 256, MaxOutputLength: 512}.RollingWindowNote()
	if used != "rolling window: cache 512 < input 256 + output 512, each sequence keeps its last 512 positions" {
		t.Errorf("used: %q", used)
	}
	whole := ThroughputSpec{MaxCacheLength: 1024, MaxInputLength: 256, MaxOutputLength: 512}.RollingWindowNote()
	if whole != "no rolling window: cache 1024 ≥ input 256 + output 512, every sequence fits whole" {
		t.Errorf("not used: %q", whole)
	}
}
