package cpu

import (
	"encoding/binary"
	"math"
	"sync/atomic"
	"unsafe"

	"llmbench/kernels"
)

// Tiled matrix products. Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K,
// IQ4_NL, IQ4_XS and MXFP4 weights (the last three: tile_lut.go) are multiplied from a
// tiled copy that Prepare makes when the engine loads the model (MatMul makes it on a
// matrix's first use when nobody prepared it) and keeps until Close: sixteen rows at a
// time, each row's quants interleaved four at a time (lane r of a 512-bit
// word holds row r), so one VPDPBUSD multiplies sixteen rows with four bytes of one
// token. A tile takes as many bytes as the rows it holds (scales keep their stored
// precision; K-quant scales stay 6- or 8-bit integers next to their super-block's fp16
// factors), so streaming it from memory costs what streaming the weights did. Quants
// are unsigned: the weights are stored as q+k and each token's block sum starts at
// −k·Σy (see prepActs).
//
// Every output is computed in one order whatever the number of tokens, the thread
// count or the kernel that runs it (one token or four): per block of bs elements,
//
//	acc = fma(float32(start + Σ q·y), ws·d, acc); acc = fma(wm, m, acc)
//
// with ws the row's block scale (d·sc for K-quants), wm its min factor (−dmin·m, Q4_K
// only), d and m the token's block scale and min sum, over the blocks in turn and with
// no final reduction. So a decode step of one sequence and a batched step of many give
// bit-identical rows, and one pass over a tile serves every token of a step: it is read
// from memory once and then from cache for each further group of four tokens.
type tileFmt struct {
	pk        *packer
	unit      int // elements per tile unit: one block, or one K-quant super-block
	unitBytes int // bytes per unit of a 16-row tile
	// quant returns element e (of the unit) of row r, ws and wm the scale and min
	// factor of row r's block b in the unit o.
	quant  func(o []byte, r, e int) byte
	ws, wm func(o []byte, r, b int) float32
	// pack writes one row's unit (its raw bytes) as lane r of the tile unit at dst,
	// every byte of the lane.
	pack func(dst, row []byte, r int)
	// x4 and x1 are the assembly kernels behind tileX4 and tileX1 (nil without them).
	x4 func(nu int, tile, act *byte, out *[64]float32)
	x1 func(nu int, tile, act *byte, tok int, out *[16]float32)
	// x1m is x1 on four tiles (tile + k·stride) at once, where there is one.
	x1m x1mFn
	// x1mWarm is x1m without software prefetch where x1m prefetches (quartersPF),
	// for weights that stay in cache from one step to the next (job.warm); nil
	// elsewhere.
	x1mWarm x1mFn
	// x1mPF says x1m prefetches in software (quartersPF's kernel).
	x1mPF bool
}

var tileFmts = map[kernels.DType]*tileFmt{
	kernels.IQ4_NL: tileIQ4NL, kernels.MXFP4: tileMXFP4, kernels.IQ4_XS: tileIQ4XS, // tile_lut.go
	// Per pair of 32-element blocks (so that 64-byte loads stay aligned): 2×4 words of
	// nibble pairs (elements e and e+16), 2×16 fp16 scales.
	// A Q4_0 block's own quant bytes are such pairs, so they are copied as they are.
	kernels.Q4_0: {pk: packers[kernels.Q4_0], unit: 64, unitBytes: 576,
		quant: func(o []byte, r, e int) byte { return nibble(o[256*(e/32):], r, e%32) },
		ws:    func(o []byte, r, b int) float32 { return f16At(o[512+32*b+2*r:]) },
		pack:  packQ4_0Unit},
	// Q4_1, Q5_0 and Q5_1 (per pair of 32-element blocks): Q4_0's nibble words, for the
	// 5-bit types a high-bit word per block (byte i of a lane: bit c the high bit of
	// element 4c+i, bit 4+c that of 16+4c+i), 2×16 fp16 scales, and for Q4_1 and Q5_1
	// 2×16 fp16 mins (the row's value is d·q + m: its min factor is m).
	kernels.Q4_1: {pk: packers[kernels.Q4_1], unit: 64, unitBytes: 640,
		quant: func(o []byte, r, e int) byte { return nibble(o[256*(e/32):], r, e%32) },
		ws:    func(o []byte, r, b int) float32 { return f16At(o[512+32*b+2*r:]) },
		wm:    func(o []byte, r, b int) float32 { return f16At(o[576+32*b+2*r:]) },
		pack: func(dst, row []byte, r int) {
			for b := range 2 {
				packNibbleWords(dst[256*b:], row[20*b+4:], r)
				copy(dst[512+32*b+2*r:], row[20*b:20*b+2])
				copy(dst[576+32*b+2*r:], row[20*b+2:20*b+4])
			}
		}},
	kernels.Q5_0: {pk: packers[kernels.Q5_0], unit: 64, unitBytes: 704,
		quant: quant5, ws: func(o []byte, r, b int) float32 { return f16At(o[640+32*b+2*r:]) },
		pack: func(dst, row []byte, r int) {
			for b := range 2 {
				packNibbleWords(dst[256*b:], row[22*b+6:], r)
				put32(dst[512+64*b+4*r:], highWord(le32(row[22*b+2:])))
				copy(dst[640+32*b+2*r:], row[22*b:22*b+2])
			}
		}},
	kernels.Q5_1: {pk: packers[kernels.Q5_1], unit: 64, unitBytes: 768,
		quant: quant5, ws: func(o []byte, r, b int) float32 { return f16At(o[640+32*b+2*r:]) },
		wm: func(o []byte, r, b int) float32 { return f16At(o[704+32*b+2*r:]) },
		pack: func(dst, row []byte, r int) {
			for b := range 2 {
				packNibbleWords(dst[256*b:], row[24*b+8:], r)
				put32(dst[512+64*b+4*r:], highWord(le32(row[24*b+4:])))
				copy(dst[640+32*b+2*r:], row[24*b:24*b+2])
				copy(dst[704+32*b+2*r:], row[24*b+2:24*b+4])
			}
		}},
	// Per pair of 32-element blocks: 2×8 words of bytes, 2×16 fp16 scales.
	kernels.Q8_0: {pk: packers[kernels.Q8_0], unit: 64, unitBytes: 1088,
		quant: func(o []byte, r, e int) byte { return o[512*(e/32)+64*(e%32/4)+4*r+e%4] },
		ws:    func(o []byte, r, b int) float32 { return f16At(o[1024+32*b+2*r:]) },
		pack: func(dst, row []byte, r int) {
			for b := range 2 {
				for c := range 8 {
					put32(dst[512*b+64*c+4*r:], le32(row[34*b+2+4*c:])^0x80808080) // q+128
				}
				copy(dst[1024+32*b+2*r:1026+32*b+2*r], row[34*b:34*b+2])
			}
		}},
	kernels.Q4_K: tileFmtQ4K,
	// Per super-block: Q4_K's head (320 bytes), eight words of high bits, then eight
	// 32-element sub-blocks of the quants' low nibbles as Q4_K's. Byte i of lane r of
	// high-bit word w is the row's qh[4w+i] as stored: its bit j is the high bit of
	// element 32j+4w+i, so nibble word c of sub-block j takes bit j of word c (its low
	// nibbles, elements 4c…) and of word 4+c (its high ones, 16+4c…) as 16s.
	kernels.Q5_K: {pk: packers[kernels.Q5_K], unit: 256, unitBytes: 2880,
		quant: func(o []byte, r, e int) byte {
			l := e % 32
			return nibble(o[832+256*(e/32):], r, l) | (o[320+64*(l/4)+4*r+l%4]>>(e/32)&1)<<4
		},
		ws: tileFmtQ4K.ws, wm: tileFmtQ4K.wm,
		pack: func(dst, row []byte, r int) {
			packQ4KHead(dst, row, r)
			for w := range 8 {
				copy(dst[320+64*w+4*r:324+64*w+4*r], row[16+4*w:20+4*w])
			}
			packKNibbles(dst[832:], row[48:], r)
		}},
	// Per super-block: 16 fp16 d, 16 fp16 dmin, 16×16 bytes of scale and min (sc | m<<4,
	// as stored), then sixteen 16-element blocks of a crumb word (element 4c+i's two bits
	// at bits 2c of byte i): 2.625 bits a weight, as the rows'.
	kernels.Q2_K: {pk: packers[kernels.Q2_K], unit: 256, unitBytes: 1344,
		quant: func(o []byte, r, e int) byte {
			x := e % 16
			return o[320+64*(e/16)+4*r+x%4] >> (2 * (x / 4)) & 3
		},
		ws: func(o []byte, r, b int) float32 { return f16At(o[2*r:]) * float32(o[64+16*b+r]&15) },
		wm: func(o []byte, r, b int) float32 { return -f16At(o[32+2*r:]) * float32(o[64+16*b+r]>>4) },
		pack: func(dst, row []byte, r int) {
			copy(dst[2*r:2*r+2], row[80:82])
			copy(dst[32+2*r:34+2*r], row[82:84])
			for b := range 16 {
				dst[64+16*b+r] = row[b]
				put32(dst[320+64*b+4*r:], crumbWord(row[16+32*(b/8)+16*(b%2):], 2*(b%8/2)))
			}
		}},
	// Per super-block: Q6_K's head (16 fp16 d, 32 bytes of padding, 16×16 int8 scales),
	// then eight pairs of 16-element blocks of 192 bytes: a word of two-bit crumbs per
	// block (element 4c+i's low bits at bits 2c of byte i), then one word of their high
	// bits (the first block's element 4c+i at bit c of byte i, the second's at bit 4+c).
	// Quants are stored as q+4 (0…7).
	kernels.Q3_K: {pk: packers[kernels.Q3_K], unit: 256, unitBytes: 1856,
		quant: func(o []byte, r, e int) byte {
			b, x := e/16, e%16
			pair := o[320+192*(b/2):]
			lo := pair[64*(b%2)+4*r+x%4] >> (2 * (x / 4)) & 3
			return lo | (pair[128+4*r+x%4]>>(4*(b%2)+x/4)&1)<<2
		},
		ws: tileFmtQ6K.ws,
		pack: func(dst, row []byte, r int) {
			copy(dst[2*r:2*r+2], row[108:110])
			var sc [16]int32
			kernels.UnpackQ3Scales((*[12]byte)(row[96:108]), &sc)
			for b, v := range sc {
				dst[64+16*b+r] = byte(int8(v))
			}
			// Block b of the row: elements 128n+32j+16h+l, l < 16 (b = 8n+2j+h), their
			// low bits at bits 2j of qs[32n+16h+l], their high bits at bit 4n+j of
			// hmask[16h+l].
			for p := range 8 {
				pair := dst[320+192*p:]
				n, j := p/4, p%4
				var hi uint32
				for h := range 2 {
					put32(pair[64*h+4*r:], crumbWord(row[32+32*n+16*h:], 2*j))
					for c := range 4 {
						hi |= le32(row[16*h+4*c:]) >> (4*n + j) & 0x01010101 << (4*h + c)
					}
				}
				put32(pair[128+4*r:], hi)
			}
		}},
	kernels.Q6_K: tileFmtQ6K,
}

// tileFmtQ6K is Q6_K's tile format: per super-block 16 fp16 d, 32 bytes of padding,
// 16×16 int8 scales, then sixteen 16-element blocks of two words of nibble pairs
// (elements e and e+8) and one word of high bit pairs (element 4c+i's at bits 2c of
// byte i). Q3_K's tiles share its head.
var tileFmtQ6K = &tileFmt{pk: packers[kernels.Q6_K], unit: 256, unitBytes: 3392,
	quant: func(o []byte, r, e int) byte {
		blk := o[320+192*(e/16):]
		e %= 16
		lo := blk[64*(e%8/4)+4*r+e%4] >> (4 * (e / 8)) & 15
		return lo | (blk[128+4*r+e%4]>>(2*(e/4))&3)<<4
	},
	ws: func(o []byte, r, b int) float32 { return f16At(o[2*r:]) * float32(int8(o[64+16*b+r])) },
	pack: func(dst, row []byte, r int) {
		copy(dst[2*r:2*r+2], row[208:210])
		// Block b of the row: elements 128n+32qq+16h+x (b = 8n+2qq+h): low nibbles at
		// shift 4(qq/2) of ql[64n+32(qq%2)+16h+x], high bit pairs at bits 2qq of
		// qh[32n+16h+x].
		for b := range 16 {
			dst[64+16*b+r] = row[192+b]
			n, qq, h := b/8, b%8/2, b%2
			ql := row[64*n+32*(qq%2)+16*h:]
			qh := row[128+32*n+16*h:]
			blk := dst[320+192*b:]
			for w := range 2 {
				lo := le32(ql[4*w:]) >> (4 * (qq / 2)) & 0x0F0F0F0F
				hi := le32(ql[8+4*w:]) >> (4 * (qq / 2)) & 0x0F0F0F0F
				put32(blk[64*w+4*r:], lo|hi<<4)
			}
			put32(blk[128+4*r:], crumbWord(qh, 2*qq))
		}
	}}

// tileFmtQ4K is Q4_K's tile format: per super-block 16 fp16 d, 16 fp16 dmin, 8×16
// scale bytes, 8×16 min bytes (packQ4KHead), then eight 32-element sub-blocks as Q4_0's
// nibbles. Q5_K's tiles share its head.
var tileFmtQ4K = &tileFmt{pk: packers[kernels.Q4_K], unit: 256, unitBytes: 2368,
	quant: func(o []byte, r, e int) byte { return nibble(o[320+256*(e/32):], r, e%32) },
	ws:    func(o []byte, r, b int) float32 { return f16At(o[2*r:]) * float32(o[64+16*b+r]) },
	wm:    func(o []byte, r, b int) float32 { return -f16At(o[32+2*r:]) * float32(o[192+16*b+r]) },
	pack: func(dst, row []byte, r int) {
		packQ4KHead(dst, row, r)
		packKNibbles(dst[320:], row[16:], r)
	}}

// packQ4KHead writes the head of a Q4_K or Q5_K super-block of row r (raw bytes at
// row) into lane r of a tile unit: its d, dmin, and eight sub-block scales and mins.
func packQ4KHead(dst, row []byte, r int) {
	copy(dst[2*r:2*r+2], row[0:2])
	copy(dst[32+2*r:34+2*r], row[2:4])
	for j := range 8 {
		dst[64+16*j+r], dst[192+16*j+r] = scaleMinK4(j, row[4:16])
	}
}

// packQ4_0Unit is the Q4_0 tile format's pack: row r's two raw 18-byte blocks (fp16
// scale, 16 nibble bytes) as lane r of the unit at dst. IQ4_NL blocks have the same
// layout and take it too.
func packQ4_0Unit(dst, row []byte, r int) {
	for b := range 2 {
		packNibbleWords(dst[256*b:], row[18*b+2:], r)
		copy(dst[512+32*b+2*r:514+32*b+2*r], row[18*b:18*b+2])
	}
}

// packNibbleWords writes a 32-element block's 16 nibble bytes as stored (element l's
// at the low nibble of byte l, 16+l's at its high one) as lane r of four nibble words.
func packNibbleWords(dst, qs []byte, r int) {
	for c := range 4 {
		copy(dst[64*c+4*r:64*c+4*r+4], qs[4*c:4*c+4])
	}
}

// highWord returns the lane of a Q5_0/Q5_1 block's high-bit word for its qh bits (bit
// l the high bit of element l): byte i holds element 4c+i's at bit c and 16+4c+i's at
// bit 4+c.
func highWord(qh uint32) uint32 {
	var v uint32
	for i := range 4 {
		for c := range 4 {
			v |= (qh>>(4*c+i)&1<<c | qh>>(16+4*c+i)&1<<(4+c)) << (8 * i)
		}
	}
	return v
}

// quant5 is the quant accessor of the Q5_0 and Q5_1 tiles.
func quant5(o []byte, r, e int) byte {
	b, l := e/32, e%32
	return nibble(o[256*b:], r, l) | (o[512+64*b+4*r+l%4]>>(l%16/4+4*(l/16))&1)<<4
}

// nibble returns element e of row r in a 32-element block of nibble words at o.
func nibble(o []byte, r, e int) byte {
	return o[64*(e%16/4)+4*r+e%4] >> (4 * (e / 16)) & 15
}

// packKNibbles writes the quants of a Q4_K or Q5_K super-block of a row (its 128
// bytes qs: element 32j+l's low nibble at shift 4(j%2) of qs[32(j/2)+l]) as lane r of
// eight sub-blocks of four nibble words at dst (elements 4c+i and 16+4c+i of each
// sub-block in byte i of word c).
func packKNibbles(dst, qs []byte, r int) {
	for j := range 8 {
		src, sh := qs[32*(j/2):], 4*(j%2)
		for c := range 4 {
			lo := le32(src[4*c:]) >> sh & 0x0F0F0F0F
			hi := le32(src[16+4*c:]) >> sh & 0x0F0F0F0F
			put32(dst[256*j+64*c+4*r:], lo|hi<<4)
		}
	}
}

// crumbWord returns a lane of a crumb word: bits sh…sh+1 of the sixteen bytes at q,
// element 4c+i's at bits 2c of byte i.
func crumbWord(q []byte, sh int) uint32 {
	var v uint32
	for c := range 4 {
		v |= le32(q[4*c:]) >> sh & 0x03030303 << (2 * c)
	}
	return v
}

// le32 and put32 read and write a little-endian uint32.
func le32(b []byte) uint32     { return binary.LittleEndian.Uint32(b) }
func put32(b []byte, v uint32) { binary.LittleEndian.PutUint32(b, v) }

// tileRows is the number of weight rows in a tile.
const tileRows = 16

// tileX4 and tileX1 run a tile of nu units against four tokens' prepared activation
// blocks, or against token tok of them alone; out is token-major (out[16t+r]). They
// are the assembly kernels where the CPU has AVX512-VNNI, else nil.
var (
	tileX4 func(f *tileFmt, nu int, tile, act []byte, out *[64]float32)
	tileX1 func(f *tileFmt, nu int, tile, act []byte, tok int, out *[16]float32)
	// tileX1m is tileX1 on four tiles stride bytes apart at once, for formats with an
	// x1m kernel: four streams from memory keep a core's read bandwidth up where one
	// does not. Intel reads four adjacent tiles with software prefetch; AMD
	// (x1Quarters) one tile from each quarter of a worker's band (tileFours), Zen 4
	// without software prefetch and Zen 5 with it (setX1m).
	// warm takes f.x1mWarm where there is one.
	tileX1m func(f *tileFmt, warm bool, nu int, tile []byte, stride int, act []byte, tok int, out *[64]float32)
	// x1mKernels holds the x1m kernels this CPU can run, indexed by the decode order
	// that takes each (x1mAdjacent, x1mQuarters, x1mQuartersPF; nil where a type has
	// none), whether or not decode takes them (tileFmt.x1m).
	x1mKernels = map[kernels.DType][3]x1mFn{}
)

// x1mFn is a four-tile one-token kernel (tileFmt.x1m): nu units of the tiles at tile +
// k·stride (k < 4) against token tok of the activations, tile k's outputs at out[16k:].
type x1mFn = func(nu int, tile *byte, stride int, act *byte, tok int, out *[64]float32)

// setX1m sets type t's x1m kernel from x1mKernels: four adjacent tiles where the
// decode order is not quarters, else one from each quarter, with software prefetch
// where quartersPF holds and the type has such a kernel (x1mWarm then the one without,
// where there is one). It may be nil: the type then decodes one tile at a time.
func setX1m(t kernels.DType) {
	k, f := x1mKernels[t], tileFmts[t]
	f.x1mPF = false
	switch {
	case !x1Quarters:
		f.x1m, f.x1mWarm = k[x1mAdjacent], nil
	case quartersPF && k[x1mQuartersPF] != nil:
		f.x1m, f.x1mWarm, f.x1mPF = k[x1mQuartersPF], k[x1mQuarters], true
	default:
		f.x1m, f.x1mWarm = k[x1mQuarters], nil
	}
}

// The indices of x1mKernels.
const (
	x1mAdjacent   = iota // four adjacent tiles, software prefetch (Intel)
	x1mQuarters          // a tile from each quarter of a band, hardware prefetch only (AMD Zen 4)
	x1mQuartersPF        // a tile from each quarter, software prefetch too (AMD Zen 5)
)

// packTile writes rows r0…r0+15 of w (rows past the end are zero) as one tile to dst.
func packTile(dst []byte, w *kernels.Matrix, f *tileFmt, r0 int) {
	nu := w.Cols / f.unit
	wRow := w.Cols / w.Type.BlockSize() * w.Type.BlockBytes()
	uRow := wRow / nu // raw bytes of one unit of a row
	nr := min(tileRows, w.Rows-r0)
	if nr < tileRows {
		clear(dst)
	}
	for r := range nr {
		row := w.Data[(r0+r)*wRow : (r0+r+1)*wRow]
		for u := range nu {
			f.pack(dst[u*f.unitBytes:(u+1)*f.unitBytes], row[u*uRow:(u+1)*uRow], r)
		}
	}
}

// tileGo is the pure-Go twin of the tile kernels: tokens [0, ntok) of activation
// blocks prepared in groups of gsz tokens (prepActs), token-major into out, in the
// order the type's doc comment gives.
func tileGo(f *tileFmt, nu int, tile, act []byte, gsz, ntok int, out []float32) {
	bs := f.pk.bs
	ab := gsz * (bs + 12)
	bpu := f.unit / bs
	for t := range ntok {
		for r := range tileRows {
			var acc float32
			for u := range nu {
				o := tile[u*f.unitBytes : (u+1)*f.unitBytes]
				for b := range bpu {
					a := act[(u*bpu+b)*ab : (u*bpu+b+1)*ab]
					tail := a[gsz*bs:]
					y := a[t*bs : (t+1)*bs]
					s := int32(binary.LittleEndian.Uint32(tail[4*gsz+4*t:]))
					for e := range bs {
						s += int32(f.quant(o, r, b*bs+e)) * int32(int8(y[e]))
					}
					d := math.Float32frombits(binary.LittleEndian.Uint32(tail[4*t:]))
					acc = fma32(float32(s), f.ws(o, r, b)*d, acc)
					if f.wm != nil {
						acc = fma32(f.wm(o, r, b), math.Float32frombits(binary.LittleEndian.Uint32(tail[8*gsz+4*t:])), acc)
					}
				}
			}
			out[16*t+r] = acc
		}
	}
}

// x1Quarters says one-token products read a worker's band in quarters (AMD: four long
// streams, see quarters), where the types with an x1m kernel take four tiles at once,
// and the one-tile kernels run without software prefetch (see PFON in tile_amd64.s).
// x1Both holds each tile type's one-tile kernel with and without prefetch (the tests
// check both, whichever MatMul runs).
var (
	x1Quarters bool
	// quartersPF says the quarters' kernels that have a twin with software prefetch
	// take it (AMD Zen 5: see quarterPrefetch): x1m (setX1m) and the F16/BF16 rows.
	quartersPF bool
	x1Both     = map[kernels.DType][2]func(nu int, tile, act *byte, tok int, out *[16]float32){}
)

// tileActKey identifies the activations regrouped in CPU.tileAct: the conversion they
// come from and the layout's parameters.
type tileActKey struct {
	gen        int
	vt         kernels.DType
	bs, n, gsz int
	k          int32
}

// tiled is one matrix's tiled copy, with the weights it was made from (kept, so that
// their memory cannot be reused for another matrix while the copy is cached).
type tiled struct {
	src  []byte
	data []byte
	// m is, for a plain copy (copiedType), w with Data the copy; nil for tiles.
	m *kernels.Matrix
}

// tileFormat returns the tile format MatMul multiplies w through, or nil where it
// multiplies w from its own bytes.
func tileFormat(w *kernels.Matrix) *tileFmt {
	if f := tileFmts[w.Type]; f != nil && f.x4 != nil && tileX4 != nil && w.Cols%f.unit == 0 {
		return f
	}
	return nil
}

// Prepare implements kernels.Preparer: it makes w's tiled copy now when MatMul would
// multiply w through one, and then reports true (MatMul no longer reads w.Data). F16
// and BF16 weights, which MatMul reads as they are stored, it copies as they are into
// memory of its own (copiedType) and reports true too.
func (c *CPU) Prepare(w *kernels.Matrix) bool {
	c.prepared = true
	if f := tileFormat(w); f != nil {
		c.tilesOf(w, f)
		return true
	}
	if !copiedType(w.Type) || len(w.Data) == 0 {
		return false
	}
	if c.current(w) == nil {
		const part = 2 << 20 // bytes each worker copies at a time: a huge page
		t := &tiled{src: w.Data, data: allocTiles(len(w.Data))}
		c.runAside(job{kind: taskCopy, act: t.data, xq: w.Data, gBytes: part}, (len(w.Data)+part-1)/part)
		m := *w
		m.Data, t.m = t.data, &m
		c.keep(w, t)
	}
	return true
}

// copiedType reports whether Prepare copies matrices of type t: the 16-bit float
// types, multiplied straight from their stored bytes, which would otherwise be read
// from the model file's mapping. There they sit in 4 KiB pages, here in huge pages
// where the system gives them (allocTiles), and a decode step streams every byte: on a
// 2-core AMD EPYC (Zen 5), llama-1b F16 tg64 read 19.6–23.5 t/s from the mapping and
// 29.8–30.4 from the copy (two rounds of three; one round read both at 18–20).
func copiedType(t kernels.DType) bool { return t == kernels.F16 || t == kernels.BF16 }

// copyOf returns the copy Prepare made of w (a matrix like w whose Data is the copy),
// or w itself where it made none or w's Data has been replaced since.
func (c *CPU) copyOf(w *kernels.Matrix) *kernels.Matrix {
	if !copiedType(w.Type) {
		return w
	}
	if t := c.current(w); t != nil && t.m != nil {
		return t.m
	}
	return w
}

// current returns w's copy (tiled or plain) when it was made from w's Data as it is
// now, nil where there is none or w's Data has been replaced since.
func (c *CPU) current(w *kernels.Matrix) *tiled {
	if t := c.tiles[w]; t != nil && len(t.src) == len(w.Data) && unsafe.SliceData(t.src) == unsafe.SliceData(w.Data) {
		return t
	}
	return nil
}

// keep records t as w's copy, freeing the stale one it replaces (w's Data replaced).
func (c *CPU) keep(w *kernels.Matrix, t *tiled) {
	if old := c.tiles[w]; old != nil {
		freeTiles(old.data)
		c.tiledBytes -= len(old.data)
	}
	c.tiledBytes += len(t.data)
	if c.tiles == nil {
		c.tiles = map[*kernels.Matrix]*tiled{}
	}
	c.tiles[w] = t
}

// warmBytes is the most weight bytes (the copies Prepare made, all matrices together)
// that decode treats as staying in cache from one step to the next: tiny models such as
// TinyStories-656K (1.3 MB in F16), whose steps software prefetch only slows (AMD Zen
// 5, tg256 alternated in one process, 30 rounds, with prefetch against without: F16
// 0.95–0.97×, Q8_0 0.97–0.99×, at -t 1 and -t 2). A step streaming a larger model's
// weights from memory is what the prefetch is for.
const warmBytes = 8 << 20

// runAside runs the parts of j on the pool and then restores the job in progress
// (c.job), for the copies made while a step is being planned.
func (c *CPU) runAside(j job, parts int) {
	saved := c.job
	c.job = j
	c.pool.Run(parts, c.run)
	c.job = saved
}

// tilesOf returns the tiled copy of w, making it (in parallel) when there is none yet.
func (c *CPU) tilesOf(w *kernels.Matrix, f *tileFmt) []byte {
	if t := c.current(w); t != nil {
		return t.data
	}
	c.tilings++
	nt := (w.Rows + tileRows - 1) / tileRows
	tb := w.Cols / f.unit * f.unitBytes
	data := allocTiles(nt * tb)
	c.runAside(job{kind: taskPack, w: w, tf: f, act: data, gBytes: tb}, nt)
	c.keep(w, &tiled{src: w.Data, data: data})
	return data
}

// dropTiles frees every tiled copy.
func (c *CPU) dropTiles() {
	for _, t := range c.tiles {
		freeTiles(t.data)
	}
	c.tiles, c.tiledBytes = nil, 0
}

// matMulTiled is MatMul's path for types with a tile format: the activations are
// regrouped four tokens at a time (prepActs; sixteen on the AMX path, see amxFor), then
// each part takes a run of tiles and multiplies every tile with every group of tokens
// (the one-token kernel where a group of four has only one).
func (c *CPU) matMulTiled(f *tileFmt) (parts, work int) {
	j := &c.job
	tiles := c.tilesOf(j.w, f)
	pk := f.pk
	j.tf, j.pk = f, pk
	j.nb = j.cols / pk.bs
	j.gsz = gemmToks
	if amxFor(f, j.n) {
		j.gsz = amxToks
	}
	j.groups = (j.n + j.gsz - 1) / j.gsz
	j.gBytes = j.nb * j.gsz * (pk.bs + 12)
	// Q, K and V (and gate and up) take the same activations: regroup them once.
	key := tileActKey{gen: c.qGen, vt: j.vtID, bs: pk.bs, k: pk.k, n: j.n, gsz: j.gsz}
	slot := c.actSlot
	if j.groups == 1 {
		// One group (decode): every worker regroups the activations into its own
		// buffer at the start of its first part (tileActs), at once, where the caller
		// alone regrouped them into a buffer both read before the step: serial, and
		// each write of a line the other core had read waited for it. Those serial
		// regroupings took 8 µs per 2048 columns and 20 µs per 5632 in llama-1b Q4_0
		// decode, ~1 ms of a 13 ms token (AMD Zen 5).
		j.ownActs, j.slot, j.key = true, slot, key
	} else {
		if c.tileActKey[slot] != key {
			c.tileAct[slot] = grow(c.tileAct[slot], j.groups*j.gBytes)
			j.act = c.tileAct[slot]
			j.kind = taskPrep
			c.runWork(j.groups, j.n*j.cols)
			c.tileActKey[slot] = key
		}
		j.act = c.tileAct[slot]
	}
	j.xp = tiles
	nt := (j.rows + tileRows - 1) / tileRows
	j.kind = taskTile
	div := tileWorkDiv
	if j.n >= gemmToks {
		div = tileWorkDivX4
	}
	work = j.rows * j.cols * j.n / div
	j.band = (max(4, nt/(c.splitThreads(work)*8)) + 3) &^ 3
	if j.n <= claimToks && j.tf.x1m != nil && x1Quarters && j.gsz != amxToks {
		return c.claimBands(nt, work), work
	}
	return (nt + j.band - 1) / j.band, work
}

// claimToks is the most tokens a product takes through claimBands (their calls run
// the one-token kernel once per token on the same four tiles, the later tokens reading
// them from cache) instead of the four-token kernel's bands. On AMD EPYC (Zen 5, 2
// vCPUs, BenchmarkDecode over 1 GiB, three alternated rounds) two tokens read the
// weights faster this way: Q4_0 1.12–1.51×, Q4_K 1.15–1.60×, Q8_0 1.03–1.19× (Q6_K
// 0.78–1.18×); three and four tokens did not (0.85–1.2×, and 0.6–0.9× on Q6_K), where
// the four-token kernel's shared nibble decoding pays.
const claimToks = 2

// claimBands plans a one-token product on the AMD quarters path (tileFours) as one
// band of nt tiles per worker (one in all for a product RunWork keeps on the caller),
// each band's kernel calls claimed one at a time (partClaim), so that a worker done
// with its band takes the calls left at the end of another's (tileClaims): every
// worker reads its four quarters as four streams as long as the product allows, and
// no worker waits for one that is slower or started late. Bands of 8 tiles (16 parts
// on two threads, claimed whole) read four 36 KB streams per part in llama-1b. In-process
// A/B, alternating 8-token decodes on two threads (AMD Zen 5): 1.026× Q4_0, 1.043×
// Q4_K_M, 1.005× Q8_0 while the host read slowly, 0.997–1.005× on every type while it
// read fast; without the stealing, 0.98–0.99× of this.
func (c *CPU) claimBands(nt, work int) int {
	j := &c.job
	parts := min(c.splitThreads(work), (nt+3)/4)
	j.band = ((nt+parts-1)/parts + 3) &^ 3
	parts = (nt + j.band - 1) / j.band
	j.claims, j.claim0 = true, c.claimNext
	c.claimNext += parts
	for p := range parts {
		_, calls := j.bandCalls(p*j.band, min(nt, (p+1)*j.band))
		c.claims[j.claim0+p].reset(calls)
	}
	return parts
}

// bandCalls returns tileCall's calls over tiles [t0, t1): q calls of four tiles, then
// one call for each tile left over (up to three, and the matrix's last tile where it
// is partial).
func (j *job) bandCalls(t0, t1 int) (q, calls int) {
	full := t1 - t0
	if t1*tileRows > j.rows {
		full-- // the matrix's last tile is partial
	}
	return full / 4, full/4 + t1 - t0 - 4*(full/4)
}

// partClaim is one band's kernel calls [front, back), claimed from the front by the
// worker running the band and from the back by workers done with theirs: front in the
// low 32 bits, back in the high, on a cache line of its own.
type partClaim struct {
	v atomic.Uint64
	_ [56]byte
}

// reset makes calls [0, n) unclaimed.
func (p *partClaim) reset(n int) { p.v.Store(uint64(n) << 32) }

// claim claims the first unclaimed call (the last one with fromBack), or returns -1
// when none is left.
func (p *partClaim) claim(fromBack bool) int {
	for {
		s := p.v.Load()
		f, b := uint32(s), uint32(s>>32)
		if f >= b {
			return -1
		}
		next, i := s+1, int(f)
		if fromBack {
			next, i = s-1<<32, int(b-1)
		}
		if p.v.CompareAndSwap(s, next) {
			return i
		}
	}
}

// tileWorkDiv converts the tile kernels' multiply-adds to RunWork's unit (F32
// multiply-adds): a one-token 2048×128 product took 12 µs in Q8_0 and 9.9 µs in Q4_0
// against 45 µs in F32 on one thread (2-core Xeon VM, loaded), so a tile
// multiply-add costs a quarter of an F32 one, or less.
const tileWorkDiv = 4

// tileWorkDivX4 is tileWorkDiv for products of four tokens or more (the x4 kernels,
// which read each weight once for four tokens): the Q8_0 prompt products of
// TinyStories-656K over 64 tokens ran slower on two threads than on one when split
// by the one-token divisor (128×128: 14.6 vs 11.7 µs; 128×384: 32.0 vs 29.6;
// 384×128: 26.0 vs 24.3), as did 768×128 and 1024×128 over 16 tokens, while
// 768×128 over 64 tokens (1.15×), 512×512 over 16 (1.17×) and larger gained; 16
// splits from 512×512×16 multiply-adds (AMD Zen 5, 2 cores).
const tileWorkDivX4 = 16

// tileActs returns the regrouped activations j's parts read on worker: j.act, or where
// each worker regroups its own (ownActs), the worker's, made now if they are not
// those of j's conversion and layout.
func (c *CPU) tileActs(j *job, worker int) []byte {
	if !j.ownActs {
		return j.act
	}
	s := &c.gemmScr[worker]
	if s.actKey[j.slot] != j.key {
		s.act[j.slot] = grow(s.act[j.slot], j.gBytes)
		// The group's slots past its real tokens keep what an earlier regrouping left
		// there: every kernel computes each token of a group in registers of its own
		// and only the real tokens' outputs are kept, so those slots are never read
		// into a result (TestOwnActsFollowInputs). Clearing them was a third of a
		// one-token regrouping's time (2048 columns: 1.40 → 0.97 µs; 5632: 4.1 →
		// 2.8 µs; AMD Zen 5), on the path of both workers before their first tile.
		prepActsOver(s.act[j.slot], j.xq, j.xRow, j.n, 0, j.gsz, j.vtID, j.pk.bs, j.cols, j.pk.k, false)
		s.actKey[j.slot] = j.key
	}
	return s.act[j.slot]
}

// tileBand computes one part of matMulTiled: tiles [part·band, (part+1)·band).
func (c *CPU) tileBand(j *job, part, worker int) {
	s := &c.gemmScr[worker]
	act := c.tileActs(j, worker)
	tb := j.cols / j.tf.unit * j.tf.unitBytes
	nu := j.cols / j.tf.unit
	nt := (j.rows + tileRows - 1) / tileRows
	end := min(nt, (part+1)*j.band)
	if j.gsz == amxToks {
		c.tileBandAMX(j, part*j.band, end, s, act)
		return
	}
	if j.claims {
		c.tileClaims(j, part, s, act)
		return
	}
	if j.n == 1 && j.tf.x1m != nil {
		c.tileFours(j, part*j.band, end, s, act)
		return
	}
	for ti := part * j.band; ti < end; ti++ {
		r0 := ti * tileRows
		tile := j.xp[ti*tb : (ti+1)*tb]
		nr := min(tileRows, j.rows-r0)
		for g := range j.groups {
			act := act[g*j.gBytes : (g+1)*j.gBytes]
			nt := min(j.gsz, j.n-j.gsz*g)
			if nt == 1 {
				tileX1(j.tf, nu, tile, act, 0, (*[16]float32)(s.out[:16]))
			} else {
				tileX4(j.tf, nu, tile, act, &s.out)
			}
			for t := range nt {
				row := (j.gsz*g + t) * j.rows
				copy(j.dst[row+r0:row+r0+nr], s.out[16*t:16*t+nr])
			}
		}
	}
}

// tileFours is tileBand for one token with the x1m kernel: tileCall's calls over
// tiles [t0, t1) in order.
func (c *CPU) tileFours(j *job, t0, t1 int, s *gemmScratch, act []byte) {
	_, calls := j.bandCalls(t0, t1)
	for i := range calls {
		c.tileCall(j, t0, t1, i, 0, s, act).store(j.dst, &s.out)
	}
}

// tileClaims is tileBand for a band of claimBands: the band's calls from the front
// while any is left, then the other bands' from the back. Calls run tileFours' kernels
// on the same tiles, so every output is the same whoever computes it. Each claim is
// made between a call's kernel and the copy of its outputs: a locked instruction waits
// for the stores before it, and the copies into dst (lines the weight stream had
// evicted) made the claim after them 2 % of a Q4_K_M decode's time.
func (c *CPU) tileClaims(j *job, part int, s *gemmScratch, act []byte) {
	nt := (j.rows + tileRows - 1) / tileRows
	parts := (nt + j.band - 1) / j.band
	for k := range parts {
		p := (part + k) % parts
		cl, fromBack := &c.claims[j.claim0+p], k > 0
		t0, t1 := p*j.band, min(nt, (p+1)*j.band)
		for i := cl.claim(fromBack); i >= 0; {
			for t := range j.n - 1 { // the call's tiles stay in cache for the next token
				c.tileCall(j, t0, t1, i, t, s, act).store(j.dst[t*j.rows:], &s.out)
			}
			out := c.tileCall(j, t0, t1, i, j.n-1, s, act)
			next := cl.claim(fromBack)
			out.store(j.dst[(j.n-1)*j.rows:], &s.out)
			i = next
		}
	}
}

// tileOut says where a call's outputs in the worker's scratch go: rows rows from r0
// (the first tile's), and for a call of four tiles (quads 4) tileRows rows from r0 +
// k·apart·tileRows for tile k.
type tileOut struct{ r0, rows, quads, apart int }

// store copies the call's outputs from the worker's scratch out to dst.
func (o tileOut) store(dst []float32, out *[64]float32) {
	copy(dst[o.r0:o.r0+o.rows], out[:o.rows])
	for k := 1; k < o.quads; k++ {
		r0 := o.r0 + k*o.apart*tileRows
		copy(dst[r0:r0+tileRows], out[16*k:16*k+16])
	}
}

// tileCall runs call i of tiles [t0, t1) (bandCalls) into the worker's scratch with
// the x1m kernel, four tiles: on AMD (x1Quarters) tile i of every quarter, so that
// the worker reads four streams at once (one tile at a time read slower there,
// llama-1b decode 2-5 % per token; four adjacent tiles with software prefetch, 12-15 %
// slower); elsewhere tiles 4i…4i+3, which the kernel prefetches. The calls past those
// take a tile left over (up to three, and a last partial tile) with the x1 kernel.
// Each output is the x1 kernel's, bit for bit.
func (c *CPU) tileCall(j *job, t0, t1, i, tok int, s *gemmScratch, act []byte) tileOut {
	tb := j.cols / j.tf.unit * j.tf.unitBytes
	nu := j.cols / j.tf.unit
	q, _ := j.bandCalls(t0, t1)
	if i < q {
		ti, apart := t0+4*i, 1
		if x1Quarters {
			ti, apart = t0+i, q
		}
		tileX1m(j.tf, j.warm, nu, j.xp[ti*tb:], apart*tb, act, tok, &s.out)
		return tileOut{r0: ti * tileRows, rows: tileRows, quads: 4, apart: apart}
	}
	ti := t0 + 4*q + i - q
	r0 := ti * tileRows
	tileX1(j.tf, nu, j.xp[ti*tb:(ti+1)*tb], act, tok, (*[16]float32)(s.out[:16]))
	return tileOut{r0: r0, rows: min(tileRows, j.rows-r0), quads: 1}
}

// tileBandAMX is tileBand on the AMX path for tiles [t0, t1): groups of sixteen tokens
// in the outer loop, so that a group's activations are reused from cache for every
// tile of the band and each token's outputs are written in one run (the other order,
// sixteen scattered 64-byte writes per kernel call, cost a third of the kernel's time);
// full tiles of full groups are stored by the kernel straight into dst.
func (c *CPU) tileBandAMX(j *job, t0, t1 int, s *gemmScratch, acts []byte) {
	tb := j.cols / j.tf.unit * j.tf.unitBytes
	nu := j.cols / j.tf.unit
	for g := range j.groups {
		act := acts[g*j.gBytes : (g+1)*j.gBytes]
		nt := min(amxToks, j.n-amxToks*g)
		for ti := t0; ti < t1; ti++ {
			r0 := ti * tileRows
			nr := min(tileRows, j.rows-r0)
			tile := j.xp[ti*tb : (ti+1)*tb]
			if nt == amxToks && nr == tileRows { // straight into dst
				tileX16(j.tf, nu, tile, act, &s.amx, j.dst[amxToks*g*j.rows+r0:], j.rows)
				continue
			}
			tileX16(j.tf, nu, tile, act, &s.amx, nil, 0)
			for t := range nt {
				row := (amxToks*g + t) * j.rows
				copy(j.dst[row+r0:row+r0+nr], s.amx.out[16*t:16*t+nr])
			}
		}
	}
}
