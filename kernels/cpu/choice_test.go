package cpu

import (
	xcpu "golang.org/x/sys/cpu"
	"os"
	"strings"
	"testing"

	"llmbench/kernels"
)

// TestKernels checks the kernel table against the dispatch level (run it under each
// LLMBENCH_CPU value): one entry per type and phase (and per cache type for attention),
// the kernels of the level's paths, and the ceiling named in the reason when one is set.
func TestKernels(t *testing.T) {
	ks := (&CPU{}).Kernels()
	seen := map[string]kernels.KernelChoice{}
	for _, k := range ks {
		key := k.Type.String() + "/" + k.Phase
		if _, dup := seen[key]; dup {
			t.Fatalf("%s listed twice", key)
		}
		if k.Kernel == "" || k.Detail == "" || k.Why == "" {
			t.Fatalf("%s: empty field in %+v", key, k)
		}
		seen[key] = k
	}
	if len(seen) != 2*len(kernelTypes)+3 {
		t.Fatalf("%d entries, want decode and prompt for %d types and attention for 3 cache types", len(seen), len(kernelTypes))
	}
	want := map[string]map[string]string{ // level → type/phase → kernel
		"go": {"F16/decode": "reference", "Q4_0/prompt": "reference", "BF16/decode": "reference", "MXFP4/prompt": "reference", "Q5_K/decode": "reference",
			"F16/attention": "attn-row-go", "Q8_0/attention": "attn-row-go"},
		"avx2": {"F16/decode": "f16-x4", "F16/prompt": "f16-gemm", "Q4_K/decode": "tile-q4_k-x1m-avx2", "Q6_K/decode": "tile-q6_k-x1m-avx2", "BF16/prompt": "bf16-gemm",
			"Q4_0/decode": "tile-q4_0-x1m-avx2", "Q8_0/decode": "tile-q8_0-x1-avx2", "Q8_0/prompt": "tile-q8_0-x4-avx2", "Q4_0/prompt": "tile-q4_0-x4-avx2",
			"IQ4_NL/decode": "tile-iq4_nl-x1m-avx2", "IQ4_NL/prompt": "tile-iq4_nl-x4-avx2", "Q5_K/prompt": "tile-q5_k-x4-avx2", "Q5_K/decode": "tile-q5_k-x1m-avx2", "Q3_K/prompt": "tile-q3_k-x4-avx2", "Q3_K/decode": "tile-q3_k-x1m-avx2", "Q2_K/prompt": "tile-q2_k-x4-avx2", "Q2_K/decode": "tile-q2_k-x1m-avx2", "Q5_0/prompt": "tile-q5_0-x4-avx2", "Q4_1/decode": "tile-q4_1-x1-avx2", "IQ4_XS/prompt": "tile-iq4_xs-x4-avx2", "IQ4_XS/decode": "tile-iq4_xs-x1m-avx2", "MXFP4/prompt": "batch-mxfp4-avx2",
			"F16/attention": "attn-tile-f16", "F32/attention": "attn-tile-f32", "Q8_0/attention": "attn-tile-q8_0"},
		"avx512vnni": {"F16/decode": "f16-x4", "F16/prompt": "f16-gemm", "BF16/decode": "bf16-x4", "BF16/prompt": "bf16-gemm",
			"Q4_0/decode": "tile-q4_0-x1m", "Q8_0/decode": "tile-q8_0-x1", "Q6_K/prompt": "tile-q6_k-x4", "F32/decode": "dot-f32-avx2",
			"IQ4_NL/decode": "tile-iq4_nl-x1m", "IQ4_XS/decode": "tile-iq4_xs-x1", "MXFP4/decode": "tile-mxfp4-x1",
			"IQ4_NL/prompt": "tile-iq4_nl-x4", "IQ4_XS/prompt": "tile-iq4_xs-x4", "MXFP4/prompt": "tile-mxfp4-x4", "Q5_K/decode": "tile-q5_k-x1", "Q5_K/prompt": "tile-q5_k-x4", "Q3_K/decode": "tile-q3_k-x1", "Q3_K/prompt": "tile-q3_k-x4", "Q2_K/decode": "tile-q2_k-x1", "Q2_K/prompt": "tile-q2_k-x4", "Q5_0/decode": "tile-q5_0-x1", "Q5_1/prompt": "tile-q5_1-x4", "Q4_1/decode": "tile-q4_1-x1",
			"F16/attention": "attn-tile-f16"},
	}[level]
	if want == nil {
		t.Fatalf("level %q has no expectations", level)
	}
	if level == "avx2" && !x1Quarters { // not AMD, or LLMBENCH_DECODE_ORDER=adjacent: one tile at a time
		want["Q4_0/decode"], want["Q4_K/decode"], want["Q6_K/decode"] = "tile-q4_0-x1-avx2", "tile-q4_k-x1-avx2", "tile-q6_k-x1-avx2"
		want["Q5_K/decode"], want["Q3_K/decode"], want["Q2_K/decode"] = "tile-q5_k-x1-avx2", "tile-q3_k-x1-avx2", "tile-q2_k-x1-avx2"
		want["IQ4_NL/decode"], want["IQ4_XS/decode"] = "tile-iq4_nl-x1-avx2", "tile-iq4_xs-x1-avx2"
	}
	if level == "avx2" && quartersPF { // AMD Zen 5: Q8_0's four tiles with software prefetch
		want["Q8_0/decode"] = "tile-q8_0-x1m-avx2-pf"
	}
	if level == "avx2" && xcpu.X86.HasAVXVNNI && allowed(capAVXVNNI) { // prompts with AVX-VNNI
		for _, t := range []kernels.DType{kernels.Q4_0, kernels.Q8_0, kernels.Q4_K, kernels.Q6_K, kernels.Q3_K, kernels.Q4_1, kernels.Q5_0, kernels.Q5_1, kernels.IQ4_NL, kernels.IQ4_XS, kernels.Q5_K, kernels.Q2_K} {
			want[t.String()+"/prompt"] = "tile-" + strings.ToLower(t.String()) + "-x4-avxvnni"
		}
		for _, t := range []kernels.DType{kernels.Q4_0, kernels.Q8_0, kernels.Q4_K, kernels.Q6_K, kernels.IQ4_NL, kernels.IQ4_XS, kernels.Q4_1, kernels.Q5_0, kernels.Q5_1, kernels.Q5_K, kernels.Q3_K, kernels.Q2_K} { // and decode
			if k, ok := want[t.String()+"/decode"]; ok && (avxVNNI[t]&vnniX1m != 0 || !strings.Contains(k, "x1m")) { // Q2_K, Q3_K, Q5_K: one tile only
				want[t.String()+"/decode"] = strings.Replace(k, "-avx2", "-avxvnni", 1)
			}
		}
	}
	if level == "avx2" && halfKerns[kernels.F16].rows != nil { // AMD
		want["F16/decode"], want["BF16/decode"] = "f16-rows", "bf16-rows"
	}
	if level == "avx512vnni" && halfKerns[kernels.F16].rows != nil { // AMD
		want["F16/decode"], want["BF16/decode"] = "f16-rows", "bf16-rows"
		want["Q8_0/decode"], want["Q4_K/decode"], want["Q6_K/decode"] = "tile-q8_0-x1m", "tile-q4_k-x1m", "tile-q6_k-x1m"
		want["Q5_K/decode"], want["Q3_K/decode"], want["Q2_K/decode"] = "tile-q5_k-x1m", "tile-q3_k-x1m", "tile-q2_k-x1m"
		want["IQ4_XS/decode"], want["MXFP4/decode"], want["Q4_1/decode"] = "tile-iq4_xs-x1m", "tile-mxfp4-x1m", "tile-q4_1-x1m"
		want["Q5_0/decode"], want["Q5_1/decode"] = "tile-q5_0-x1m", "tile-q5_1-x1m"
	}
	if level == "avx512vnni" && xcpu.X86.HasAVX512BF16 {
		want["BF16/decode"], want["BF16/prompt"] = "bf16-dp-x4", "bf16-dp-gemm" // Intel: adjacent rows
		if halfKerns[kernels.F16].rows != nil {
			want["BF16/decode"] = "bf16-dp-rows"
		}
	}
	if level == "avx512vnni" && quartersPF { // AMD Zen 5: the quarters' kernels with software prefetch
		for _, key := range []string{"F16/decode", "BF16/decode", "Q4_0/decode", "IQ4_NL/decode", "Q8_0/decode", "Q2_K/decode", "Q3_K/decode", "Q4_K/decode", "Q5_K/decode", "Q6_K/decode", "IQ4_XS/decode", "MXFP4/decode", "Q4_1/decode", "Q5_0/decode", "Q5_1/decode"} {
			want[key] += "-pf"
		}
	}
	for key, k := range want {
		if got := seen[key].Kernel; got != k {
			t.Errorf("level %s: %s kernel %q, want %q", level, key, got, k)
		}
	}
	if level == "avx512vnni" && (halfKerns[kernels.F16].rows != nil) != x1Quarters {
		t.Errorf("F16 decode kernel %s beside one-token tiles in quarters %v", seen["F16/decode"].Kernel, x1Quarters)
	}
	if level == "avx512vnni" && orderEnv != "" {
		for _, k := range ks {
			if k.Phase == kernels.PhaseDecode && k.Type != kernels.F32 && k.Kernel != "reference" && !strings.Contains(k.Detail, EnvDecodeOrder+"="+orderEnv) {
				t.Errorf("%s decode: detail %q does not name %s=%s", k.Type, k.Detail, EnvDecodeOrder, orderEnv)
			}
		}
	}
	if v := os.Getenv(EnvLevel); v != "" {
		for _, k := range ks {
			if !strings.Contains(k.Why, EnvLevel+"="+v) {
				t.Fatalf("%s/%s: reason %q does not name %s=%s", k.Type, k.Phase, k.Why, EnvLevel, v)
			}
		}
	}
}

// TestImplName checks backend_impl's text for a model's weight types.
func TestImplName(t *testing.T) {
	c := New(1)
	defer c.Close()
	got := kernels.ImplName(c, []kernels.DType{kernels.Q4_K, kernels.Q6_K})
	if !strings.HasPrefix(got, c.Name()+" (Q4_K decode ") || !strings.Contains(got, "; Q6_K decode ") || !strings.Contains(got, ", prompt ") {
		t.Fatalf("ImplName = %q", got)
	}
	for _, k := range c.Kernels() {
		if k.Type == kernels.Q4_K && !strings.Contains(got, k.Phase+" "+k.Kernel) {
			t.Fatalf("ImplName = %q, lacks %s %s", got, k.Phase, k.Kernel)
		}
	}
	if got := kernels.ImplName(c, []kernels.DType{kernels.F16}); strings.Contains(got, kernels.PhaseAttention) {
		t.Fatalf("ImplName = %q: a weight type's kernels, not the cache's", got)
	}
	if got := kernels.ImplName(c, nil); got != c.Name() {
		t.Fatalf("ImplName without types = %q, want %q", got, c.Name())
	}
}

// TestParseOrder checks the values LLMBENCH_DECODE_ORDER takes and the one line a
// wrong one gets.
func TestParseOrder(t *testing.T) {
	for v, want := range map[string]string{"": "", "quarters": "quarters", " Adjacent ": "adjacent"} {
		if got, err := parseOrder(v); got != want || err != nil {
			t.Errorf("parseOrder(%q) = %q, %v; want %q", v, got, err, want)
		}
	}
	if _, err := parseOrder("rows"); err == nil || !strings.Contains(err.Error(), EnvDecodeOrder+`="rows"`) {
		t.Errorf("parseOrder(rows): %v", err)
	}
}
