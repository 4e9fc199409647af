package cpu

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"llmbench/kernels"
)

// benchMatrix returns a rows×cols matrix of typ with random weights.
func benchMatrix(typ kernels.DType, rows, cols int) *kernels.Matrix {
	rng := rand.New(rand.NewPCG(1, 2))
	row, _ := randRow(rng, typ, cols, 0.1)
	w := &kernels.Matrix{Type: typ, Rows: rows, Cols: cols, Data: make([]byte, 0, rows*len(row))}
	for range rows {
		w.Data = append(w.Data, row...) // the same row: only bandwidth matters here
	}
	// Perturb so rows differ a little.
	for i := 0; i < len(w.Data); i += 97 {
		w.Data[i] ^= 1
	}
	return w
}

// benchActs returns n activations of small mixed values.
func benchActs(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%13) - 6
	}
	return x
}

var benchShapes = [][2]int{{2048, 2048}, {5632, 2048}, {2048, 5632}, {32000, 2048}}

// BenchmarkMatVec times one-token products (decode); bytes are the weight bytes read.
func BenchmarkMatVec(b *testing.B) {
	for _, threads := range []int{1, 2} {
		c := New(threads)
		for _, typ := range dotTypes {
			for _, sh := range benchShapes {
				w := benchMatrix(typ, sh[0], sh[1])
				x := make([]float32, sh[1])
				for i := range x {
					x[i] = float32(i%7) - 3
				}
				dst := make([]float32, sh[0])
				b.Run(fmt.Sprintf("%s/%dx%d/t%d", typ, sh[0], sh[1], threads), func(b *testing.B) {
					b.SetBytes(int64(len(w.Data)))
					b.ReportAllocs()
					for b.Loop() {
						c.MatMul(dst, w, x, 1)
					}
				})
			}
		}
		c.Close()
	}
}

// BenchmarkMatMul times 512-token products (prompt processing); bytes are the weight
// bytes, so MB/s/512 is the weight rate and ns/op the time per product.
func BenchmarkMatMul(b *testing.B) {
	const n = 512
	c := New(2)
	defer c.Close()
	for _, typ := range dotTypes {
		for _, sh := range benchShapes[:3] {
			w := benchMatrix(typ, sh[0], sh[1])
			x := benchActs(n * sh[1])
			dst := make([]float32, n*sh[0])
			b.Run(fmt.Sprintf("%s/%dx%d/n%d", typ, sh[0], sh[1], n), func(b *testing.B) {
				b.SetBytes(int64(len(w.Data)))
				for b.Loop() {
					c.MatMul(dst, w, x, n)
				}
				b.ReportMetric(float64(2*n*sh[0]*sh[1])*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkDot times one row's dot product in cache, per type.
func BenchmarkDot(b *testing.B) {
	const n = 4096
	for _, typ := range dotTypes {
		tr := kernels.TraitsOf(typ)
		rng := rand.New(rand.NewPCG(1, 2))
		w, _ := randRow(rng, typ, n, 1)
		x, _ := randRow(rng, tr.VecDotType, n, 1)
		for _, impl := range []string{"ref", "fast"} {
			dot := tr.VecDot
			if impl == "fast" {
				if dot = fastDots[typ]; dot == nil {
					continue
				}
			}
			b.Run(typ.String()+"/"+impl, func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					dot(n, w, x)
				}
			})
		}
	}
}

// BenchmarkMatVecDRAM cycles one-token products over copies of a 5632×2048 matrix in
// each weight type that together take dramBenchBytes, as decode streams a model's
// weights from memory: MB/s is the weight bytes read per second. The tiled copies are
// made before the timer starts (as the engine makes them at load), so the first
// products do not pay for them.
func BenchmarkMatVecDRAM(b *testing.B) {
	for _, typ := range dotTypes {
		ws := dramCopies(benchMatrix(typ, 5632, 2048))
		x := benchActs(2048)
		dst := make([]float32, 5632)
		for _, threads := range []int{1, 2} {
			c := New(threads)
			for _, w := range ws {
				c.Prepare(w)
			}
			b.Run(fmt.Sprintf("%s/t%d", typ, threads), func(b *testing.B) {
				b.SetBytes(int64(len(ws[0].Data)))
				i := 0
				for b.Loop() {
					c.MatMul(dst, ws[i%len(ws)], x, 1)
					i++
				}
			})
			c.Close()
		}
	}
}

// BenchmarkMatMulBatch times decode steps of n sequences (n tokens against one matrix,
// threads 2) on llama-1b's matrix shapes, cycling over copies that together take
// dramBenchBytes, as a decode step streams a model's weights from memory. Bytes are
// the weight bytes, so a step that reads each weight once keeps MB/s up as n grows:
// compare ns/op with n=1 (a 16-token step should cost far less than 16 one-token steps).
func BenchmarkMatMulBatch(b *testing.B) {
	c := New(2)
	defer c.Close()
	for _, typ := range dotTypes {
		for _, sh := range [][2]int{{2048, 2048}, {5632, 2048}} {
			w0 := benchMatrix(typ, sh[0], sh[1])
			ws := dramCopies(w0)
			for _, n := range []int{1, 2, 4, 8, 16, 32, 64} {
				x := benchActs(n * sh[1])
				dst := make([]float32, n*sh[0])
				b.Run(fmt.Sprintf("%s/%dx%d/n%d", typ, sh[0], sh[1], n), func(b *testing.B) {
					b.SetBytes(int64(len(w0.Data)))
					for _, w := range ws {
						c.MatMul(dst, w, x, n) // the first product makes the tiled copy
					}
					i := 0
					for b.Loop() {
						x[0]++ // new activations each step, as in decoding
						c.MatMul(dst, ws[i%len(ws)], x, n)
						i++
					}
				})
			}
			c.dropTiles()
		}
	}
}

// dramBenchBytes is the weight bytes the decode-shaped benchmarks cycle through per
// case, as a decode step reads a model's weights from memory once per token. Less
// leaves part of the cycle in the last-level cache: on AMD EPYC (Zen 5, 2 vCPUs)
// BenchmarkDecode's Q8_0 5632×2048 one-token product read 62–76 GB/s cycling through
// 64 MB, 52–57 through 256 MB (the size used before) and 46–51 through 1 GiB, where the
// read-bandwidth probe gave 65–69 and a llama-1b Q8_0 decode step's products 50–54.
const dramBenchBytes = 1 << 30

// dramCopies returns copies of w0 that together take about dramBenchBytes (at least
// two), in one allocation.
func dramCopies(w0 *kernels.Matrix) []*kernels.Matrix {
	size := len(w0.Data)
	n := max(2, dramBenchBytes/size)
	arena := make([]byte, n*size)
	ws := make([]*kernels.Matrix, n)
	for i := range ws {
		d := arena[i*size : (i+1)*size : (i+1)*size]
		copy(d, w0.Data)
		ws[i] = &kernels.Matrix{Type: w0.Type, Rows: w0.Rows, Cols: w0.Cols, Data: d}
	}
	return ws
}

// decodeTypes are the weight types BenchmarkDecode covers.
var decodeTypes = []kernels.DType{kernels.F32, kernels.F16, kernels.BF16, kernels.Q8_0, kernels.Q4_0, kernels.Q4_1, kernels.Q5_0, kernels.Q5_1,
	kernels.Q2_K, kernels.Q3_K, kernels.Q4_K, kernels.Q5_K, kernels.Q6_K, kernels.IQ4_NL, kernels.IQ4_XS, kernels.MXFP4}

// BenchmarkDecode times decode-shaped products, one to four tokens against llama-1b's
// matrix shapes with every core, cycling over copies of the matrix that together take
// dramBenchBytes, and reports the rate at which weight bytes are read ("GB/s"): a
// type whose rate falls well below the others' (or below the machine's read
// bandwidth) takes a slow path.
func BenchmarkDecode(b *testing.B) {
	c := New(0)
	defer c.Close()
	for _, typ := range decodeTypes {
		for _, sh := range benchShapes[:3] {
			w0 := benchMatrix(typ, sh[0], sh[1])
			size := len(w0.Data)
			ws := dramCopies(w0)
			for n := 1; n <= 4; n++ {
				x := benchActs(n * sh[1])
				dst := make([]float32, n*sh[0])
				b.Run(fmt.Sprintf("%s/%dx%d/n%d/t%d", typ, sh[0], sh[1], n, c.Threads()), func(b *testing.B) {
					for _, w := range ws {
						c.MatMul(dst, w, x, n) // tiled copies are made on first use
					}
					i := 0
					for b.Loop() {
						x[0]++ // new activations each step, as in decoding
						c.MatMul(dst, ws[i%len(ws)], x, n)
						i++
					}
					b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
				})
			}
			c.dropTiles() // frees the tiled copies (clearing the map left them mapped)
		}
	}
}

// BenchmarkDecodeShare reports the share of the machine's read bandwidth that one-token
// products reach: each round cycles llama-1b's FFN matrix (5632×2048) over copies that
// take dramBenchBytes with every core, then reads a buffer of as many bytes once in
// every read pattern (cpu.ReadPatterns, as telemetry's ceiling probe does), so the
// two are timed at the same moments of a host whose read rate moves. "probe-GB/s" is
// the fastest pattern's rate over the rounds (the ceiling), "share-%" the products'
// rate over it; "fast-share-%" the same over the third of the rounds in which that
// pattern read fastest, where a kernel that cannot keep up with memory falls behind
// (2-core AMD EPYC Zen 5: Q4_0's products held near 61 GB/s while the probe read 77).
func BenchmarkDecodeShare(b *testing.B) {
	c := New(0)
	defer c.Close()
	threads := c.Threads()
	buf := AllocStreamed(dramBenchBytes)
	defer FreeStreamed(buf)
	for i := range buf {
		buf[i] = byte(i)
	}
	sums := make([]uint64, threads)
	pats := ReadPatterns()
	for _, typ := range []kernels.DType{kernels.F16, kernels.BF16, kernels.Q8_0, kernels.Q4_0, kernels.Q4_K, kernels.Q6_K} {
		w0 := benchMatrix(typ, 5632, 2048)
		ws := dramCopies(w0)
		for _, w := range ws {
			c.Prepare(w)
		}
		x := benchActs(2048)
		dst := make([]float32, 5632)
		bytes := float64(len(ws) * len(w0.Data))
		b.Run(fmt.Sprintf("%s/t%d", typ, threads), func(b *testing.B) {
			var kern []time.Duration
			probes := make([][]time.Duration, len(pats))
			for b.Loop() {
				t0 := time.Now()
				for _, w := range ws {
					x[0]++ // new activations each product, as in decoding
					c.MatMul(dst, w, x, 1)
				}
				kern = append(kern, time.Since(t0))
				for k, p := range pats {
					t0 := time.Now()
					c.pool.Run(threads, func(part, w int) {
						sums[w] += ReadSum(buf[part*len(buf)/threads:(part+1)*len(buf)/threads], p)
					})
					probes[k] = append(probes[k], time.Since(t0))
				}
			}
			// The ceiling: the pattern with the least time over the rounds.
			best := slices.MinFunc(probes, func(a, b []time.Duration) int { return cmp.Compare(sumDurations(a), sumDurations(b)) })
			// share is the products' rate over the probe's, in per cent, over rounds rs.
			share := func(rs []int) float64 {
				var k, p time.Duration
				for _, i := range rs {
					k, p = k+kern[i], p+best[i]
				}
				return 100 * bytes / k.Seconds() / (float64(len(buf)) / p.Seconds())
			}
			rounds := make([]int, len(kern))
			for i := range rounds {
				rounds[i] = i
			}
			b.ReportMetric(float64(len(kern))*bytes/sumDurations(kern).Seconds()/1e9, "GB/s")
			b.ReportMetric(float64(len(kern)*len(buf))/sumDurations(best).Seconds()/1e9, "probe-GB/s")
			b.ReportMetric(share(rounds), "share-%")
			slices.SortFunc(rounds, func(i, j int) int { return cmp.Compare(best[i], best[j]) })
			b.ReportMetric(share(rounds[:max(1, len(rounds)/3)]), "fast-share-%")
		})
		c.dropTiles()
	}
	runtime.KeepAlive(sums)
}

func sumDurations(d []time.Duration) (s time.Duration) {
	for _, v := range d {
		s += v
	}
	return s
}
