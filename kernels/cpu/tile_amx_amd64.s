//go:build amd64 && !purego

#include "textflag.h"
#include "lanes_amd64.h"

// AMX kernels (see amx.go). Go's assembler has no AMX mnemonics, so each AMX
// instruction is spelled in bytes below. All are VEX-encoded (Intel SDM vol. 2, "AMX
// instructions"): C4 = three-byte VEX; byte 1 = inverted R, X, B (all 1: no extended
// register) and map 00010 (0F38) = E2; byte 2 = W (0), inverted vvvv, L (0) and pp
// (00 none, 01 66, 10 F3, 11 F2); then the opcode and ModRM (mod, reg, r/m). Memory
// operands of the tile loads and stores are "sibmem": ModRM r/m = 100 with a SIB byte
// (scale 00 = ×1, index = the row stride register, base = the address register), and
// mod 10 adds a 32-bit little-endian displacement. Registers: AX = 000, DX = 010,
// BX = 011, SI = 110, DI = 111; tmmN = N. TestAMXEncodings checks them against a Go
// reference (amxProbe) and, where GNU objdump is installed, against its disassembly.

// LDTILECFG (AX): VEX.128.NP.0F38.W0 49 /0; vvvv unused (1111), pp 00 → 78; ModRM
// 00 000 000.
#define LDTILECFG_AX BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0x00

// TILERELEASE: VEX.128.NP.0F38.W0 49 C0.
#define TILERELEASE BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0xC0

// TILEZERO tmm0 / tmm1: VEX.128.F2.0F38.W0 49, pp 11 → 7B; ModRM 11 rrr 000.
#define TILEZERO_T0 BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $0xC0
#define TILEZERO_T1 BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $0xC8

// TILELOADD tmm, [base+disp+index]: VEX.128.F2.0F38.W0 4B (pp 11 → 7B).
// tmm2, (DI)(DX*1): ModRM 00 010 100 = 14, SIB 00 010 111 = 17.
#define TILELOADD_T2_DI BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x14; BYTE $0x17
// tmm3, 704(DI)(DX*1): ModRM 10 011 100 = 9C, SIB 17, disp32 704 = 0x2C0.
#define TILELOADD_T3_DI704 BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x9C; BYTE $0x17; BYTE $0xC0; BYTE $0x02; BYTE $0x00; BYTE $0x00
// tmm4, (SI)(BX*1): ModRM 00 100 100 = 24, SIB 00 011 110 = 1E.
#define TILELOADD_T4_SI BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x24; BYTE $0x1E
// tmm5, 512(SI)(BX*1): ModRM 10 101 100 = AC, SIB 1E, disp32 0x200.
#define TILELOADD_T5_SI512 BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0xAC; BYTE $0x1E; BYTE $0x00; BYTE $0x02; BYTE $0x00; BYTE $0x00
// tmm4, 2048(AX)(BX*1): ModRM 10 100 100 = A4, SIB 00 011 000 = 18, disp32 0x800.
#define TILELOADD_T4_AX2048 BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0xA4; BYTE $0x18; BYTE $0x00; BYTE $0x08; BYTE $0x00; BYTE $0x00
// tmm5, 2560(AX)(BX*1): ModRM AC, SIB 18, disp32 0xA00.
#define TILELOADD_T5_AX2560 BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0xAC; BYTE $0x18; BYTE $0x00; BYTE $0x0A; BYTE $0x00; BYTE $0x00

// TILESTORED [base+disp+index], tmm: VEX.128.F3.0F38.W0 4B (pp 10 → 7A).
// (AX)(BX*1), tmm0: ModRM 00 000 100 = 04, SIB 18.
#define TILESTORED_AX_T0 BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x04; BYTE $0x18
// 1024(AX)(BX*1), tmm1: ModRM 10 001 100 = 8C, SIB 18, disp32 0x400.
#define TILESTORED_AX1024_T1 BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $0x8C; BYTE $0x18; BYTE $0x00; BYTE $0x04; BYTE $0x00; BYTE $0x00

// TILELOADD tmm6, 64(AX)(BX*1): ModRM 01 110 100 = 74 (mod 01: 8-bit displacement),
// SIB 18, disp8 0x40.
#define TILELOADD_T6_AX64 BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $0x74; BYTE $0x18; BYTE $0x40

// TDPBSSD tmm_dst, tmm_a, tmm_b (signed · signed): VEX.128.F2.0F38.W0 5E (pp 11).
// tmm0, tmm2, tmm6: byte 2 = 0 1001 0 11 = 4B, ModRM 11 000 010 = C2.
#define TDPBSSD_T0_T2_T6 BYTE $0xC4; BYTE $0xE2; BYTE $0x4B; BYTE $0x5E; BYTE $0xC2
// tmm1, tmm3, tmm6: byte 2 4B, ModRM 11 001 011 = CB.
#define TDPBSSD_T1_T3_T6 BYTE $0xC4; BYTE $0xE2; BYTE $0x4B; BYTE $0x5E; BYTE $0xCB

// TDPBSUD tmm_dst, tmm_a, tmm_b (dst += signed bytes of a · unsigned bytes of b, four
// at a time into int32): VEX.128.F3.0F38.W0 5E, ModRM 11 dst a, vvvv = inverted b.
// tmm0, tmm2, tmm4: byte 2 = 0 1011 0 10 = 5A, ModRM 11 000 010 = C2.
#define TDPBSUD_T0_T2_T4 BYTE $0xC4; BYTE $0xE2; BYTE $0x5A; BYTE $0x5E; BYTE $0xC2
// tmm1, tmm3, tmm5: byte 2 = 0 1010 0 10 = 52, ModRM 11 001 011 = CB.
#define TDPBSUD_T1_T3_T5 BYTE $0xC4; BYTE $0xE2; BYTE $0x52; BYTE $0x5E; BYTE $0xCB

// AMX_ENTER loads the tile configuration, tmm6 (−k) and a kernel's arguments: CX units, SI tile,
// DI activation blocks (16·32 bytes of quants, then 16 float32 d, 16 int32 starting
// sums, 16 float32 min sums: 704 bytes), AX and R13 the two scratch buffers, DX and
// BX the row strides 32 and 64; Z0–Z15 (token 0–15's accumulators over the 16 rows)
// are zeroed.
#define AMX_ENTER \
	MOVQ cfg+32(FP), AX \
	MOVQ $64, BX \
	LDTILECFG_AX \
	TILELOADD_T6_AX64 \
	MOVQ nu+0(FP), CX \
	MOVQ tile+8(FP), SI \
	MOVQ act+16(FP), DI \
	MOVQ scr+24(FP), AX \
	LEAQ 3072(AX), R13 \
	MOVQ $32, DX \
	ZEROZ0_15

// AMX_LEAVE releases the tiles, stores token t's accumulator at out + t·ostride and
// returns.
#define AMX_LEAVE \
	TILERELEASE \
	MOVQ out+40(FP), R9 \
	MOVQ ostride+48(FP), R10 \
	VMOVUPS Z0, (R9) \
	VMOVUPS Z1, (R9)(R10*1) \
	LEAQ (R9)(R10*2), R9 \
	VMOVUPS Z2, (R9) \
	VMOVUPS Z3, (R9)(R10*1) \
	LEAQ (R9)(R10*2), R9 \
	VMOVUPS Z4, (R9) \
	VMOVUPS Z5, (R9)(R10*1) \
	LEAQ (R9)(R10*2), R9 \
	VMOVUPS Z6, (R9) \
	VMOVUPS Z7, (R9)(R10*1) \
	LEAQ (R9)(R10*2), R9 \
	VMOVUPS Z8, (R9) \
	VMOVUPS Z9, (R9)(R10*1) \
	LEAQ (R9)(R10*2), R9 \
	VMOVUPS Z10, (R9) \
	VMOVUPS Z11, (R9)(R10*1) \
	LEAQ (R9)(R10*2), R9 \
	VMOVUPS Z12, (R9) \
	VMOVUPS Z13, (R9)(R10*1) \
	LEAQ (R9)(R10*2), R9 \
	VMOVUPS Z14, (R9) \
	VMOVUPS Z15, (R9)(R10*1) \
	VZEROUPPER \
	RET

// FST applies one token's block sums (row t of the result tile at c(R13): start +
// Σq·y, int32) to its accumulator ACC, as the VNNI kernels' FMA4 does:
// ACC = fma(float(sum), ws·d, ACC), with the rows' scales ws in Z16 and the block's
// tail (d first) at R12.
#define FST(c, t, ACC, A, B) \
	VCVTDQ2PS (c+64*t)(R13), A \
	VMULPS.BCST (4*t)(R12), Z16, B \
	VFMADD231PS B, A, ACC

// FSTAGE applies a block's result tile at c(R13) to all sixteen tokens.
#define FSTAGE(c) \
	FST(c, 0, Z0, Z17, Z18) \
	FST(c, 1, Z1, Z19, Z20) \
	FST(c, 2, Z2, Z21, Z22) \
	FST(c, 3, Z3, Z23, Z24) \
	FST(c, 4, Z4, Z17, Z18) \
	FST(c, 5, Z5, Z19, Z20) \
	FST(c, 6, Z6, Z21, Z22) \
	FST(c, 7, Z7, Z23, Z24) \
	FST(c, 8, Z8, Z17, Z18) \
	FST(c, 9, Z9, Z19, Z20) \
	FST(c, 10, Z10, Z21, Z22) \
	FST(c, 11, Z11, Z23, Z24) \
	FST(c, 12, Z12, Z17, Z18) \
	FST(c, 13, Z13, Z19, Z20) \
	FST(c, 14, Z14, Z21, Z22) \
	FST(c, 15, Z15, Z23, Z24)

// The kernels are software-pipelined over units (pairs of blocks): while the float
// part of unit u runs (AMX_FLOAT, reading its block sums from the scratch buffer at
// R13), the tile part of unit u+1 (AMX_TILES) loads, multiplies and stores into the
// other buffer (AX); the two are swapped after each unit. A buffer is 3 KiB: the two
// blocks' result tiles at 0 and 1024, the two unpacked Q4_0 weight tiles at 2048 and
// 2560. SI and DI point at unit u+1's weights and activations while unit u's float part
// runs, which reaches back by one unit.

// AMX_TILES multiplies the unit's two blocks (tmm4/tmm5 loaded with their weights,
// activations at DI) with sixteen tokens, adds the starting sums (tmm6) and stores
// the block sums at 0(AX) and 1024(AX).
#define AMX_TILES \
	TILELOADD_T2_DI \
	TILEZERO_T0 \
	TDPBSUD_T0_T2_T4 \
	TDPBSSD_T0_T2_T6 \
	TILESTORED_AX_T0 \
	TILELOADD_T3_DI704 \
	TILEZERO_T1 \
	TDPBSUD_T1_T3_T5 \
	TDPBSSD_T1_T3_T6 \
	TILESTORED_AX1024_T1

// AMX_FLOAT applies the previous unit's block sums (at R13) with its fp16 row scales
// at s0−ub(SI) and s1−ub(SI) (ub: the unit's bytes) and its activation tails.
#define AMX_FLOAT(s0, s1, ub) \
	VCVTPH2PS (s0-ub)(SI), Z16 \
	LEAQ (512-1408)(DI), R12 \
	FSTAGE(0) \
	VCVTPH2PS (s1-ub)(SI), Z16 \
	LEAQ (1216-1408)(DI), R12 \
	FSTAGE(1024)

// AMX_STEP steps SI and DI to the next unit and swaps the scratch buffers.
#define AMX_STEP(ub) \
	ADDQ $ub, SI \
	ADDQ $1408, DI \
	XCHGQ AX, R13

// PF_ACT prefetches the activation blocks of the unit after next (DI points at the next).
#define PF_ACT \
	PREFETCHT0 (1408+0)(DI) \
	PREFETCHT0 (1408+64)(DI) \
	PREFETCHT0 (1408+128)(DI) \
	PREFETCHT0 (1408+192)(DI) \
	PREFETCHT0 (1408+256)(DI) \
	PREFETCHT0 (1408+320)(DI) \
	PREFETCHT0 (1408+384)(DI) \
	PREFETCHT0 (1408+448)(DI) \
	PREFETCHT0 (1408+512)(DI) \
	PREFETCHT0 (1408+576)(DI) \
	PREFETCHT0 (1408+640)(DI) \
	PREFETCHT0 (1408+704)(DI) \
	PREFETCHT0 (1408+768)(DI) \
	PREFETCHT0 (1408+832)(DI) \
	PREFETCHT0 (1408+896)(DI) \
	PREFETCHT0 (1408+960)(DI) \
	PREFETCHT0 (1408+1024)(DI) \
	PREFETCHT0 (1408+1088)(DI) \
	PREFETCHT0 (1408+1152)(DI) \
	PREFETCHT0 (1408+1216)(DI) \
	PREFETCHT0 (1408+1280)(DI) \
	PREFETCHT0 (1408+1344)(DI)

// PF_Q8 and PF_Q4 prefetch the weights of the unit after next (SI points at the next).
#define PF_Q8 \
	PREFETCHT0 (1088+0)(SI) \
	PREFETCHT0 (1088+64)(SI) \
	PREFETCHT0 (1088+128)(SI) \
	PREFETCHT0 (1088+192)(SI) \
	PREFETCHT0 (1088+256)(SI) \
	PREFETCHT0 (1088+320)(SI) \
	PREFETCHT0 (1088+384)(SI) \
	PREFETCHT0 (1088+448)(SI) \
	PREFETCHT0 (1088+512)(SI) \
	PREFETCHT0 (1088+576)(SI) \
	PREFETCHT0 (1088+640)(SI) \
	PREFETCHT0 (1088+704)(SI) \
	PREFETCHT0 (1088+768)(SI) \
	PREFETCHT0 (1088+832)(SI) \
	PREFETCHT0 (1088+896)(SI) \
	PREFETCHT0 (1088+960)(SI) \
	PREFETCHT0 (1088+1024)(SI)

#define PF_Q4 \
	PREFETCHT0 (576+0)(SI) \
	PREFETCHT0 (576+64)(SI) \
	PREFETCHT0 (576+128)(SI) \
	PREFETCHT0 (576+192)(SI) \
	PREFETCHT0 (576+256)(SI) \
	PREFETCHT0 (576+320)(SI) \
	PREFETCHT0 (576+384)(SI) \
	PREFETCHT0 (576+448)(SI) \
	PREFETCHT0 (576+512)(SI)

// Q8LOADB loads a Q8_0 unit's two weight tiles (tile.go: per pair of blocks, 2×8
// chunks of 64 bytes, chunk c holding row r's quants 4c…4c+3 at 4r, which is tile B's
// layout as it is) into tmm4 and tmm5.
#define Q8LOADB \
	TILELOADD_T4_SI \
	TILELOADD_T5_SI512

// func amxQ8x16(nu int, tile, act, scr, cfg *byte, out *float32, ostride int)
//
// Q8_0 tiles (two blocks of quants, then 2×16 fp16 scales: 1088 bytes a unit) times
// sixteen tokens.
TEXT ·amxQ8x16(SB), NOSPLIT, $0-56
	AMX_ENTER
	TESTQ CX, CX
	JZ amxq8_done
	Q8LOADB
	AMX_TILES
	AMX_STEP(1088)
	DECQ CX
	JZ amxq8_last
amxq8_loop:
	Q8LOADB
	AMX_TILES
	PF_ACT
	PF_Q8
	AMX_FLOAT(1024, 1056, 1088)
	AMX_STEP(1088)
	DECQ CX
	JNZ amxq8_loop
amxq8_last:
	AMX_FLOAT(1024, 1056, 1088)
amxq8_done:
	AMX_LEAVE

// Q4SPLIT writes nibble word c of a Q4_0 block at q(SI) as chunks c (low nibbles:
// quants 4c…4c+3) and 4+c (high nibbles: 16+4c…) of tile B at b(AX).
#define Q4SPLIT(q, b, c) \
	VMOVDQU64 (q+64*c)(SI), Z25 \
	VPSRLW $4, Z25, Z26 \
	VPANDQ Z31, Z25, Z25 \
	VPANDQ Z31, Z26, Z26 \
	VMOVDQU64 Z25, (b+64*c)(AX) \
	VMOVDQU64 Z26, (b+256+64*c)(AX)

// Q4LOADB splits a Q4_0 unit's nibbles (tile.go: per pair of blocks, 2×4 words of
// nibbles, then 2×16 fp16 scales) into tile B's bytes at 2048(AX) and 2560(AX) and
// loads them into tmm4 and tmm5.
#define Q4LOADB \
	Q4SPLIT(0, 2048, 0) \
	Q4SPLIT(0, 2048, 1) \
	Q4SPLIT(0, 2048, 2) \
	Q4SPLIT(0, 2048, 3) \
	Q4SPLIT(256, 2560, 0) \
	Q4SPLIT(256, 2560, 1) \
	Q4SPLIT(256, 2560, 2) \
	Q4SPLIT(256, 2560, 3) \
	TILELOADD_T4_AX2048 \
	TILELOADD_T5_AX2560

// func amxQ4x16(nu int, tile, act, scr, cfg *byte, out *float32, ostride int)
//
// Q4_0 tiles (576 bytes a unit) times sixteen tokens.
TEXT ·amxQ4x16(SB), NOSPLIT, $0-56
	AMX_ENTER
	MOVL $0x0F0F0F0F, R9
	VPBROADCASTD R9, Z31
	TESTQ CX, CX
	JZ amxq4_done
	Q4LOADB
	AMX_TILES
	AMX_STEP(576)
	DECQ CX
	JZ amxq4_last
amxq4_loop:
	Q4LOADB
	AMX_TILES
	PF_ACT
	PF_Q4
	AMX_FLOAT(512, 544, 576)
	AMX_STEP(576)
	DECQ CX
	JNZ amxq4_loop
amxq4_last:
	AMX_FLOAT(512, 544, 576)
amxq4_done:
	AMX_LEAVE

// FSTK is FST followed by the min term of a Q4_K sub-block, as the VNNI kernels' MIN4
// does: ACC = fma(wm, m, ACC), with the rows' min factors −dmin·m in Z30 and token t's
// min sum d·Σy at 128+4t(R12).
#define FSTK(c, t, ACC, A, B) \
	FST(c, t, ACC, A, B) \
	VFMADD231PS.BCST (128+4*t)(R12), Z30, ACC

// FSTAGEK is FSTAGE with FSTK.
#define FSTAGEK(c) \
	FSTK(c, 0, Z0, Z17, Z18) \
	FSTK(c, 1, Z1, Z19, Z20) \
	FSTK(c, 2, Z2, Z21, Z22) \
	FSTK(c, 3, Z3, Z23, Z24) \
	FSTK(c, 4, Z4, Z17, Z18) \
	FSTK(c, 5, Z5, Z19, Z20) \
	FSTK(c, 6, Z6, Z21, Z22) \
	FSTK(c, 7, Z7, Z23, Z24) \
	FSTK(c, 8, Z8, Z17, Z18) \
	FSTK(c, 9, Z9, Z19, Z20) \
	FSTK(c, 10, Z10, Z21, Z22) \
	FSTK(c, 11, Z11, Z23, Z24) \
	FSTK(c, 12, Z12, Z17, Z18) \
	FSTK(c, 13, Z13, Z19, Z20) \
	FSTK(c, 14, Z14, Z21, Z22) \
	FSTK(c, 15, Z15, Z23, Z24)

// Q4K_SUB applies sub-block j's block sums (at c(R13), activation tail at t(DI)): row
// scales d·sc into Z16 and min factors −dmin·m into Z30 (as the VNNI kernels'
// Q4K_SCALES: sc and m bytes at 64+16j(SI) and 192+16j(SI), d in Z28, −dmin in Z29),
// then FSTAGEK.
#define Q4K_SUB(j, c, t) \
	VPMOVZXBD (64+16*j)(SI), Z16 \
	VCVTDQ2PS Z16, Z16 \
	VMULPS Z28, Z16, Z16 \
	VPMOVZXBD (192+16*j)(SI), Z30 \
	VCVTDQ2PS Z30, Z30 \
	VMULPS Z29, Z30, Z30 \
	LEAQ t(DI), R12 \
	FSTAGEK(c)

// Q4K_PAIR runs sub-blocks j and j1 = j+1 (a macro argument is pasted as text, so the
// caller spells j1 out) of the super-block at SI (nibbles at 320+256j, laid out as a
// Q4_0 block's) against sixteen tokens (DI) and steps DI past them.
#define Q4K_PAIR(j, j1) \
	Q4SPLIT(320+256*j, 2048, 0) \
	Q4SPLIT(320+256*j, 2048, 1) \
	Q4SPLIT(320+256*j, 2048, 2) \
	Q4SPLIT(320+256*j, 2048, 3) \
	Q4SPLIT(576+256*j, 2560, 0) \
	Q4SPLIT(576+256*j, 2560, 1) \
	Q4SPLIT(576+256*j, 2560, 2) \
	Q4SPLIT(576+256*j, 2560, 3) \
	TILELOADD_T4_AX2048 \
	TILELOADD_T5_AX2560 \
	AMX_TILES \
	MOVQ AX, R13 \
	Q4K_SUB(j, 0, 512) \
	Q4K_SUB(j1, 1024, 1216) \
	ADDQ $1408, DI

// func amxQ4Kx16(nu int, tile, act, scr, cfg *byte, out *float32, ostride int)
//
// Q4_K tiles (tile.go: per 256-element super-block, 16 fp16 d, 16 fp16 dmin, 8×16 scale
// bytes, 8×16 min bytes, eight 32-element sub-blocks of Q4_0-style nibbles; 2368 bytes)
// times sixteen tokens. Not pipelined: each pair of sub-blocks is split, multiplied and
// applied in turn (k = 0, so tmm6 is zero and TDPBSSD adds nothing).
TEXT ·amxQ4Kx16(SB), NOSPLIT, $0-56
	AMX_ENTER
	MOVL $0x0F0F0F0F, R9
	VPBROADCASTD R9, Z31
	MOVL $0x80000000, R9
	VPBROADCASTD R9, Z27
	TESTQ CX, CX
	JZ amxq4k_done
amxq4k_loop:
	VCVTPH2PS (SI), Z28
	VCVTPH2PS 32(SI), Z29
	VPXORD Z27, Z29, Z29
	Q4K_PAIR(0, 1)
	Q4K_PAIR(2, 3)
	Q4K_PAIR(4, 5)
	Q4K_PAIR(6, 7)
	ADDQ $2368, SI
	DECQ CX
	JNZ amxq4k_loop
amxq4k_done:
	AMX_LEAVE

// func amxProbe(a, b, scr, cfg *byte, q4 bool)
TEXT ·amxProbe(SB), NOSPLIT, $0-33
	MOVQ cfg+24(FP), AX
	MOVQ $64, BX
	LDTILECFG_AX
	TILELOADD_T6_AX64
	MOVQ a+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ scr+16(FP), AX
	MOVQ $32, DX
	TILEZERO_T0
	TILEZERO_T1
	TILELOADD_T2_DI
	TILELOADD_T3_DI704
	TILELOADD_T4_SI
	TILELOADD_T5_SI512
	TDPBSUD_T0_T2_T4
	TDPBSUD_T1_T3_T5
	MOVB q4+32(FP), CX
	TESTB CX, CX
	JZ probe_start
	TILELOADD_T4_AX2048
	TILELOADD_T5_AX2560
	TDPBSUD_T0_T2_T4
	TDPBSUD_T1_T3_T5
probe_start:
	TDPBSSD_T0_T2_T6
	TDPBSSD_T1_T3_T6
	TILESTORED_AX_T0
	TILESTORED_AX1024_T1
	TILERELEASE
	RET
