package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
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

// TestAMXEncodings checks the byte-encoded AMX instructions of tile_amx_amd64.s: the
// probe runs each of them (LDTILECFG, TILEZERO, the TILELOADDs, TDPBSUD, TDPBSSD, the
// TILESTOREDs, TILERELEASE) and its int32 results must equal a Go matrix product, and,
// where GNU objdump is installed, the disassembly of the probe and of the kernels must
// name exactly the instructions the comments say they encode.
func TestAMXEncodings(t *testing.T) {
	needAMX(t)
	rng := rand.New(rand.NewPCG(3, 4))
	a := make([]byte, 704+512) // two A tiles: 16 rows of 32 signed bytes, 704 bytes apart
	b := make([]byte, 512+512) // two B tiles: 8 rows of 64 unsigned bytes
	for i := range a {
		a[i] = byte(rng.Uint32())
	}
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	var s amxScratch
	scr := unsafeTiles(&s)
	bq := scr[2048:3072] // the Q4 path's B tiles
	for i := range bq {
		bq[i] = byte(rng.Uint32())
	}
	cfg := newAMXConsts(0)
	kt := cfg[64:] // tmm6: random signed bytes here
	for i := range kt {
		kt[i] = byte(rng.Uint32())
	}
	for _, q4 := range []bool{false, true} {
		for i := range scr[:2048] { // garbage the result area: TILEZERO must clear it
			scr[i] = 0xA5
		}
		amxProbe(&a[0], &b[0], &scr[0], &cfg[0], q4)
		for k := range 2 {
			aa := a[704*k:]
			bs := [][]byte{b[512*k:]}
			if q4 {
				bs = append(bs, bq[512*k:])
			}
			for m := range 16 {
				for n := range 16 {
					var want int32
					for _, bb := range bs {
						for kk := range 32 {
							want += int32(int8(aa[32*m+kk])) * int32(bb[64*(kk/4)+4*n+kk%4])
						}
					}
					for kk := range 32 { // TDPBSSD: signed times signed
						want += int32(int8(aa[32*m+kk])) * int32(int8(kt[64*(kk/4)+4*n+kk%4]))
					}
					got := int32(binary.LittleEndian.Uint32(scr[1024*k+64*m+4*n:]))
					if got != want {
						t.Fatalf("q4=%v tile %d: C[%d][%d] = %d, want %d", q4, k, m, n, got, want)
					}
				}
			}
		}
	}
	checkObjdump(t)
}

// checkObjdump disassembles the test binary with GNU objdump (where installed): its AMX
// instructions must be the probe's sequence (as its comment lists them) and, in the
// kernels, only instructions of that sequence (none decoding as "(bad)" or as another
// instruction), with one LDTILECFG and one TILERELEASE per routine.
func checkObjdump(t *testing.T) {
	od, err := exec.LookPath("objdump")
	if err != nil {
		t.Log("objdump not found: encodings checked by their results only")
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(od, "-d", "--no-show-raw-insn", exe).Output()
	if err != nil {
		t.Logf("objdump failed (%v): encodings checked by their results only", err)
		return
	}
	probe := []string{"ldtilecfg (%rax)", "tileloadd 0x40(%rax,%rbx,1),%tmm6", "tilezero %tmm0", "tilezero %tmm1",
		"tileloadd (%rdi,%rdx,1),%tmm2", "tileloadd 0x2c0(%rdi,%rdx,1),%tmm3",
		"tileloadd (%rsi,%rbx,1),%tmm4", "tileloadd 0x200(%rsi,%rbx,1),%tmm5",
		"tdpbsud %tmm4,%tmm2,%tmm0", "tdpbsud %tmm5,%tmm3,%tmm1",
		"tileloadd 0x800(%rax,%rbx,1),%tmm4", "tileloadd 0xa00(%rax,%rbx,1),%tmm5",
		"tdpbsud %tmm4,%tmm2,%tmm0", "tdpbsud %tmm5,%tmm3,%tmm1",
		"tdpbssd %tmm6,%tmm2,%tmm0", "tdpbssd %tmm6,%tmm3,%tmm1",
		"tilestored %tmm0,(%rax,%rbx,1)", "tilestored %tmm1,0x400(%rax,%rbx,1)", "tilerelease"}
	known := map[string]bool{}
	for _, ins := range probe {
		known[ins] = true
	}
	var got []string
	count := map[string]int{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasSuffix(f[0], ":") {
			continue
		}
		ins := strings.Join(f[1:], " ")
		if strings.Contains(ins, "tile") || strings.Contains(ins, "tdp") {
			got = append(got, ins)
			count[ins]++
			if !known[ins] {
				t.Errorf("objdump reads %q, not an instruction the kernels mean to encode", ins)
			}
		}
	}
	routines := 1 + len(amxKernels)
	if count["ldtilecfg (%rax)"] != routines || count["tilerelease"] != routines {
		t.Errorf("objdump finds %d LDTILECFG and %d TILERELEASE, want %d each", count["ldtilecfg (%rax)"], count["tilerelease"], routines)
	}
	if !strings.Contains(strings.Join(got, "\n"), strings.Join(probe, "\n")) {
		t.Errorf("objdump does not find the probe's sequence:\n%s\nin the binary's AMX instructions:\n%s", strings.Join(probe, "\n"), strings.Join(got, "\n"))
	}
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
