package kernels

import (
	"encoding/binary"
	"math"
	"testing"
)

// fuzzFloats derives n floats from the fuzz bytes: little-endian int16s read
// cyclically (each pass perturbed by its index), scaled by amp; every
// thirteenth-byte-zero element is an exact zero so that sparse blocks occur.
func fuzzFloats(data []byte, n int, salt byte, amp float32) []float32 {
	x := make([]float32, n)
	if len(data) < 2 {
		return x
	}
	for i := range x {
		k := (2*i + int(salt)) % (len(data) - 1)
		v := int16(binary.LittleEndian.Uint16(data[k:]) ^ uint16(i*40503))
		if data[k]%13 == 0 {
			continue
		}
		x[i] = float32(v) / 32768 * amp
	}
	return x
}

// halfFields lists the byte offsets of the fp16 fields within one block of each
// quantized weight type.
var halfFields = map[DType][]int{
	Q4_0: {0}, Q4_1: {0, 2}, Q5_0: {0}, Q5_1: {0, 2}, Q8_0: {0},
	Q2_K: {80, 82}, Q3_K: {108}, Q4_K: {0, 2}, Q5_K: {0, 2}, Q6_K: {208},
	IQ4_NL: {0}, IQ4_XS: {0},
}

// rawWeights fills n elements of type t with the fuzz bytes as they come and
// then makes every float field finite and below 2 in magnitude (clearing the top
// exponent bit), so that any bit pattern of quants and packed scales is exercised
// without Inf or NaN.
func rawWeights(t DType, data []byte, n int) []byte {
	nbytes, _ := t.RowBytes(n)
	w := make([]byte, nbytes)
	if len(data) > 0 {
		for i := range w {
			w[i] = data[i%len(data)] ^ byte(i/len(data)*151)
		}
	}
	switch t {
	case F32:
		for i := 0; i < len(w); i += 4 {
			w[i+3] &^= 0x40
		}
	case F16, BF16:
		for i := 0; i < len(w); i += 2 {
			w[i+1] &^= 0x40
		}
	case MXFP4: // E8M0 exponent below 128: values up to 6
		for b := 0; b < len(w); b += 17 {
			w[b] &^= 0x80
		}
	default:
		bb := t.BlockBytes()
		for b := 0; b < len(w); b += bb {
			for _, off := range halfFields[t] {
				w[b+off+1] &^= 0x40
			}
		}
	}
	return w
}

// FuzzVecDot drives every weight type's VecDot with fuzz-derived weights (either
// quantized from fuzz floats or raw fuzz bytes made finite) and activations
// quantized from fuzz floats, and holds it to the float64 reference within the
// tolerance refDot documents.
func FuzzVecDot(f *testing.F) {
	for i := range weightTypes {
		f.Add(uint8(i), uint8(0), []byte("\x01\x80\x7f\x00\x33\xcc\x10\xef\x42"))
		f.Add(uint8(i), uint8(0x15), []byte{0xff, 0xff, 0x00, 0x80, 0x01, 0x7f})
		f.Add(uint8(i), uint8(0xa7), []byte{})
	}
	amps := [4]float32{1, 1e-3, 100, 3e-6}
	f.Fuzz(func(t *testing.T, ti, mode uint8, data []byte) {
		wt := weightTypes[int(ti)%len(weightTypes)]
		tr := TraitsOf(wt)
		blocks := 1 + int(mode>>2)%4
		n := blocks * max(tr.BlockSize, 32)
		if tr.BlockSize == 1 {
			n += int(mode>>4) % 8
		}
		xf := fuzzFloats(data, n, 1, amps[mode>>6])
		x := quantize(t, tr.VecDotType, xf)
		var w []byte
		if mode&1 == 0 {
			w = quantize(t, wt, fuzzFloats(data, n, 7, amps[(mode>>4)&3]))
		} else {
			w = rawWeights(wt, data, n)
		}
		got := tr.VecDot(n, w, x)
		ref, tol, extra := refDot(wt, w, x, n)
		if math.IsNaN(float64(got)) || math.Abs(float64(got)-ref) > tol+extra {
			t.Fatalf("%s n=%d: VecDot = %v, reference %v, tolerance %g+%g", wt, n, got, ref, tol, extra)
		}
	})
}
