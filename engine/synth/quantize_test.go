package synth

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"llmbench/engine/gguf"
	"llmbench/kernels"
)

// quantRefDir holds llama.cpp's quantizations of one small model
// (../shared/models/quant-reference/README.md).
const quantRefDir = "../../../shared/models/quant-reference"

// quantizeBytes quantizes f to the mix typ in memory and parses the result.
func quantizeBytes(t *testing.T, f *gguf.File, typ string) *gguf.File {
	t.Helper()
	var buf bytes.Buffer
	if err := Quantize(context.Background(), &buf, f, mustType(t, typ), nil); err != nil {
		t.Fatalf("%s: %v", typ, err)
	}
	q, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("%s: reading back: %v", typ, err)
	}
	return q
}

// TestQuantizeReferenceRows quantizes four rows of llama.cpp's F32 reference model
// (testdata/quantref, committed) to Q8_0 and Q4_0 and wants llama-quantize's bytes.
func TestQuantizeReferenceRows(t *testing.T) {
	raw, err := os.ReadFile("testdata/quantref/attn_k.f32")
	if err != nil {
		t.Fatal(err)
	}
	const rowLen = 256
	rows := uint64(len(raw) / 4 / rowLen)
	var src bytes.Buffer
	gw := gguf.NewWriter(&src)
	gw.AddKV("general.architecture", "llama")
	gw.AddKV("llama.block_count", uint32(2))
	gw.AddKV("llama.attention.head_count", uint32(4))
	gw.AddKV("llama.attention.head_count_kv", uint32(2))
	gw.AddTensor("blk.0.attn_norm.weight", kernels.F32, rowLen)
	gw.AddTensor("blk.0.attn_k.weight", kernels.F32, rowLen, rows)
	if err := gw.WriteHeader(); err != nil {
		t.Fatal(err)
	}
	norm := make([]byte, 4*rowLen)
	for i := 0; i < len(norm); i += 4 {
		copy(norm[i:], []byte{0, 0, 0x80, 0x3f}) // 1.0
	}
	for _, d := range []struct {
		name string
		b    []byte
	}{{"blk.0.attn_norm.weight", norm}, {"blk.0.attn_k.weight", raw}} {
		w, err := gw.BeginTensor(d.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(d.b)
	}
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(src.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ typ, file string }{{"Q8_0", "attn_k.q8_0"}, {"Q4_0", "attn_k.q4_0"}} {
		want, err := os.ReadFile(filepath.Join("testdata/quantref", c.file))
		if err != nil {
			t.Fatal(err)
		}
		q := quantizeBytes(t, f, c.typ)
		k, _ := q.Tensor("blk.0.attn_k.weight")
		if k.Type.String() != c.typ {
			t.Fatalf("%s: attn_k is %s", c.typ, k.Type)
		}
		if got := q.TensorData(k); !bytes.Equal(got, want) {
			t.Errorf("%s: blocks differ from llama-quantize's (first difference at byte %d of %d)", c.typ, firstDiff(got, want), len(want))
		}
		n, _ := q.Tensor("blk.0.attn_norm.weight")
		if n.Type != kernels.F32 || !bytes.Equal(q.TensorData(n), norm) {
			t.Errorf("%s: the norm was changed (%s)", c.typ, n.Type)
		}
		if ft, _ := q.Uint("general.file_type"); ft != uint64(mustType(t, c.typ).ID) {
			t.Errorf("%s: general.file_type = %d", c.typ, ft)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestQuantizeMatchesLlamaCpp quantizes llama.cpp's F32 reference model to each mix
// llama-quantize made from it and wants, tensor by tensor, the same type and the same
// bytes (Q4_0 and Q4_K_M include llama.cpp's per-tensor choices: output.weight in
// Q6_K, attn_v and ffn_down raised in Q4_K_M). It skips, saying so, where the shared
// reference folder is absent.
func TestQuantizeMatchesLlamaCpp(t *testing.T) {
	src, err := gguf.Open(filepath.Join(quantRefDir, "tiny-llama-F32.gguf"))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("llama.cpp reference files absent (%s): not checked", quantRefDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for _, typ := range []string{"Q8_0", "Q4_0", "Q4_K_M", "Q6_K"} {
		t.Run(typ, func(t *testing.T) {
			ref, err := gguf.Open(filepath.Join(quantRefDir, "tiny-llama-"+typ+".gguf"))
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Close()
			q := quantizeBytes(t, src, typ)
			if len(q.Tensors) != len(ref.Tensors) {
				t.Fatalf("%d tensors, llama.cpp wrote %d", len(q.Tensors), len(ref.Tensors))
			}
			for i := range q.Tensors {
				got := &q.Tensors[i]
				want, ok := ref.Tensor(got.Name)
				if !ok {
					t.Fatalf("%s: not in llama.cpp's file", got.Name)
				}
				if got.Type != want.Type {
					t.Errorf("%s: %s, llama.cpp chose %s", got.Name, got.Type, want.Type)
					continue
				}
				if a, b := q.TensorData(got), ref.TensorData(want); !bytes.Equal(a, b) {
					t.Errorf("%s (%s): bytes differ from llama.cpp's at %d of %d", got.Name, got.Type, firstDiff(a, b), len(b))
				}
			}
			for _, key := range []string{"general.file_type", "general.quantization_version"} {
				a, _ := q.Uint(key)
				b, _ := ref.Uint(key)
				if a != b {
					t.Errorf("%s = %d, llama.cpp wrote %d", key, a, b)
				}
			}
		})
	}
}

// TestQuantizeSynthetic quantizes a BF16 synthetic model: the types are those a
// synthetic model of the target mix has (the same rules), the metadata is kept, and the
// values stay within the target type's rounding of the BF16 ones.
func TestQuantizeSynthetic(t *testing.T) {
	bf, _ := writeSpec(t, Spec{Shape: mustShape(t, "llama-tiny"), Type: mustType(t, "BF16")})
	for _, typ := range []string{"Q8_0", "Q4_K_M", "F16"} {
		q := quantizeBytes(t, bf, typ)
		want := typeMap(Spec{Shape: mustShape(t, "llama-tiny"), Type: mustType(t, typ)})
		for i := range q.Tensors {
			got := &q.Tensors[i]
			if got.Type != want[got.Name] {
				t.Errorf("%s: %s is %s, a synthetic %s model has %s", typ, got.Name, got.Type, typ, want[got.Name])
			}
			s := &bf.Tensors[i]
			a := make([]float32, got.Elements())
			b := make([]float32, s.Elements())
			kernels.TraitsOf(got.Type).ToFloat(q.TensorData(got), a)
			kernels.TraitsOf(s.Type).ToFloat(bf.TensorData(s), b)
			var num, den float64
			for j := range a {
				num += float64(a[j]-b[j]) * float64(a[j]-b[j])
				den += float64(b[j]) * float64(b[j])
			}
			if rel := num / den; rel > 0.01 {
				t.Errorf("%s: %s: relative squared error %.4f", typ, got.Name, rel)
			}
		}
		for _, kv := range bf.KV {
			if kv.Key == "general.file_type" {
				continue
			}
			got, ok := q.Get(kv.Key)
			if !ok || gguf.FormatValue(got) != gguf.FormatValue(kv.Value) {
				t.Errorf("%s: key %s not copied", typ, kv.Key)
			}
		}
	}
}

// TestQuantizeRefusals: a quantized source, an unknown mix and an output that is the
// input are refused in one line, and no file is left behind.
func TestQuantizeRefusals(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "q8.gguf")
	if err := (Cache{}).WriteFile(context.Background(), src, Spec{Shape: mustShape(t, "llama-tiny"), Type: mustType(t, "Q8_0")}, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, typ, want string }{
		{filepath.Join(dir, "out.gguf"), "Q4_0", "requantizing is refused"},
		{filepath.Join(dir, "out.gguf"), "Q9_9", "unknown type"},
		{src, "Q4_0", "is the input"},
	} {
		err := QuantizeFile(context.Background(), src, c.out, c.typ, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s → %s: error %v, want one line with %q", filepath.Base(c.out), c.typ, err, c.want)
		}
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(names) != 1 {
		t.Errorf("files left: %v", names)
	}
}

// TestQuantizeLoadsInLlamaCpp quantizes a BF16 synthetic model to Q8_0, Q4_0 and Q4_K_M
// with QuantizeFile and loads each in llama.cpp through node-llama-cpp
// (testdata/llamacpp_check.mjs), which generates a few tokens. It needs node and an
// installed node-llama-cpp: LLMBENCH_NODE_LLAMA_CPP names the folder where
// `npm install node-llama-cpp` was run; it skips, saying so, otherwise.
func TestQuantizeLoadsInLlamaCpp(t *testing.T) {
	dir := os.Getenv("LLMBENCH_NODE_LLAMA_CPP")
	if dir == "" {
		t.Skip("LLMBENCH_NODE_LLAMA_CPP unset (a folder with node-llama-cpp installed): llama.cpp loading not checked")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node absent: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "node-llama-cpp")); err != nil {
		t.Skipf("node-llama-cpp not installed in %s: %v", dir, err)
	}
	tmp := t.TempDir()
	src := filepath.Join(tmp, "bf16.gguf")
	if err := (Cache{}).WriteFile(context.Background(), src, Spec{Shape: mustShape(t, "llama-tiny"), Type: mustType(t, "BF16")}, nil); err != nil {
		t.Fatal(err)
	}
	args := []string{mustAbs(t, "testdata/llamacpp_check.mjs")}
	for _, typ := range []string{"Q8_0", "Q4_0", "Q4_K_M"} {
		out := filepath.Join(tmp, typ+".gguf")
		if err := QuantizeFile(context.Background(), src, out, typ, nil); err != nil {
			t.Fatal(err)
		}
		args = append(args, out)
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("llama.cpp: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), `"ok":true`); n != 3 {
		t.Fatalf("llama.cpp loaded %d of 3 models:\n%s", n, out)
	}
	t.Logf("%s", out)
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
