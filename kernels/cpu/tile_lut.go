package cpu

import "llmbench/kernels"

// The lookup-table types IQ4_NL, IQ4_XS and MXFP4 store 4-bit indices into a table of
// 16 int8 levels (kernels.Levels). Their fast kernels look the nibbles up with one
// byte shuffle (VPSHUFB) and multiply the levels with the int8 activations as the
// other integer kernels do: the AVX2 dot products, tile kernels (IQ4_NL) and batch2
// kernel take the signed levels (lutSigned*), the VNNI tile kernels the levels plus
// 128 (lutTile*: unsigned bytes, as VPDPBUSD wants; each block's sum starts at
// −128·Σy, the packer's k).
//
// Tile layouts (sixteen rows, lanes as in tile.go):
//   - IQ4_NL: Q4_0's (per pair of blocks 2×256 nibble bytes, 2×16 fp16 scales; 576
//     bytes), the nibbles copied as they are.
//   - MXFP4: per pair of blocks 2×256 nibble bytes, then 2×16 E8M0 bytes (544 bytes);
//     the kernels widen each to its factor 2^(e-128) exactly (VSCALEFPS).
//   - IQ4_XS: per 256-element super-block 16 fp16 d, 32 bytes of padding, 8×16 int8
//     sub-block scales ls−32, then eight 32-element sub-blocks of 256 nibble bytes (as
//     Q4_0's); 2240 bytes. A sub-block's row scale is d·(ls−32), as in Q4_K's tiles.

// The lookup tables the assembly reads by name: each type's levels as bytes
// (lutSigned*, for the AVX2 kernels) and plus 128 (lutTile*, for the tiles), and
// kernels.E8M0Half of every scale byte (for the AVX2 MXFP4 kernels and batch2Go).
// IQ4_XS takes IQ4_NL's tables.
var (
	lutSignedIQ4NL, lutTileIQ4NL = lutBytes(kernels.IQ4_NL)
	lutSignedMXFP4, lutTileMXFP4 = lutBytes(kernels.MXFP4)
	e8m0Halves                   = e8m0Table()
)

// lutBytes returns type t's levels as bytes, and the levels plus 128.
func lutBytes(t kernels.DType) (signed, off [16]byte) {
	lut, _ := kernels.Levels(t)
	for i, v := range lut {
		signed[i], off[i] = byte(v), byte(int(v)+128)
	}
	return signed, off
}

// e8m0Table returns kernels.E8M0Half of every byte.
func e8m0Table() (h [256]float32) {
	for e := range h {
		h[e] = kernels.E8M0Half(uint8(e))
	}
	return h
}

// The tile formats of the lookup-table types (tileFmts): their packers give the block
// size and the offset k.
var (
	tileIQ4NL = &tileFmt{pk: &packer{bs: 32, k: 128}, unit: 64, unitBytes: 576,
		quant: func(o []byte, r, e int) byte { return lutTileIQ4NL[nibble(o[256*(e/32):], r, e%32)] },
		ws:    func(o []byte, r, b int) float32 { return f16At(o[512+32*b+2*r:]) },
		pack:  packQ4_0Unit}
	tileMXFP4 = &tileFmt{pk: &packer{bs: 32, k: 128}, unit: 64, unitBytes: 544,
		quant: func(o []byte, r, e int) byte { return lutTileMXFP4[nibble(o[256*(e/32):], r, e%32)] },
		ws:    func(o []byte, r, b int) float32 { return kernels.E8M0Half(o[512+16*b+r]) },
		pack: func(dst, row []byte, r int) {
			for b := range 2 {
				for c := range 4 {
					copy(dst[256*b+64*c+4*r:256*b+64*c+4*r+4], row[17*b+1+4*c:17*b+5+4*c])
				}
				dst[512+16*b+r] = row[17*b]
			}
		}}
	tileIQ4XS = &tileFmt{pk: &packer{bs: 32, k: 128}, unit: 256, unitBytes: 2240,
		quant: func(o []byte, r, e int) byte { return lutTileIQ4NL[nibble(o[192+256*(e/32):], r, e%32)] },
		ws:    func(o []byte, r, b int) float32 { return f16At(o[2*r:]) * float32(int8(o[64+16*b+r])) },
		pack: func(dst, row []byte, r int) {
			copy(dst[2*r:2*r+2], row[0:2])
			h := uint16(row[2]) | uint16(row[3])<<8
			for b := range 8 {
				ls := row[4+b/2]>>(4*(b%2))&15 | byte(h>>(2*b)&3)<<4
				dst[64+16*b+r] = ls - 32 // int8 ls−32
				for c := range 4 {
					copy(dst[192+256*b+64*c+4*r:192+256*b+64*c+4*r+4], row[8+16*b+4*c:12+16*b+4*c])
				}
			}
		}}
)
