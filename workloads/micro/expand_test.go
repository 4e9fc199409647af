package micro

import (
	"strings"
	"testing"

	"llmbench/workloads"
)

func TestExpand(t *testing.T) {
	m := []workloads.BenchModel{{Path: "a.gguf"}}
	cases := []struct {
		name  string
		spec  workloads.BenchSpec
		count int
		first string
	}{
		{"defaults", workloads.BenchSpec{Models: m}, 2, "pp512"},
		{"threads x fa", workloads.BenchSpec{Models: m, Prompt: []int{512}, Gen: []int{128}, Threads: []int{1, 2}, FlashAttn: []int{0, 1}}, 8, "pp512"},
		{"two models", workloads.BenchSpec{Models: append(m, workloads.BenchModel{Shape: "llama-1b", Type: "Q4_0"})}, 4, "pp512"},
		{"zeros skipped", workloads.BenchSpec{Models: m, Prompt: []int{0}, Gen: []int{16, 0}}, 1, "tg16"},
		{"pg", workloads.BenchSpec{Models: m, Prompt: []int{0}, Gen: []int{0}, PG: []workloads.PG{{Prompt: 512, Gen: 128}, {}}}, 1, "pp512+tg128"},
		{"depth", workloads.BenchSpec{Models: m, Prompt: []int{64}, Gen: []int{0}, Depth: []int{0, 512}}, 2, "pp64"},
		{"kv follows k", workloads.BenchSpec{Models: m, TypeK: []string{"f16", "q8_0"}}, 4, "pp512"},
		{"kv crossed", workloads.BenchSpec{Models: m, TypeK: []string{"f16", "q8_0"}, TypeV: []string{"f16", "q8_0"}}, 8, "pp512"},
	}
	for _, c := range cases {
		got := Expand(c.spec)
		if len(got) != c.count || got[0].Name() != c.first {
			t.Errorf("%s: %d instances, first %q; want %d, %q", c.name, len(got), got[0].Name(), c.count, c.first)
		}
	}
	// llama-bench's order: fa outside threads, tests innermost.
	got := Expand(workloads.BenchSpec{Models: m, Prompt: []int{8}, Gen: []int{4}, Threads: []int{1, 2}, FlashAttn: []int{0, 1}})
	var order []string
	for _, in := range got {
		order = append(order, in.Name()+"/"+string(rune('0'+in.Threads))+string(rune('0'+in.FlashAttn)))
	}
	want := "pp8/10 tg4/10 pp8/20 tg4/20 pp8/11 tg4/11 pp8/21 tg4/21"
	if strings.Join(order, " ") != want {
		t.Errorf("order %v; want %s", order, want)
	}
	for _, in := range Expand(workloads.BenchSpec{Models: m, TypeK: []string{"Q8_0"}}) {
		if in.TypeK != "q8_0" || in.TypeV != "q8_0" {
			t.Errorf("type names not lowered / V not following K: %+v", in)
		}
	}
}

func TestTestName(t *testing.T) {
	cases := []struct {
		p, n, d int
		want    string
	}{
		{512, 0, 0, "pp512"},
		{0, 128, 0, "tg128"},
		{512, 128, 0, "pp512+tg128"},
		{512, 0, 4096, "pp512 @ d4096"},
		{0, 128, 512, "tg128 @ d512"},
	}
	for _, c := range cases {
		if got := TestName(c.p, c.n, c.d); got != c.want {
			t.Errorf("TestName(%d, %d, %d) = %q; want %q", c.p, c.n, c.d, got, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	m := []workloads.BenchModel{{Path: "a.gguf"}}
	cases := []struct {
		spec workloads.BenchSpec
		want string
	}{
		{workloads.BenchSpec{Models: m, TypeK: []string{"q9_9"}}, "-ctk"},
		{workloads.BenchSpec{Models: m, TypeK: []string{"f16"}, TypeV: []string{"q8_0"}}, "one type"},
		{workloads.BenchSpec{Models: m, Threads: []int{-1}}, "-t"},
	}
	for _, c := range cases {
		if err := Validate(c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v; want error containing %q", c.spec, err, c.want)
		}
	}
}

func TestRecordStats(t *testing.T) {
	r := Record{NPrompt: 0, NGen: 100, SamplesNs: []uint64{1e9, 2e9}, WeightBytesPerToken: 1e9}
	if got := r.AvgTs(); got != 75 {
		t.Errorf("AvgTs = %v; want 75 (mean of 100 and 50 t/s)", got)
	}
	if got := r.StddevTs(); got < 35.35 || got > 35.36 {
		t.Errorf("StddevTs = %v; want the sample std 35.355", got)
	}
	if got := r.AvgNs(); got != 1.5e9 {
		t.Errorf("AvgNs = %v", got)
	}
	if got := r.MemBandwidth(); got != 75e9 {
		t.Errorf("MemBandwidth = %v; want 75e9", got)
	}
	if got := r.Ceiling(150e9); got != 150 {
		t.Errorf("Ceiling = %v; want 150", got)
	}
	one := Record{NPrompt: 10, SamplesNs: []uint64{1e9}}
	if one.StddevTs() != 0 || one.MemBandwidth() != 0 || one.Ceiling(1e9) != 0 {
		t.Errorf("single pp sample: std %v bw %v", one.StddevTs(), one.MemBandwidth())
	}
	var none Record
	if none.AvgTs() != 0 || none.AvgNs() != 0 || none.FLOPS() != 0 {
		t.Errorf("no samples should give zeros")
	}
}

func TestParseHelpers(t *testing.T) {
	for in, want := range map[uint64]string{6_738_415_616: "7B", 1_100_048_384: "1B", 494_032_768: "0.5B", 292_800: "?B"} {
		if got := sizeLabel(in); got != want {
			t.Errorf("sizeLabel(%d) = %q; want %q", in, got, want)
		}
	}
}
