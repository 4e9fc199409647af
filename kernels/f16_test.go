package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refF16ToF64 decodes binary16 bits from the IEEE definition.
func refF16ToF64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	man := float64(h & 0x3ff)
	switch exp {
	case 0x1f:
		if man != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	case 0:
		return sign * math.Ldexp(man, -24)
	}
	return sign * math.Ldexp(1024+man, exp-25)
}

func TestF16ToF32Exhaustive(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		got, want := F16ToF32(h), refF16ToF64(h)
		if math.IsNaN(want) {
			if !math.IsNaN(float64(got)) {
				t.Fatalf("F16ToF32(%#04x) = %v, want NaN", h, got)
			}
			if bits := math.Float32bits(got); bits>>13&0x3ff != uint32(h&0x3ff) || bits>>31 != uint32(h>>15) {
				t.Fatalf("F16ToF32(%#04x) = %#08x: payload or sign lost", h, bits)
			}
			continue
		}
		if float64(got) != want || math.Signbit(float64(got)) != (h&0x8000 != 0) {
			t.Fatalf("F16ToF32(%#04x) = %v, want %v", h, got, want)
		}
	}
}

func TestF32ToF16Exhaustive(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := F16ToF32(h)
		got := F32ToF16(f)
		if f != f {
			if want := h&0x8000 | 0x7e00; got != want {
				t.Fatalf("F32ToF16(NaN %#04x) = %#04x, want %#04x", h, got, want)
			}
			continue
		}
		if got != h {
			t.Fatalf("F32ToF16(F16ToF32(%#04x)) = %#04x", h, got)
		}
		// Every midpoint to the next larger magnitude rounds to the even one of the
		// two, and anything off the midpoint rounds to the nearer one.
		next := h + 1
		if h&0x7fff >= 0x7bff { // 65504 and above: the next step is Inf
			continue
		}
		a, b := refF16ToF64(h), refF16ToF64(next)
		mid := float32((a + b) / 2) // exact: needs 12 significant bits
		even := h
		if h&1 == 1 {
			even = next
		}
		if got := F32ToF16(mid); got != even {
			t.Fatalf("F32ToF16(midpoint %g of %#04x,%#04x) = %#04x, want %#04x", mid, h, next, got, even)
		}
		toward := float32(math.Inf(1))
		if mid < 0 {
			toward = float32(math.Inf(-1))
		}
		if got := F32ToF16(math.Nextafter32(mid, toward)); got != next {
			t.Fatalf("F32ToF16(just above midpoint of %#04x) = %#04x, want %#04x", h, got, next)
		}
		if got := F32ToF16(math.Nextafter32(mid, 0)); got != h {
			t.Fatalf("F32ToF16(just below midpoint of %#04x) = %#04x, want %#04x", h, got, h)
		}
	}
}

func TestF32ToF16Special(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   float32
		want uint16
	}{
		{"zero", 0, 0x0000},
		{"negative zero", float32(math.Copysign(0, -1)), 0x8000},
		{"one", 1, 0x3c00},
		{"minus two", -2, 0xc000},
		{"max", 65504, 0x7bff},
		{"rounds down to max", 65519.99, 0x7bff},
		{"rounds up to inf", 65520, 0x7c00},
		{"overflow", 1e10, 0x7c00},
		{"negative overflow", -1e10, 0xfc00},
		{"inf", float32(math.Inf(1)), 0x7c00},
		{"negative inf", float32(math.Inf(-1)), 0xfc00},
		{"nan", float32(math.NaN()), 0x7e00},
		{"negative nan", math.Float32frombits(0xffc00001), 0xfe00},
		{"smallest subnormal", 0x1p-24, 0x0001},
		{"half smallest subnormal ties to zero", 0x1p-25, 0x0000},
		{"above half smallest subnormal", 0x1.0002p-25, 0x0001},
		{"largest subnormal", 0x3ffp-24, 0x03ff},
		{"subnormal rounds up to normal", 0x3ff.8p-24, 0x0400},
		{"float32 subnormal", math.Float32frombits(1), 0x0000},
	} {
		if got := F32ToF16(tc.in); got != tc.want {
			t.Errorf("%s: F32ToF16(%g) = %#04x, want %#04x", tc.name, tc.in, got, tc.want)
		}
	}
}

// refF32ToF16 rounds through float64 arithmetic and a value→bits map.
func refF32ToF16(f float32, bits map[float64]uint16) uint16 {
	v := float64(f)
	a := math.Abs(v)
	if a >= 65520 {
		return F32ToF16(f) // overflow cases are covered by TestF32ToF16Special
	}
	e := math.Floor(math.Log2(a))
	quantum := math.Ldexp(1, max(int(e)-10, -24))
	r := math.RoundToEven(v/quantum) * quantum
	if r == 0 {
		if math.Signbit(v) {
			return 0x8000
		}
		return 0
	}
	return bits[r]
}

func TestF32ToF16Random(t *testing.T) {
	bits := map[float64]uint16{}
	for i := 0; i < 1<<16; i++ {
		if f := refF16ToF64(uint16(i)); !math.IsNaN(f) && f != 0 {
			bits[f] = uint16(i)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		// Uniform over float32 bit patterns whose magnitude is within binary16's
		// reach (exponents 2^-26 … 2^16).
		u := rng.Uint32()&0x807fffff | uint32(101+rng.IntN(42))<<23
		f := math.Float32frombits(u)
		if got, want := F32ToF16(f), refF32ToF16(f, bits); got != want {
			t.Fatalf("F32ToF16(%g [%#08x]) = %#04x, want %#04x", f, u, got, want)
		}
	}
}

func TestBF16Exhaustive(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := BF16ToF32(h)
		// Reference decode: sign, 8-bit exponent, 7-bit mantissa.
		exp := int(h>>7) & 0xff
		man := float64(h & 0x7f)
		var want float64
		switch exp {
		case 0xff:
			want = math.Inf(1)
			if man != 0 {
				want = math.NaN()
			}
		case 0:
			want = math.Ldexp(man, -133)
		default:
			want = math.Ldexp(128+man, exp-134)
		}
		if h&0x8000 != 0 {
			want = -want
		}
		if math.IsNaN(want) {
			if f == f {
				t.Fatalf("BF16ToF32(%#04x) = %v, want NaN", h, f)
			}
			if got := F32ToBF16(f); got != h|0x40 {
				t.Fatalf("F32ToBF16(NaN %#04x) = %#04x, want %#04x", h, got, h|0x40)
			}
			continue
		}
		if float64(f) != want {
			t.Fatalf("BF16ToF32(%#04x) = %v, want %v", h, f, want)
		}
		if got := F32ToBF16(f); got != h {
			t.Fatalf("F32ToBF16(BF16ToF32(%#04x)) = %#04x", h, got)
		}
		// Rounding of the discarded low half: below, at and above the midpoint.
		if h&0x7fff >= 0x7f7f { // max finite and beyond: skip the carry into Inf/NaN
			continue
		}
		u := uint32(h) << 16
		even := h
		if h&1 == 1 {
			even = h + 1
		}
		for _, c := range []struct {
			low  uint32
			want uint16
		}{{0x0001, h}, {0x7fff, h}, {0x8000, even}, {0x8001, h + 1}, {0xffff, h + 1}} {
			if got := F32ToBF16(math.Float32frombits(u | c.low)); got != c.want {
				t.Fatalf("F32ToBF16(%#08x) = %#04x, want %#04x", u|c.low, got, c.want)
			}
		}
	}
	if got := F32ToBF16(math.MaxFloat32); got != 0x7f80 {
		t.Errorf("F32ToBF16(MaxFloat32) = %#04x, want Inf 0x7f80", got)
	}
	if got := F32ToBF16(math.Float32frombits(0x7f800001)); got != 0x7fc0 {
		t.Errorf("F32ToBF16(signalling NaN) = %#04x, want quiet 0x7fc0", got)
	}
}
