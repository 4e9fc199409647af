package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"llmbench/kernels"
)

// amxTypes are the weight types with AMX kernels.
var amxTypes = []kernels.DType{kernels.Q4_0, kernels.Q8_0, kernels.Q4_K}

// needAMX makes the AMX kernels callable (asking the OS for the tile state, as a run
// with LLMBENCH_CPU=avx512 never does) or skips t, saying why.
func needAMX(t testing.TB) {
	t.Helper()
	if err := amxEnable(); err != nil {
		t.Skipf("AMX kernels unavailable: %v (start: %s)", err, amxWhyOff)
	}
}

// setAMX switches MatMul's AMX path on or off for the rest of t.
func setAMX(t testing.TB, on bool) {
	t.Helper()
	if on {
		needAMX(t)
	}
	old := amxOn
	amxOn = on
	t.Cleanup(func() { amxOn = old })
}

// amxModes returns the AMX settings a MatMul test should run under: off, and on where
// the CPU and OS allow it.
func amxModes() []bool {
	if amxEnable() != nil {
		return []bool{false}
	}
	return []bool{false, true}
}

// checkAMXTile compares an AMX kernel with the pure-Go twin bit for bit: nb units of
// rows weight rows against ntok tokens (the rest of the sixteen zero).
func checkAMXTile(t *testing.T, typ kernels.DType, seed uint64, nb, rows, ntok int) {
	t.Helper()
	needAMX(t)
	rng := rand.New(rand.NewPCG(seed, 12))
	f, tile, _ := tileCase(rng, typ, nb, rows, 0)
	cols := nb * f.unit
	vt := kernels.TraitsOf(typ).VecDotType
	vtr := kernels.TraitsOf(vt)
	xRow := cols / vtr.BlockSize * vtr.BlockBytes
	xq := make([]byte, ntok*xRow)
	x := make([]float32, cols)
	for i := range ntok {
		sc := math.Ldexp(1, rng.IntN(12)-6)
		for e := range x {
			x[e] = float32(rng.NormFloat64() * sc)
		}
		vtr.FromFloat(x, xq[i*xRow:(i+1)*xRow])
	}
	act := make([]byte, cols/f.pk.bs*amxToks*(f.pk.bs+12))
	prepActs(act, xq, xRow, ntok, 0, amxToks, vt, f.pk.bs, cols, f.pk.k)
	want := make([]float32, amxToks*tileRows)
	tileGo(f, nb, tile, act, amxToks, amxToks, want)
	var s amxScratch
	tileX16(f, nb, tile, act, &s, nil, 0)
	for i, v := range s.out {
		if math.Float32bits(v) != math.Float32bits(want[i]) {
			t.Fatalf("%s nb=%d rows=%d ntok=%d seed=%d: token %d row %d = %g, twin %g", typ, nb, rows, ntok, seed, i/16, i%16, v, want[i])
		}
	}
}

func TestAMXTileKernels(t *testing.T) {
	for _, typ := range amxTypes {
		for i, sh := range [][3]int{{8, 16, 16}, {3, 5, 9}, {1, 16, 1}, {33, 16, 16}} {
			checkAMXTile(t, typ, uint64(i), sh[0], sh[1], sh[2])
		}
	}
}

func FuzzAMXTile(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint16(8), uint8(16), uint8(16))
	f.Add(uint64(2), uint8(1), uint16(1), uint8(3), uint8(5))
	f.Fuzz(func(t *testing.T, seed uint64, typ uint8, nb uint16, rows, ntok uint8) {
		checkAMXTile(t, amxTypes[int(typ)%len(amxTypes)], seed, int(nb)%40+1, int(rows)%16+1, int(ntok)%16+1)
	})
}

// TestMatMulAMXSameAsVNNI checks that MatMul gives the same bits with the AMX path on
// and off, for batch sizes around the group sizes.
func TestMatMulAMXSameAsVNNI(t *testing.T) {
	needAMX(t)
	for _, typ := range amxTypes {
		rng := rand.New(rand.NewPCG(9, uint64(typ)))
		rows, cols := 70, 1024
		w := &kernels.Matrix{Type: typ, Rows: rows, Cols: cols}
		for range rows {
			b, _ := randRow(rng, typ, cols, 0.3)
			w.Data = append(w.Data, b...)
		}
		const n = 37
		x := make([]float32, n*cols)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		res := map[bool][]float32{}
		for _, on := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/amx=%v", typ, on), func(t *testing.T) {
				setAMX(t, on)
				c := New(2)
				defer c.Close()
				res[on] = make([]float32, n*rows)
				c.MatMul(res[on], w, x, n)
			})
		}
		for i := range res[true] {
			if math.Float32bits(res[true][i]) != math.Float32bits(res[false][i]) {
				t.Fatalf("%s: token %d row %d = %g with AMX, %g without", typ, i/rows, i%rows, res[true][i], res[false][i])
			}
		}
	}
}

// TestAMXManyGoroutines runs AMX products on more goroutines than threads, with the
// runtime preempting them, collecting garbage and moving them between threads, and
// checks every result: each kernel call configures and releases its own tiles, so no
// call can see another's tile state.
func TestAMXManyGoroutines(t *testing.T) {
	setAMX(t, true)
	rng := rand.New(rand.NewPCG(21, 22))
	rows, cols, n := 48, 512, 24
	w := &kernels.Matrix{Type: kernels.Q8_0, Rows: rows, Cols: cols}
	for range rows {
		b, _ := randRow(rng, kernels.Q8_0, cols, 0.3)
		w.Data = append(w.Data, b...)
	}
	x := make([]float32, n*cols)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	want := make([]float32, n*rows)
	c := New(1)
	c.MatMul(want, w, x, n)
	c.Close()
	iters := 200
	if testing.Short() {
		iters = 40
	}
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := New(1 + g%3)
			defer c.Close()
			dst := make([]float32, n*rows)
			for it := range iters {
				clear(dst)
				c.MatMul(dst, w, x, n)
				if it%16 == g%16 {
					runtime.GC()
				}
				runtime.Gosched()
				for i := range dst {
					if math.Float32bits(dst[i]) != math.Float32bits(want[i]) {
						errs <- fmt.Sprintf("goroutine %d iteration %d: out[%d] = %g, want %g", g, it, i, dst[i], want[i])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestAMXGate checks the LLMBENCH_CPU values that switch AMX off.
func TestAMXGate(t *testing.T) {
	for v, want := range map[string]bool{"": true, "amx": true, "go": false, "avx2": false, "avx512": false} {
		t.Setenv("LLMBENCH_CPU", v)
		if ok, why := amxGate(); ok != want || ok != (why == "") {
			t.Errorf("LLMBENCH_CPU=%q: amxGate() = %v, %q; want %v", v, ok, why, want)
		}
	}
	name, why := amxPromptKernel(kernels.Q4_0)
	if why == "" || (name != "") != amxOn {
		t.Errorf("amxPromptKernel(Q4_0) = %q, %q with amxOn=%v", name, why, amxOn)
	}
	t.Logf("AMX prompt kernel: %q %q", name, why)
}

// unsafeTiles returns s's aligned tile buffers as a slice.
func unsafeTiles(s *amxScratch) []byte { return unsafe.Slice(s.tiles(), 3072) }
