package workloads

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseIntList(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		err  string
	}{
		{"512", []int{512}, ""},
		{"1,2", []int{1, 2}, ""},
		{"0", []int{0}, ""},
		{"1-4", []int{1, 2, 3, 4}, ""},
		{"1-16*2", []int{1, 2, 4, 8, 16}, ""},
		{"1-20*2", []int{1, 2, 4, 8, 16}, ""},
		{"128-512+128", []int{128, 256, 384, 512}, ""},
		{"128-500+128", []int{128, 256, 384}, ""},
		{"3-3", []int{3}, ""},
		{"1,8-10,64", []int{1, 8, 9, 10, 64}, ""},
		{" 1 , 2 ", []int{1, 2}, ""},
		{"", nil, "empty list"},
		{"1,,2", nil, "empty item"},
		{"x", nil, "not a non-negative integer"},
		{"-1", nil, "not a non-negative integer"},
		{"1.5", nil, "not a non-negative integer"},
		{"1-", nil, "not a non-negative integer"},
		{"5-1", nil, "below first"},
		{"1-4*1", nil, "does not increase"},
		{"0-8*2", nil, "does not increase"},
		{"1-4+0", nil, "does not increase"},
		{"1-4/2", nil, "not a non-negative integer"},
		{"1-4+x", nil, "step"},
		{"0-1000000", nil, "more than"},
		{"99999999999999999999", nil, "not a non-negative integer"},
	}
	for _, c := range cases {
		got, err := ParseIntList(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseIntList(%q) = %v, %v; want error containing %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseIntList(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParsePG(t *testing.T) {
	cases := []struct {
		in   string
		want PG
		ok   bool
	}{
		{"512,128", PG{512, 128}, true},
		{" 0 , 16 ", PG{0, 16}, true},
		{"512", PG{}, false},
		{"1,2,3", PG{}, false},
		{"a,1", PG{}, false},
		{"-1,4", PG{}, false},
	}
	for _, c := range cases {
		got, err := ParsePG(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParsePG(%q) = %v, %v; want %v ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestBenchSpecValidate(t *testing.T) {
	good := BenchSpec{Models: []BenchModel{{Path: "m.gguf"}}}.WithDefaults()
	if err := good.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	cases := []struct {
		name string
		mod  func(*BenchSpec)
		want string
	}{
		{"no model", func(s *BenchSpec) { s.Models = nil }, "no model"},
		{"both", func(s *BenchSpec) { s.Models = []BenchModel{{Path: "a", Shape: "llama-1b", Type: "Q4_0"}} }, "not both"},
		{"no type", func(s *BenchSpec) { s.Models = []BenchModel{{Shape: "llama-1b"}} }, "no type"},
		{"batch 0", func(s *BenchSpec) { s.Batch = []int{0} }, "-b"},
		{"ubatch 0", func(s *BenchSpec) { s.UBatch = []int{512, 0} }, "-ub"},
		{"fa 2", func(s *BenchSpec) { s.FlashAttn = []int{2} }, "-fa"},
		{"reps", func(s *BenchSpec) { s.Reps = -1 }, "-r"},
		{"delay", func(s *BenchSpec) { s.Delay = -1 }, "--delay"},
		{"no test", func(s *BenchSpec) { s.Prompt, s.Gen = []int{0}, []int{0} }, "no test"},
		{"negative threads", func(s *BenchSpec) { s.Threads = []int{-2} }, "-t"},
	}
	for _, c := range cases {
		s := good
		c.mod(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate() = %v; want error containing %q", c.name, err, c.want)
		}
	}
}

func TestParseCPUMask(t *testing.T) {
	cases := []struct {
		in   string
		want []int
		bad  bool
	}{
		{"0x0", nil, false}, {"0x1", []int{0}, false}, {"0x0F", []int{0, 1, 2, 3}, false}, {"a", []int{1, 3}, false},
		{"0x100", []int{8}, false}, {"0x", nil, true}, {"zz", nil, true},
	}
	for _, c := range cases {
		got, err := ParseCPUMask(c.in)
		if (err != nil) != c.bad || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("ParseCPUMask(%q) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.bad)
		}
	}
}

func TestCheckKVType(t *testing.T) {
	for _, ok := range []string{"f16", "Q8_0", "f32"} {
		if err := CheckKVType(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if err := CheckKVType("q4_0"); err == nil || !strings.Contains(err.Error(), "the engine keeps f16, q8_0, f32") {
		t.Errorf("q4_0: %v", err)
	}
	if err := CheckKVType("xx"); err == nil || !strings.Contains(err.Error(), "iq4_nl") {
		t.Errorf("xx: %v", err)
	}
}

func TestBenchSpecCPUSettings(t *testing.T) {
	base := BenchSpec{Models: []BenchModel{{Path: "m"}}}
	for _, c := range []struct {
		set  func(*BenchSpec)
		flag string
	}{
		{func(s *BenchSpec) { s.Poll = []int{101} }, "--poll"},
		{func(s *BenchSpec) { s.CPUStrict = []int{2} }, "--cpu-strict"},
		{func(s *BenchSpec) { s.CPUMask = []string{"q"} }, "-C"},
		{func(s *BenchSpec) { s.Prio = 4 }, "--prio"},
		{func(s *BenchSpec) { s.NUMA = "x" }, "--numa"},
		{func(s *BenchSpec) { s.FlashAttn = []int{-2} }, "-fa"},
	} {
		s := base
		c.set(&s)
		if err := s.WithDefaults().Validate(); err == nil || !strings.HasPrefix(err.Error(), c.flag) {
			t.Errorf("%s: %v", c.flag, err)
		}
	}
	d := base.WithDefaults()
	if d.CPUMask[0] != "0x0" || d.Poll[0] != 50 || d.NGPULayers[0] != -1 || d.SplitMode[0] != "layer" || d.UseMmap[0] != 1 || d.Overrides[0] != "none" {
		t.Errorf("llama-bench defaults: %+v %+v", d.LlamaBenchCPU, d.LlamaBenchGPU)
	}
	if (LlamaBenchGPU{}).Set() || !(LlamaBenchGPU{MainGPU: []int{1}}).Set() {
		t.Error("LlamaBenchGPU.Set")
	}
}
