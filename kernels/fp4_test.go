package kernels

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// e2m1 is the OCP MX E2M1 value of each 4-bit code (sign, 2 exponent bits, 1
// mantissa bit), written from the format's definition rather than ggml's table.
func e2m1(code uint8) float64 {
	mag := [8]float64{0, 0.5, 1, 1.5, 2, 3, 4, 6}[code&7]
	if code&8 != 0 {
		return -mag
	}
	return mag
}

func TestKnownIQ4_NL(t *testing.T) {
	// d = 0.5 (fp16 0x3800); qs[j] = j | (15-j)<<4: every level, both nibbles.
	levels := []float32{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	b := []byte{0x00, 0x38}
	for j := 0; j < 16; j++ {
		b = append(b, byte(j)|byte(15-j)<<4)
	}
	want := make([]float32, 32)
	for j := 0; j < 16; j++ {
		want[j] = levels[j] * 0.5
		want[j+16] = levels[15-j] * 0.5
	}
	checkDecoded(t, IQ4_NL, b, want)
}

func TestKnownMXFP4(t *testing.T) {
	// Every code in both nibbles, for exponents at the subnormal end (0, 1), around
	// the bias (126…128) and at the top (254, 255): value = 2^(e-127)·E2M1(code).
	for _, e := range []uint8{0, 1, 2, 126, 127, 128, 200, 254, 255} {
		b := []byte{e}
		for j := 0; j < 16; j++ {
			b = append(b, byte(j)|byte(15-j)<<4)
		}
		want := make([]float32, 32)
		for j := 0; j < 16; j++ {
			want[j] = float32(math.Ldexp(e2m1(uint8(j)), int(e)-127))
			want[j+16] = float32(math.Ldexp(e2m1(uint8(15-j)), int(e)-127))
		}
		checkDecoded(t, MXFP4, b, want)
		if e >= 254 { // 6·2^127 is past float32's range (+Inf)
			continue
		}
		// The quantizer recovers e (amax = 6·2^(e-127)) and every value (code 8, -0,
		// comes back as code 0, +0).
		back := dequantize(MXFP4, quantize(t, MXFP4, want), 32)
		for j := range want {
			if back[j] != want[j] {
				t.Fatalf("e=%d: element %d quantizes to %g, want %g", e, j, back[j], want[j])
			}
		}
	}
	// Ties go to the first code in table order (ggml's best_index_mxfp4): 5 lies
	// between 4 (code 6) and 6 (code 7), -5 between -4 (code 14) and -6 (code 15);
	// 6 sets e = 127; 7 (over the top) clips to 6.
	x := make([]float32, 32)
	x[0], x[1], x[2], x[3] = 5, -5, 6, 7
	got := quantize(t, MXFP4, x)
	if got[0] != 127 || got[1] != 6 || got[2] != 14 || got[3] != 7 || got[4] != 7 {
		t.Errorf("MXFP4 ties/clip: e=%d codes % x, want e=127 codes 06 0e 07 07", got[0], got[1:5])
	}
}

func TestKnownIQ4_XS(t *testing.T) {
	// d = 0.5; sub-block ib has ls = 32+ib-4 (scales -4…3, zero included): the low
	// 4 bits in scales_l, the high 2 in scales_h. qs = j | (15-j)<<4 in every
	// sub-block.
	levels := []float32{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	b := make([]byte, 136)
	b[0], b[1] = 0x00, 0x38
	var h uint16
	want := make([]float32, 256)
	for ib := 0; ib < 8; ib++ {
		ls := 28 + ib
		b[4+ib/2] |= byte(ls&15) << (4 * (ib % 2))
		h |= uint16(ls>>4) << (2 * ib)
		for j := 0; j < 16; j++ {
			b[8+16*ib+j] = byte(j) | byte(15-j)<<4
			want[32*ib+j] = levels[j] * 0.5 * float32(ls-32)
			want[32*ib+j+16] = levels[15-j] * 0.5 * float32(ls-32)
		}
	}
	b[2], b[3] = byte(h), byte(h>>8)
	checkDecoded(t, IQ4_XS, b, want)
}

// randLUTRow returns nb random blocks of a table type (IQ4_NL or MXFP4): random
// nibbles and a scale field of moderate size.
func randLUTRow(rng *rand.Rand, t DType, nb int) []byte {
	bb := t.BlockBytes()
	b := make([]byte, nb*bb)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	for i := 0; i < nb; i++ {
		switch t {
		case IQ4_NL, IQ4_XS:
			putHalf(b[i*bb:], F32ToF16(float32(rng.NormFloat64()*0.01)))
		case MXFP4:
			b[i*bb] = byte(118 + rng.IntN(8))
		}
	}
	return b
}

// TestLUTVecDot holds the IQ4_NL, IQ4_XS and MXFP4 dot products to
// Σ dequant(w)·dequant(x) in float64, with refDot's rounding tolerance counted per
// 32-element scale (IQ4_XS adds one float32 product per sub-block).
func TestLUTVecDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 2))
	for _, ty := range []DType{IQ4_NL, IQ4_XS, MXFP4} {
		tr := TraitsOf(ty)
		for _, n := range []int{256, 512, 4096} {
			w := randLUTRow(rng, ty, n/tr.BlockSize)
			x := quantize(t, tr.VecDotType, gaussian(rng, n, 1))
			ref, tol, _ := refDot(ty, w, x, n)
			tol *= float64(tr.BlockSize / 32)
			if got := float64(tr.VecDot(n, w, x)); math.Abs(got-ref) > tol {
				t.Errorf("%s n=%d: VecDot = %g, reference %g (tolerance %g)", ty, n, got, ref, tol)
			}
		}
	}
}

// quantRefDir holds llama.cpp's quantizations of one small model
// (../shared/models/quant-reference/README.md).
const quantRefDir = "../../shared/models/quant-reference"

// ggufTensor is one tensor of a GGUF file: its name, ggml type, element count and
// data.
type ggufTensor struct {
	name string
	typ  DType
	n    int
	data []byte
}

// readGGUF reads the tensors of a GGUF (v2/v3) file: just enough of the format for
// these tests, so that package kernels' tests need no other package of the module.
func readGGUF(path string) (map[string]ggufTensor, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pos := 0
	fail := errors.New("truncated or malformed GGUF")
	take := func(n int) []byte {
		if n < 0 || pos+n > len(raw) {
			panic(fail)
		}
		b := raw[pos : pos+n]
		pos += n
		return b
	}
	u32 := func() uint32 { return binary.LittleEndian.Uint32(take(4)) }
	u64 := func() uint64 { return binary.LittleEndian.Uint64(take(8)) }
	str := func() string { return string(take(int(u64()))) }
	fixed := map[uint32]int{0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
	var skip func(vt uint32)
	skip = func(vt uint32) {
		switch {
		case fixed[vt] > 0:
			take(fixed[vt])
		case vt == 8:
			str()
		case vt == 9:
			et, cnt := u32(), u64()
			for range cnt {
				skip(et)
			}
		default:
			panic(fmt.Errorf("GGUF value type %d", vt))
		}
	}
	out := map[string]ggufTensor{}
	err = func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%s: %v", path, r)
			}
		}()
		if string(take(4)) != "GGUF" {
			return fmt.Errorf("%s: not a GGUF file", path)
		}
		if v := u32(); v < 2 {
			return fmt.Errorf("%s: GGUF version %d", path, v)
		}
		nt, nkv := u64(), u64()
		align := 32
		for range nkv {
			key, vt := str(), u32()
			if key == "general.alignment" && vt == 4 {
				align = int(u32())
				continue
			}
			skip(vt)
		}
		type info struct {
			name string
			typ  DType
			n    int
			off  int
		}
		infos := make([]info, nt)
		for i := range infos {
			in := info{name: str(), n: 1}
			for range u32() {
				in.n *= int(u64())
			}
			in.typ, in.off = DType(u32()), int(u64())
			infos[i] = in
		}
		base := (pos + align - 1) / align * align
		for _, in := range infos {
			size, err := in.typ.RowBytes(in.n)
			if err != nil {
				return fmt.Errorf("%s: tensor %s: %v", path, in.name, err)
			}
			pos = base + in.off
			out[in.name] = ggufTensor{name: in.name, typ: in.typ, n: in.n, data: take(size)}
		}
		return nil
	}()
	return out, err
}

// lutScale returns the scale of 32-element block i of a table type, its level
// table, and the relative rounding of the block's stored fp16 scale field (half an
// fp16 ulp, which for a subnormal field is 2⁻²⁵ absolute); 0 for MXFP4, whose scale
// is exact.
func lutScale(t DType, data []byte, i int) (d float32, lut *[16]int8, rel float64) {
	var h float32
	switch t {
	case MXFP4:
		return e8m0Half(data[17*i]), &kvaluesMXFP4, 0
	case IQ4_XS:
		b := (*[136]byte)(data[136*(i/8):])
		h = half(b[0:])
		d = h * float32(iq4XSScale(b, i%8)-32)
	default:
		h = half(data[18*i:])
		d = h
	}
	if h != 0 {
		rel = max(0x1p-11, 0x1p-25/math.Abs(float64(h)))
	}
	return d, &kvaluesIQ4NL, rel
}

// lutReference is one of llama.cpp's quantized reference files and its block type.
type lutReference struct {
	file string
	typ  DType
}

// eachLUTReference runs check as a subtest per reference file of the IQ4_NL, IQ4_XS
// and MXFP4 types, with the F32 source's tensors and the file's: on the committed
// slices (lutSliceDir, always) and on the full files (skipped, saying so, where the
// reference folder is absent).
func eachLUTReference(t *testing.T, check func(t *testing.T, c lutReference, src, q map[string]ggufTensor)) {
	for _, dir := range []struct{ name, path string }{{"slice", lutSliceDir}, {"full", quantRefDir}} {
		t.Run(dir.name, func(t *testing.T) {
			src, err := readGGUF(filepath.Join(dir.path, "tiny-llama-F32.gguf"))
			if errors.Is(err, os.ErrNotExist) && dir.path == quantRefDir {
				t.Skipf("llama.cpp reference files absent (%s): not checked", quantRefDir)
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []lutReference{{"tiny-llama-IQ4_NL.gguf", IQ4_NL}, {"tiny-llama-IQ4_XS.gguf", IQ4_XS}, {"tiny-llama-MXFP4-ffn.gguf", MXFP4}} {
				t.Run(c.typ.String(), func(t *testing.T) {
					q, err := readGGUF(filepath.Join(dir.path, c.file))
					if err != nil {
						t.Fatal(err)
					}
					check(t, c, src, q)
				})
			}
		})
	}
}

// TestLUTTypesReadLlamaCpp dequantizes every IQ4_NL, IQ4_XS and MXFP4 tensor of llama.cpp's
// reference files and checks, value by value, that each is scale·level for a level
// of the type's table, and that it is the level nearest to the F32 source's value
// divided by the scale (ggml's quantizers end by picking the nearest level for the
// block's final scale), so the error is at most half the gap between neighbouring
// levels, or the distance to the end of the table for a clipped value. IQ4_NL's and
// IQ4_XS's levels are chosen for the float32 super-block scale before it is stored
// as fp16, so there the nearest level is judged up to that rounding (large where the
// fp16 field is subnormal, as many IQ4_XS super-block scales of these N(0, 0.02)
// weights are). A block whose
// scale is zero (IQ4_XS sub-block scale ls = 32) must decode to zeros.
func TestLUTTypesReadLlamaCpp(t *testing.T) {
	eachLUTReference(t, func(t *testing.T, c lutReference, src, q map[string]ggufTensor) {
		checked, values, notNearest, zeroScale := 0, 0, 0, 0
		var worst float64 // largest |y - x| / scale
		for name, tq := range q {
			if tq.typ != c.typ {
				continue
			}
			tf, ok := src[name]
			if !ok || tf.typ != F32 || tf.n != tq.n {
				t.Fatalf("%s: no F32 tensor of %d elements in the source", name, tq.n)
			}
			checked++
			y := dequantize(c.typ, tq.data, tq.n)
			for i := range y {
				x := getF32(tf.data[4*i:])
				d, lut, rel := lutScale(c.typ, tq.data, i/32)
				if d == 0 {
					if y[i] != 0 {
						t.Fatalf("%s[%d] = %g under a zero scale", name, i, y[i])
					}
					zeroScale++
					continue
				}
				// The exact grid: y/d is one of the table's levels.
				lv := y[i] / d
				best, onGrid := math.Inf(1), false
				for _, l := range lut {
					onGrid = onGrid || lv == float32(l)
					best = min(best, math.Abs(float64(x)/float64(d)-float64(l)))
				}
				if !onGrid {
					t.Fatalf("%s[%d] = %g: %g × scale %g is not a level", name, i, y[i], lv, d)
				}
				// Nearest level to x/d, allowing float32 rounding of x/d and, for
				// IQ4_NL and IQ4_XS, the fp16 rounding of the scale after ggml chose
				// the levels with the float32 one (rel, on both distances).
				xd := float64(x) / float64(d)
				e := math.Abs(xd - float64(lv))
				worst = max(worst, e)
				slack := 1e-4*(1+math.Abs(float64(lv))) + 2*math.Abs(xd)*rel
				if e > best+slack {
					notNearest++
					if notNearest <= 5 {
						t.Errorf("%s[%d]: source %g, dequantized %g (level %g, scale %g): level %.4g away, nearest %.4g", name, i, x, y[i], lv, d, e, best)
					}
				}
				values++
			}
		}
		if checked == 0 {
			t.Fatalf("%s holds no %s tensor", c.file, c.typ)
		}
		if notNearest > 0 {
			t.Errorf("%d of %d values not at the nearest level", notNearest, values)
		}
		t.Logf("%s: %d tensors, %d values checked on the grid and at the nearest level (%d under a zero scale); largest |y-x|/scale %.3f", c.typ, checked, values, zeroScale, worst)
	})
}

// TestQuantizeLlamaCpp quantizes each IQ4_NL, IQ4_XS and MXFP4 tensor's F32 source
// with our FromFloat and requires llama.cpp's bytes exactly (the README of the
// reference folder: these are deterministic without an importance matrix).
func TestQuantizeLlamaCpp(t *testing.T) {
	eachLUTReference(t, func(t *testing.T, c lutReference, src, q map[string]ggufTensor) {
		bb := c.typ.BlockBytes()
		checked := 0
		for name, tq := range q {
			if tq.typ != c.typ {
				continue
			}
			x := make([]float32, tq.n)
			for i := range x {
				x[i] = getF32(src[name].data[4*i:])
			}
			got := quantize(t, c.typ, x)
			for i := range got {
				if got[i] != tq.data[i] {
					blk := i / bb
					t.Fatalf("%s: byte %d (block %d) = %#x, llama.cpp %#x; block: ours % x, llama.cpp % x", name, i, blk, got[i], tq.data[i], got[bb*blk:bb*blk+bb], tq.data[bb*blk:bb*blk+bb])
				}
			}
			checked++
		}
		if checked == 0 {
			t.Fatalf("no %s tensor in %s", c.typ, c.file)
		}
		t.Logf("%d %s tensors byte-identical to llama.cpp's", checked, c.typ)
	})
}

// TestBestIndexInt8 pins ggml's best_index_int8 rule on IQ4_NL's levels: nearest
// level, the upper one on an exact tie, clamped at both ends.
func TestBestIndexInt8(t *testing.T) {
	for _, c := range []struct {
		x    float32
		want int
	}{{-200, 0}, {-127, 0}, {-115.5, 1}, {-115.6, 0}, {7, 9}, {6.9, 8}, {0, 8}, {-4, 8}, {-4.5, 8}, {-4.6, 7}, {101, 15}, {100.9, 14}, {113, 15}, {500, 15}} {
		if got := bestIndexInt8(&kvaluesIQ4NL, c.x); got != c.want {
			t.Errorf("bestIndexInt8(%g) = %d, want %d", c.x, got, c.want)
		}
	}
}
