package synth

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"llmbench/engine/gguf"
	"llmbench/kernels"
)

// quantizationVersion is the value llama.cpp writes as general.quantization_version.
const quantizationVersion = 2

// keepNames are name fragments of weight tensors llama-quantize never converts
// (llama-quant.cpp): norms, expert gates, small 2-D weights of other architectures,
// positional embeddings and token types, T5's relative position bias.
var keepNames = []string{
	"_norm.weight", "ffn_gate_inp.weight", "altup", "laurel", "per_layer_model_proj",
	"ssm_conv1d.weight", "shortconv.conv.weight", "time_mix_first.weight",
	"time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight",
	"time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight",
	"time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight",
	"time_mix_g1.weight", "time_mix_g2.weight", "time_mix_decay_w1.weight",
	"time_mix_decay_w2.weight", "time_mix_lerp_fused.weight", "attn_rel_b.weight",
}

// converted reports whether llama-quantize converts the tensor: a weight of two or more
// dimensions that is not on its keep list.
func converted(t *gguf.TensorInfo) bool {
	if !strings.HasSuffix(t.Name, "weight") || len(t.Shape) < 2 {
		return false
	}
	if t.Name == "position_embd.weight" || t.Name == "token_types.weight" {
		return false
	}
	for _, k := range keepNames {
		if strings.Contains(t.Name, k) {
			return false
		}
	}
	return true
}

// roleOf returns the category and block index of a weight tensor from its name
// (roleOther for tensors the mix rules do not single out, -1 outside the blocks).
func roleOf(name string) (tensorRole, int) {
	switch name {
	case "token_embd.weight":
		return roleTokenEmbd, -1
	case "output.weight":
		return roleOutput, -1
	}
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return roleOther, -1
	}
	num, part, ok := strings.Cut(rest, ".")
	layer, err := strconv.Atoi(num)
	if !ok || err != nil {
		return roleOther, -1
	}
	roles := []struct {
		part string
		role tensorRole
	}{
		{"attn_q.weight", roleAttnQ}, {"attn_k.weight", roleAttnK}, {"attn_v.weight", roleAttnV},
		{"attn_output.weight", roleAttnOutput}, {"ffn_gate.weight", roleFFNGate},
		{"ffn_up.weight", roleFFNUp}, {"ffn_down.weight", roleFFNDown},
	}
	for _, r := range roles {
		if part == r.part {
			return r.role, layer
		}
	}
	return roleOther, layer
}

// QuantizeTypes returns the type each tensor of src gets when it is quantized to the mix
// ft as llama-quantize does without an importance matrix or overrides: weights of two
// or more dimensions take the mix's type, raised or lowered by the same per-tensor rules
// synthetic models use; every other tensor keeps its type. It refuses a source tensor to
// be converted that is not F32, F16 or BF16 (llama-quantize's "requantizing is
// disabled"), and a mix kernels cannot write.
func QuantizeTypes(src *gguf.File, ft FileType) ([]kernels.DType, error) {
	arch := src.Architecture()
	nl, _ := src.Uint(arch + ".block_count")
	heads, _ := src.Uint(arch + ".attention.head_count")
	headsKV, ok := src.Uint(arch + ".attention.head_count_kv")
	if !ok || headsKV == 0 {
		headsKV = heads
	}
	_, hasOutput := src.Tensor("output.weight")
	sh := Shape{Layers: int(nl), Heads: int(max(heads, 1)), HeadsKV: int(max(headsKV, 1)), Tied: !hasOutput}
	out := make([]kernels.DType, len(src.Tensors))
	for i := range src.Tensors {
		t := &src.Tensors[i]
		out[i] = t.Type
		if !converted(t) {
			continue
		}
		switch t.Type {
		case kernels.F32, kernels.F16, kernels.BF16:
		default:
			return nil, fmt.Errorf("quantize: tensor %s is %s: want an F32, F16 or BF16 source (requantizing is refused, as llama-quantize does)", t.Name, t.Type)
		}
		role, layer := roleOf(t.Name)
		rowLen := int(t.Shape[0])
		var nt kernels.DType
		switch {
		case !ft.quantized():
			nt = ft.Base
		case role == roleOther:
			nt = fallbackType(ft.Base, rowLen) // a weight the mix rules do not name
		default:
			nt = tensorType(ft, sh, role, layer, rowLen)
		}
		if quantizer(nt) == nil {
			return nil, fmt.Errorf("quantize: no quantizer for %s (tensor %s) in package kernels", nt, t.Name)
		}
		out[i] = nt
	}
	return out, nil
}

// Quantize writes the model src to w with its weights converted to the mix ft (see
// QuantizeTypes): the metadata is copied with general.file_type set to the mix and
// general.quantization_version to llama.cpp's, the tensors keep their order, names and
// shapes. Blocks are made by package kernels' quantizers, which follow ggml's reference
// quantizers, so a Q8_0 or Q4_0 tensor has the bytes llama-quantize writes. Work is
// spread over all cores; progress is as for Write.
func Quantize(ctx context.Context, w io.Writer, src *gguf.File, ft FileType, progress func(done, total int64)) error {
	types, err := QuantizeTypes(src, ft)
	if err != nil {
		return err
	}
	gw := gguf.NewWriter(w)
	for _, kv := range src.KV {
		switch kv.Key {
		case "general.file_type", "general.quantization_version":
			continue
		}
		gw.AddKV(kv.Key, kv.Value)
	}
	gw.AddKV("general.file_type", ft.ID)
	gw.AddKV("general.quantization_version", uint32(quantizationVersion))
	ts := make([]TensorSpec, len(src.Tensors))
	for i, t := range src.Tensors {
		ts[i] = TensorSpec{Name: t.Name, Type: types[i], Shape: t.Shape}
		gw.AddTensor(t.Name, types[i], t.Shape...)
	}
	if err := gw.WriteHeader(); err != nil {
		return fmt.Errorf("quantize: %w", err)
	}
	return writeData(ctx, gw, ts, "quantize "+ft.Name, func(t, row int, f []float32) error {
		ti := &src.Tensors[t]
		tr := kernels.TraitsOf(ti.Type)
		if tr == nil || tr.ToFloat == nil {
			return fmt.Errorf("cannot read %s", ti.Type)
		}
		rb, err := ti.Type.RowBytes(int(ti.Shape[0]))
		if err != nil {
			return err
		}
		data := src.TensorData(ti)
		nrows := len(f) / int(ti.Shape[0])
		tr.ToFloat(data[row*rb:(row+nrows)*rb], f)
		return nil
	}, progress)
}

// QuantizeFile quantizes the GGUF model at srcPath to the mix named typ ("Q4_K_M") and
// writes it to dstPath through a temporary file renamed into place, so dstPath never
// holds a partial model.
func QuantizeFile(ctx context.Context, srcPath, dstPath, typ string, progress func(done, total int64)) error {
	ft, err := ParseFileType(typ)
	if err != nil {
		return err
	}
	if a, e1 := filepath.Abs(srcPath); e1 == nil {
		if b, e2 := filepath.Abs(dstPath); e2 == nil && a == b {
			return fmt.Errorf("quantize: the output %s is the input", dstPath)
		}
	}
	src, err := gguf.Open(srcPath)
	if err != nil {
		return err
	}
	defer src.Close()
	if _, err := QuantizeTypes(src, ft); err != nil {
		return err // refused before a file is made
	}
	return atomicWrite(dstPath, "quantize", func(w io.Writer) error { return Quantize(ctx, w, src, ft, progress) })
}
