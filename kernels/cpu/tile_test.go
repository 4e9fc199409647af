package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"llmbench/kernels"
)

// tileCase returns a tile of the given type packed from nb blocks of sixteen random
// weight rows (rows past rows are zero), and four tokens' activation blocks prepared
// as MatMul prepares them (tokens past ntok are zero).
func tileCase(rng *rand.Rand, typ kernels.DType, nb, rows, ntok int) (f *tileFmt, tile, act []byte) {
	f = tileFmts[typ]
	cols := nb * f.unit
	tile = randTile(rng, typ, nb, rows)
	vt := kernels.TraitsOf(typ).VecDotType
	vtr := kernels.TraitsOf(vt)
	xRow := cols / vtr.BlockSize * vtr.BlockBytes
	xq := make([]byte, ntok*xRow)
	x := make([]float32, cols)
	for t := range ntok {
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		vtr.FromFloat(x, xq[t*xRow:(t+1)*xRow])
	}
	act = make([]byte, cols/f.pk.bs*(4*f.pk.bs+48))
	prepActs(act, xq, xRow, ntok, 0, gemmToks, vt, f.pk.bs, cols, f.pk.k)
	return f, tile, act
}

// randTile returns a tile of typ packed from nb blocks of sixteen random weight rows
// (rows past rows are zero).
func randTile(rng *rand.Rand, typ kernels.DType, nb, rows int) []byte {
	f := tileFmts[typ]
	cols := nb * f.unit
	w := &kernels.Matrix{Type: typ, Rows: rows, Cols: cols}
	for range rows {
		b, _ := randRow(rng, typ, cols, float32(math.Ldexp(1, rng.IntN(8)-4)))
		w.Data = append(w.Data, b...)
	}
	tile := make([]byte, nb*f.unitBytes)
	packTile(tile, w, f, 0)
	return tile
}

// checkTile compares the tile kernels (four tokens, and each token alone) with their
// pure-Go twin bit for bit.
func checkTile(t *testing.T, typ kernels.DType, seed uint64, nb, rows, ntok int) {
	t.Helper()
	if tileX4 == nil || tileFmts[typ].x4 == nil {
		t.Skipf("no %s tile kernels on this CPU (%s)", typ, level)
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	f, tile, act := tileCase(rng, typ, nb, rows, ntok)
	want := make([]float32, 64)
	tileGo(f, nb, tile, act, gemmToks, 4, want)
	var got [64]float32
	tileX4(f, nb, tile, act, &got)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s nb=%d rows=%d seed=%d: four-token out[%d] = %g, twin %g", typ, nb, rows, seed, i, got[i], want[i])
		}
	}
	// The four-tile kernels (with and without prefetch, whether or not this CPU's decode
	// takes them): four different tiles, stride bytes apart with garbage between, the
	// first the tile above.
	if ks, ok := x1mKernels[typ]; ok {
		stride := len(tile) + 3*f.unitBytes + 64
		four := make([]byte, 3*stride+len(tile))
		for i := range four {
			four[i] = 0xA5
		}
		wants := make([][]float32, 4)
		for k := range 4 {
			tk := tile
			if k > 0 {
				tk = randTile(rng, typ, nb, rows)
			}
			copy(four[k*stride:], tk)
			wants[k] = make([]float32, 64)
			tileGo(f, nb, tk, act, gemmToks, 4, wants[k])
		}
		for v, k := range ks {
			if k == nil {
				continue
			}
			fm := *f
			fm.x1m = k
			var m [64]float32
			for tok := range 4 {
				tileX1m(&fm, false, nb, four, stride, act, tok, &m)
				for i := range m {
					if w := wants[i/16][16*tok+i%16]; math.Float32bits(m[i]) != math.Float32bits(w) {
						t.Fatalf("%s nb=%d seed=%d four-tile kernel %d: token %d tile %d out[%d] = %g, twin %g", typ, nb, seed, v, tok, i/16, i%16, m[i], w)
					}
				}
			}
		}
	}
	x1s := []*tileFmt{f}
	for _, k := range x1Both[typ] { // with and without software prefetch, whichever runs (VNNI)
		if k == nil {
			continue
		}
		fx := *f
		fx.x1 = k
		x1s = append(x1s, &fx)
	}
	for v, fx := range x1s {
		for tok := range 4 {
			var one [16]float32
			tileX1(fx, nb, tile, act, tok, &one)
			for r := range one {
				if math.Float32bits(one[r]) != math.Float32bits(want[16*tok+r]) {
					t.Fatalf("%s nb=%d seed=%d one-token kernel %d: token %d alone out[%d] = %g, twin %g", typ, nb, seed, v, tok, r, one[r], want[16*tok+r])
				}
			}
		}
	}
}

var tileTypes = []kernels.DType{kernels.Q4_0, kernels.Q4_1, kernels.Q5_0, kernels.Q5_1, kernels.Q8_0, kernels.Q2_K, kernels.Q3_K, kernels.Q4_K, kernels.Q5_K, kernels.Q6_K, kernels.IQ4_NL, kernels.IQ4_XS, kernels.MXFP4}

func TestTileKernels(t *testing.T) {
	for _, typ := range tileTypes {
		t.Run(typ.String(), func(t *testing.T) {
			for i, sh := range [][3]int{{8, 16, 4}, {3, 5, 3}, {1, 16, 1}, {9, 16, 2}} {
				checkTile(t, typ, uint64(i), sh[0], sh[1], sh[2])
			}
		})
	}
}

func FuzzFastTile(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint16(8), uint8(16), uint8(4))
	f.Add(uint64(2), uint8(3), uint16(1), uint8(3), uint8(1))
	f.Fuzz(func(t *testing.T, seed uint64, typ uint8, nb uint16, rows, ntok uint8) {
		checkTile(t, tileTypes[int(typ)%len(tileTypes)], seed, int(nb)%40+1, int(rows)%16+1, int(ntok)%4+1)
	})
}

// TestMatMulBatchInvariant checks that every token's row of a product is bit-identical
// whatever the number of tokens multiplied with it (1…70), the thread count and the
// kernel (VNNI, and AMX where the CPU and OS allow it), so a sequence decodes to the
// same logits alone or batched with others.
func TestMatMulBatchInvariant(t *testing.T) {
	const maxN = 70
	for _, typ := range dotTypes {
		t.Run(typ.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(typ)))
			rows, cols := 301, 512 // 18 tiles and a part; 32-row parts of the six-token F16/BF16 kernel at 1 and 2 threads
			w := &kernels.Matrix{Type: typ, Rows: rows, Cols: cols}
			for range rows {
				b, _ := randRow(rng, typ, cols, 0.5)
				w.Data = append(w.Data, b...)
			}
			x := make([]float32, maxN*cols)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			want := make([]float32, maxN*rows)
			for i := range maxN { // each token alone, one thread
				c := New(1)
				c.MatMul(want[i*rows:(i+1)*rows], w, x[i*cols:(i+1)*cols], 1)
				c.Close()
			}
			defer func(on bool) { amxOn = on }(amxOn)
			for _, amx := range amxModes() { // AMX takes n ≥ amxMinToks where it runs
				amxOn = amx
				for _, threads := range []int{1, 2, 3} {
					c := New(threads)
					dst := make([]float32, maxN*rows)
					for n := 1; n <= maxN; n++ {
						c.MatMul(dst, w, x, n)
						for i := range n * rows {
							if math.Float32bits(dst[i]) != math.Float32bits(want[i]) {
								c.Close()
								t.Fatalf("amx=%v threads=%d n=%d: token %d row %d = %g, alone %g", amx, threads, n, i/rows, i%rows, dst[i], want[i])
							}
						}
					}
					c.Close()
				}
			}
		})
	}
}

// BenchmarkTilePack times making the tiled copy of one 2048×2048 matrix (once per
// matrix and backend, on first use).
func BenchmarkTilePack(b *testing.B) {
	c := New(2)
	defer c.Close()
	for _, typ := range tileTypes {
		w := benchMatrix(typ, 2048, 2048)
		b.Run(fmt.Sprint(typ), func(b *testing.B) {
			b.SetBytes(int64(len(w.Data)))
			for b.Loop() {
				clear(c.tiles)
				c.tilesOf(w, tileFmts[typ])
			}
		})
	}
}

// BenchmarkTileKernel times each tile kernel of this CPU's level alone, on one core,
// over four 16-row tiles of 2048 columns that stay in the L2 cache: the compute cost
// of a format, free of the memory system's noise (BenchmarkDecode measures the two
// together). "GB/s" is tile bytes consumed per second; a decode kernel (x1, x1m)
// slower than the machine's read bandwidth per core is compute-bound there.
func BenchmarkTileKernel(b *testing.B) {
	const cols = 2048
	for _, typ := range tileTypes {
		f := tileFmts[typ]
		if f.x1 == nil {
			continue
		}
		nu := cols / f.unit
		one, act := func() ([]byte, []byte) {
			_, t, a := tileCase(rand.New(rand.NewPCG(1, uint64(typ))), typ, nu, 16, 4)
			return t, a
		}()
		tiles := make([]byte, 0, 4*len(one))
		for range 4 {
			tiles = append(tiles, one...)
		}
		var out [64]float32
		run := func(name string, bytes int, k func()) {
			b.Run(typ.String()+"/"+name, func(b *testing.B) {
				for b.Loop() {
					k()
				}
				b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
		run("x1", len(tiles), func() {
			for k := range 4 {
				f.x1(nu, &tiles[k*len(one)], &act[0], 0, (*[16]float32)(out[:16]))
			}
		})
		if f.x1m != nil {
			run("x1m", len(tiles), func() { f.x1m(nu, &tiles[0], len(one), &act[0], 0, &out) })
		}
		if f.x4 != nil {
			run("x4", len(tiles), func() {
				for k := range 4 {
					f.x4(nu, &tiles[k*len(one)], &act[0], &out)
				}
			})
		}
	}
}

// TestTiledCopyFollowsData checks that a matrix whose Data is replaced is tiled again
// rather than multiplied from the stale copy, and that Close drops the copies.
func TestTiledCopyFollowsData(t *testing.T) {
	c := New(2)
	for _, typ := range tileTypes {
		a, b := benchMatrix(typ, 40, 512), benchMatrix(typ, 40, 512)
		for i := range b.Data {
			b.Data[i] ^= 0x5a // other weights (scales included)
		}
		x := make([]float32, 3*512)
		for i := range x {
			x[i] = float32(i%9) - 4
		}
		want := make([]float32, 3*40)
		c.MatMul(want, b, x, 3)
		got := make([]float32, 3*40)
		w := &kernels.Matrix{Type: typ, Rows: 40, Cols: 512, Data: a.Data}
		c.MatMul(got, w, x, 3)
		w.Data = b.Data
		c.MatMul(got, w, x, 3)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !math.IsNaN(float64(want[i])) {
				t.Fatalf("%s: out[%d] = %g after the weights changed, want %g", typ, i, got[i], want[i])
			}
		}
	}
	if tileX4 != nil && len(c.tiles) == 0 {
		t.Fatal("no tiled copies kept")
	}
	c.Close()
	if c.tiles != nil {
		t.Fatal("Close kept the tiled copies")
	}
}

// TestTileMXFP4Scales checks the MXFP4 tile kernels against their twin on raw blocks
// whose E8M0 scales include the subnormal factors (e 0 and 1, 2^-128 and 2^-127) and
// the largest that keep these sums finite.
func TestTileMXFP4Scales(t *testing.T) {
	if tileX4 == nil || tileFmts[kernels.MXFP4].x4 == nil {
		t.Skipf("no tile kernels on this CPU (%s)", level)
	}
	rng := rand.New(rand.NewPCG(3, 17))
	f := tileFmts[kernels.MXFP4]
	const nb = 4 // units of 64 elements
	cols := nb * f.unit
	w := &kernels.Matrix{Type: kernels.MXFP4, Rows: tileRows, Cols: cols}
	w.Data = make([]byte, tileRows*cols/32*17)
	for i := range w.Data {
		w.Data[i] = byte(rng.Uint32())
	}
	es := []byte{0, 1, 2, 3, 64, 127, 128, 200} // one per row (twice), so no row's sum hides a small one
	for b := 0; b < len(w.Data)/17; b++ {
		w.Data[17*b] = es[b/(cols/32)%len(es)]
	}
	tile := make([]byte, nb*f.unitBytes)
	packTile(tile, w, f, 0)
	xq := make([]byte, 4*cols/32*34)
	x := make([]float32, 4*cols)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	kernels.TraitsOf(kernels.Q8_0).FromFloat(x, xq)
	act := make([]byte, cols/32*(4*32+48))
	prepActs(act, xq, cols/32*34, 4, 0, gemmToks, kernels.Q8_0, 32, cols, f.pk.k)
	want := make([]float32, 64)
	tileGo(f, nb, tile, act, gemmToks, 4, want)
	var got [64]float32
	tileX4(f, nb, tile, act, &got)
	for tok := range 4 {
		var one [16]float32
		tileX1(f, nb, tile, act, tok, &one)
		for r := range 16 {
			i := 16*tok + r
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.Float32bits(one[r]) != math.Float32bits(want[i]) {
				t.Fatalf("token %d row %d: four-token %g, one-token %g, twin %g", tok, r, got[i], one[r], want[i])
			}
		}
	}
}

// TestSumInt8 checks prepActs' eight-bytes-at-a-time sum against the byte-by-byte one,
// at the extremes (every byte −128 or 127, up to its longest 248 bytes) and on random
// blocks of 8 to 248 bytes.
func TestSumInt8(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 2000 {
		b := make([]byte, 8*(1+rng.IntN(31)))
		if i < 2 {
			b = make([]byte, 248)
		}
		switch i {
		case 0:
			for k := range b {
				b[k] = 0x80
			}
		case 1:
			for k := range b {
				b[k] = 0x7f
			}
		default:
			for k := range b {
				b[k] = byte(rng.Uint32())
			}
		}
		var want int32
		for _, v := range b {
			want += int32(int8(v))
		}
		if got := sumInt8(b); got != want {
			t.Fatalf("%d bytes %x: sumInt8 %d, byte by byte %d", len(b), b, got, want)
		}
	}
}

// TestDecodeFourTiles checks one-token products through the four-tile kernels (one tile
// from each quarter of a band as on AMD, and adjacent tiles as on Intel, both on every
// CPU) against the four-token kernel: a matrix of 40 tiles and a partial one, every
// thread count's bands, each output bit for bit that of a two-token product of the same
// activations.
func TestDecodeFourTiles(t *testing.T) {
	defer func(v bool) { x1Quarters = v }(x1Quarters)
	for _, quarters := range []bool{true, false} {
		x1Quarters = quarters
		decodeFourTiles(t)
	}
}

func decodeFourTiles(t *testing.T) {
	t.Helper()
	for typ := range x1mKernels {
		rng := rand.New(rand.NewPCG(8, uint64(typ)))
		rows, cols := 16*40+5, 512
		w := randMatrix(rng, typ, rows, cols)
		x := make([]float32, 2*cols)
		for i := range cols {
			x[i] = float32(rng.NormFloat64())
		}
		copy(x[cols:], x[:cols])
		for _, threads := range []int{1, 2, 3} {
			c := New(threads)
			one, two := make([]float32, rows), make([]float32, 2*rows)
			c.MatMul(one, w, x, 1)
			c.MatMul(two, w, x, 2)
			c.Close()
			for i := range two {
				if math.Float32bits(one[i%rows]) != math.Float32bits(two[i]) {
					t.Fatalf("%s threads=%d quarters=%v: row %d alone %g, in a batch of two %g", typ, threads, x1Quarters, i%rows, one[i%rows], two[i])
				}
			}
		}
	}
}

// TestTilePackMatchesDequant checks every tile format's packer against the type's
// reference dequantization: element e of row r of a packed tile, ws·(q−k) + wm, is the
// weight kernels.Traits.ToFloat gives (to float32 rounding of the two products).
func TestTilePackMatchesDequant(t *testing.T) {
	for _, typ := range tileTypes {
		t.Run(typ.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, uint64(typ)))
			f := tileFmts[typ]
			const nu, rows = 3, 13
			cols := nu * f.unit
			w := randMatrix(rng, typ, rows, cols)
			tile := make([]byte, nu*f.unitBytes)
			for i := range tile {
				tile[i] = 0xA5 // the packer writes every byte of the lanes it fills
			}
			packTile(tile, w, f, 0)
			want := make([]float32, cols)
			rb := len(w.Data) / rows
			bs := f.pk.bs
			for r := range rows {
				kernels.TraitsOf(typ).ToFloat(w.Data[r*rb:(r+1)*rb], want)
				for e := range cols {
					o := tile[e/f.unit*f.unitBytes:]
					b := e % f.unit / bs
					got := float64(f.ws(o, r, b)) * float64(int32(f.quant(o, r, e%f.unit))-f.pk.k)
					if f.wm != nil {
						got += float64(f.wm(o, r, b))
					}
					if d := math.Abs(got - float64(want[e])); d > 1e-6*math.Abs(float64(want[e]))+1e-30 {
						t.Fatalf("row %d element %d: tile gives %g, dequantized %g", r, e, got, want[e])
					}
				}
			}
		})
	}
}
