//go:build amd64 && !purego

#include "textflag.h"
#include "lanes_amd64.h"

// Attention tile kernels (AVX2, FMA, F16C): a tile of scores, the softmax's
// exponentials and the weighted sum of value rows, each over many cache rows in one
// call. Every row and lane is computed with exactly the instructions of the one-row
// kernels in dot_amd64.s (dotF32F16 / dotF32x8 then a float32 scale, axpyF16x8 /
// axpyF32x8) and of exp32, in the same order, so the results are theirs bit for bit.

// LOADH and LOADS load eight keys or values at memory operand m as float32 into Y:
// from halves (F16) or singles (F32).
#define LOADH(m, Y) VCVTPH2PS m, Y
#define LOADS(m, Y) VMOVUPS m, Y

// FCH adds one chunk of a row, loaded from m by LOAD into T, times the query chunk Q
// to accumulator A.
#define FCH(LOAD, m, Q, T, A) \
	LOAD(m, T) \
	VFMADD231PS Q, T, A

// RED4T reduces four rows' folded accumulators A, B, C, D (each its eight lanes) with
// HSUM's additions in HSUM's order: each row's 128-bit halves added (two rows per
// VPERM2F128 pair), then two horizontal adds leave row r's sum in element r; the four
// sums are multiplied by the scale broadcast in S and stored at off(R9). T0…T2 (X0,
// X1 their low halves) are clobbered.
#define RED4T(A, B, C, D, T0, X0, T1, X1, T2, S, off) \
	VPERM2F128 $0x20, B, A, T0 \
	VPERM2F128 $0x31, B, A, T1 \
	VADDPS T1, T0, T0 \
	VPERM2F128 $0x20, D, C, T1 \
	VPERM2F128 $0x31, D, C, T2 \
	VADDPS T2, T1, T1 \
	VHADDPS T1, T0, T0 \
	VHADDPS T0, T0, T0 \
	VEXTRACTF128 $1, T0, X1 \
	VUNPCKLPS X1, X0, X0 \
	VMULPS S, X0, X0 \
	VMOVUPS X0, off(R9)

// FOUR4 is SCORES's loop over four rows at once (R11, R11+R8, R13, R13+R8): each
// row's two accumulators (Y3/Y9, Y10/Y11, Y12/Y13, Y14/Y15) take the chunks exactly as
// the one-row loop does, four independent chains instead of one. The four sums are
// reduced together with HSUM's additions in HSUM's order: each row's 256-bit halves
// added (two rows per VPERM2F128 pair), then two horizontal adds leave row r's sum in
// element r, scaled with one multiply and stored with one move.
#define FOUR4(LOAD, CH) \
	VBROADCASTSS X8, X7 \
four: \
	CMPQ CX, $4 \
	JLT fourdone \
	VXORPS Y3, Y3, Y3 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	VXORPS Y11, Y11, Y11 \
	VXORPS Y12, Y12, Y12 \
	VXORPS Y13, Y13, Y13 \
	VXORPS Y14, Y14, Y14 \
	VXORPS Y15, Y15, Y15 \
	MOVQ SI, R10 \
	MOVQ DI, R11 \
	LEAQ (DI)(R8*2), R13 \
	MOVQ DX, R12 \
	CMPQ R12, $2 \
	JLT ftail \
fpair: \
	VMOVUPS (R10), Y5 \
	VMOVUPS 32(R10), Y6 \
	FCH(LOAD, (R11), Y5, Y0, Y3) \
	FCH(LOAD, CH(R11), Y6, Y1, Y9) \
	FCH(LOAD, (R11)(R8*1), Y5, Y0, Y10) \
	FCH(LOAD, CH(R11)(R8*1), Y6, Y1, Y11) \
	FCH(LOAD, (R13), Y5, Y0, Y12) \
	FCH(LOAD, CH(R13), Y6, Y1, Y13) \
	FCH(LOAD, (R13)(R8*1), Y5, Y0, Y14) \
	FCH(LOAD, CH(R13)(R8*1), Y6, Y1, Y15) \
	ADDQ $64, R10 \
	ADDQ $(2*CH), R11 \
	ADDQ $(2*CH), R13 \
	SUBQ $2, R12 \
	CMPQ R12, $2 \
	JGE fpair \
ftail: \
	TESTQ R12, R12 \
	JZ fred \
	VMOVUPS (R10), Y5 \
	FCH(LOAD, (R11), Y5, Y0, Y3) \
	FCH(LOAD, (R11)(R8*1), Y5, Y0, Y10) \
	FCH(LOAD, (R13), Y5, Y0, Y12) \
	FCH(LOAD, (R13)(R8*1), Y5, Y0, Y14) \
fred: \
	VADDPS Y9, Y3, Y3 \
	VADDPS Y11, Y10, Y10 \
	VADDPS Y13, Y12, Y12 \
	VADDPS Y15, Y14, Y14 \
	RED4T(Y3, Y10, Y12, Y14, Y0, X0, Y1, X1, Y2, X7, 0) \
	ADDQ $16, R9 \
	LEAQ (DI)(R8*4), DI \
	SUBQ $4, CX \
	JMP four \
fourdone:

// KVPF(m) prefetches the line at m into L1; KVNOPF(m) is nothing: the two builds of
// the cache-row copies below (…pf with prefetch, for a decode step's cold cache).
#define KVPF(m) PREFETCHT0 m
#define KVNOPF(m)

// DQ8BLK dequantizes the Q8_0 block at P (an fp16 scale, 32 int8 quants) to the 32
// floats at DI: each quant widened (exact) times the scale, one rounded multiply.
#define DQ8BLK(P) \
	MOVWLZX (P), AX \
	VMOVD AX, X0 \
	VCVTPH2PS X0, X0 \
	VBROADCASTSS X0, Y0 \
	VPMOVSXBD 2(P), Y1 \
	VPMOVSXBD 10(P), Y2 \
	VPMOVSXBD 18(P), Y3 \
	VPMOVSXBD 26(P), Y4 \
	VCVTDQ2PS Y1, Y1 \
	VCVTDQ2PS Y2, Y2 \
	VCVTDQ2PS Y3, Y3 \
	VCVTDQ2PS Y4, Y4 \
	VMULPS Y0, Y1, Y1 \
	VMULPS Y0, Y2, Y2 \
	VMULPS Y0, Y3, Y3 \
	VMULPS Y0, Y4, Y4 \
	VMOVUPS Y1, (DI) \
	VMOVUPS Y2, 32(DI) \
	VMOVUPS Y3, 64(DI) \
	VMOVUPS Y4, 96(DI)

// DEQROWS(PF) is the body of dequantQ8x8rows / dequantQ8x8rowspf: dequantQ8x8 for n
// rows of nb blocks, row i at src + i·stride bytes, written one after another to dst;
// with KVPF WIDEN's prefetches, each block's two lines 16 rows further on and in the
// rows at also (also = src for none).
#define DEQROWS(PF) \
	MOVQ n+0(FP), CX \
	MOVQ src+8(FP), SI \
	MOVQ stride+16(FP), R8 \
	MOVQ nb+24(FP), DX \
	MOVQ dst+32(FP), DI \
	MOVQ also+40(FP), R11 \
	SUBQ SI, R11 \
	MOVQ R8, R9 \
	SHLQ $4, R9 \
dqr_row: \
	MOVQ SI, R10 \
	MOVQ DX, R12 \
dqr_blk: \
	PF((R10)(R9*1)) \
	PF(33(R10)(R9*1)) \
	PF((R10)(R11*1)) \
	PF(33(R10)(R11*1)) \
	DQ8BLK(R10) \
	ADDQ $34, R10 \
	ADDQ $128, DI \
	DECQ R12 \
	JNZ dqr_blk \
	ADDQ R8, SI \
	DECQ CX \
	JNZ dqr_row \
	VZEROUPPER \
	RET

// WIDEN(PF) is the body of widenF16x8 / widenF16x8pf: n rows of n8 chunks of eight
// halves, row i at src + i·stride bytes, written one after another to dst (VCVTPH2PS,
// exact); with KVPF each chunk pair prefetches its bytes 16 rows further on, and the
// same bytes of the rows at also (another cache's rows, at the same offsets from also
// as from src; also = src for none).
#define WIDEN(PF) \
	MOVQ n+0(FP), CX \
	MOVQ src+8(FP), SI \
	MOVQ stride+16(FP), R8 \
	MOVQ n8+24(FP), DX \
	MOVQ dst+32(FP), DI \
	MOVQ also+40(FP), R11 \
	SUBQ SI, R11 \
	MOVQ R8, R9 \
	SHLQ $4, R9 \
wrow: \
	MOVQ SI, R10 \
	MOVQ DX, R12 \
	CMPQ R12, $2 \
	JLT wone \
wpair: \
	PF((R10)(R9*1)) \
	PF((R10)(R11*1)) \
	VCVTPH2PS (R10), Y0 \
	VCVTPH2PS 16(R10), Y1 \
	VMOVUPS Y0, (DI) \
	VMOVUPS Y1, 32(DI) \
	ADDQ $32, R10 \
	ADDQ $64, DI \
	SUBQ $2, R12 \
	CMPQ R12, $2 \
	JGE wpair \
wone: \
	TESTQ R12, R12 \
	JZ wnext \
	PF((R10)(R9*1)) \
	PF((R10)(R11*1)) \
	VCVTPH2PS (R10), Y0 \
	VMOVUPS Y0, (DI) \
	ADDQ $32, DI \
wnext: \
	ADDQ R8, SI \
	DECQ CX \
	JNZ wrow \
	VZEROUPPER \
	RET

// SCORES is the body of scoresF16x8 / scoresF32x8: for each of n rows (row stride R8
// bytes), the dot product of the query at SI (n8 chunks of eight floats) with the row
// in two interleaved accumulators as dotF32F16 does, reduced with HSUM and multiplied
// by the scale. CH is the bytes of one chunk of a row. Rows go four at a time (FOUR4)
// while four are left, then one at a time.
#define SCORES(LOAD, CH) \
	SCOREARGS \
	SCOREREST(LOAD, CH)

// SCOREARGS loads the scores kernels' arguments: CX rows, SI the query, DX its chunks
// of eight, DI the first row, R8 the row stride, X8 the scale, R9 out.
#define SCOREARGS \
	MOVQ n+0(FP), CX \
	MOVQ q+8(FP), SI \
	MOVQ n8+16(FP), DX \
	MOVQ k+24(FP), DI \
	MOVQ stride+32(FP), R8 \
	VMOVSS scale+40(FP), X8 \
	MOVQ out+48(FP), R9

// SCOREREST is SCORES after its arguments: rows four at a time, then one at a time.
#define SCOREREST(LOAD, CH) \
	FOUR4(LOAD, CH) \
	TESTQ CX, CX \
	JZ done \
row: \
	VXORPS Y3, Y3, Y3 \
	VXORPS Y9, Y9, Y9 \
	MOVQ SI, R10 \
	MOVQ DI, R11 \
	MOVQ DX, R12 \
	CMPQ R12, $2 \
	JLT tail \
pair: \
	LOAD((R11), Y0) \
	LOAD(CH(R11), Y1) \
	VFMADD231PS (R10), Y0, Y3 \
	VFMADD231PS 32(R10), Y1, Y9 \
	ADDQ $64, R10 \
	ADDQ $(2*CH), R11 \
	SUBQ $2, R12 \
	CMPQ R12, $2 \
	JGE pair \
tail: \
	TESTQ R12, R12 \
	JZ red \
	LOAD((R11), Y0) \
	VFMADD231PS (R10), Y0, Y3 \
red: \
	VADDPS Y9, Y3, Y3 \
	HSUM \
	VMULSS X8, X3, X3 \
	VMOVSS X3, (R9) \
	ADDQ $4, R9 \
	ADDQ R8, DI \
	DECQ CX \
	JNZ row \
done: \
	VZEROUPPER \
	RET

// ACCUM is the body of accumF16x8 / accumF32x8: acc (n8 chunks of eight floats at R9)
// += w[i] · row i for each of n rows (row stride R8 bytes), one fused multiply-add per
// row and lane in row order, as axpyF16x8 does row after row. Eight chunks of acc stay
// in registers while the rows stream past (ACCN), then four, two, one: each chunk is a
// chain of dependent multiply-adds, one per row, so the more chunks a pass holds the
// more chains run side by side (one chunk at a time waits out the multiply-add's
// latency on every row).
#define ACCUM(LOAD, CH) \
	MOVQ n+0(FP), CX \
	MOVQ w+8(FP), SI \
	MOVQ v+16(FP), DI \
	MOVQ stride+24(FP), R8 \
	MOVQ n8+32(FP), DX \
	MOVQ acc+40(FP), R9 \
	TESTQ CX, CX \
	JZ done \
eight: \
	CMPQ DX, $8 \
	JLT four \
	VMOVUPS (R9), Y0 \
	VMOVUPS 32(R9), Y1 \
	VMOVUPS 64(R9), Y2 \
	VMOVUPS 96(R9), Y3 \
	VMOVUPS 128(R9), Y4 \
	VMOVUPS 160(R9), Y5 \
	VMOVUPS 192(R9), Y6 \
	VMOVUPS 224(R9), Y7 \
	MOVQ SI, R10 \
	MOVQ DI, R11 \
	MOVQ CX, R12 \
row8: \
	VBROADCASTSS (R10), Y8 \
	LOAD((R11), Y9) \
	LOAD(CH(R11), Y10) \
	LOAD(2*CH(R11), Y11) \
	LOAD(3*CH(R11), Y12) \
	VFMADD231PS Y9, Y8, Y0 \
	VFMADD231PS Y10, Y8, Y1 \
	VFMADD231PS Y11, Y8, Y2 \
	VFMADD231PS Y12, Y8, Y3 \
	LOAD(4*CH(R11), Y13) \
	LOAD(5*CH(R11), Y14) \
	LOAD(6*CH(R11), Y15) \
	LOAD(7*CH(R11), Y9) \
	VFMADD231PS Y13, Y8, Y4 \
	VFMADD231PS Y14, Y8, Y5 \
	VFMADD231PS Y15, Y8, Y6 \
	VFMADD231PS Y9, Y8, Y7 \
	ADDQ $4, R10 \
	ADDQ R8, R11 \
	DECQ R12 \
	JNZ row8 \
	VMOVUPS Y0, (R9) \
	VMOVUPS Y1, 32(R9) \
	VMOVUPS Y2, 64(R9) \
	VMOVUPS Y3, 96(R9) \
	VMOVUPS Y4, 128(R9) \
	VMOVUPS Y5, 160(R9) \
	VMOVUPS Y6, 192(R9) \
	VMOVUPS Y7, 224(R9) \
	ADDQ $256, R9 \
	ADDQ $(8*CH), DI \
	SUBQ $8, DX \
	JMP eight \
four: \
	CMPQ DX, $4 \
	JLT two \
	VMOVUPS (R9), Y0 \
	VMOVUPS 32(R9), Y1 \
	VMOVUPS 64(R9), Y2 \
	VMOVUPS 96(R9), Y3 \
	MOVQ SI, R10 \
	MOVQ DI, R11 \
	MOVQ CX, R12 \
row4: \
	VBROADCASTSS (R10), Y4 \
	LOAD((R11), Y5) \
	LOAD(CH(R11), Y6) \
	LOAD(2*CH(R11), Y7) \
	LOAD(3*CH(R11), Y8) \
	VFMADD231PS Y5, Y4, Y0 \
	VFMADD231PS Y6, Y4, Y1 \
	VFMADD231PS Y7, Y4, Y2 \
	VFMADD231PS Y8, Y4, Y3 \
	ADDQ $4, R10 \
	ADDQ R8, R11 \
	DECQ R12 \
	JNZ row4 \
	VMOVUPS Y0, (R9) \
	VMOVUPS Y1, 32(R9) \
	VMOVUPS Y2, 64(R9) \
	VMOVUPS Y3, 96(R9) \
	ADDQ $128, R9 \
	ADDQ $(4*CH), DI \
	SUBQ $4, DX \
	JMP four \
two: \
	CMPQ DX, $2 \
	JLT one \
	VMOVUPS (R9), Y0 \
	VMOVUPS 32(R9), Y1 \
	MOVQ SI, R10 \
	MOVQ DI, R11 \
	MOVQ CX, R12 \
row2: \
	VBROADCASTSS (R10), Y4 \
	LOAD((R11), Y5) \
	LOAD(CH(R11), Y6) \
	VFMADD231PS Y5, Y4, Y0 \
	VFMADD231PS Y6, Y4, Y1 \
	ADDQ $4, R10 \
	ADDQ R8, R11 \
	DECQ R12 \
	JNZ row2 \
	VMOVUPS Y0, (R9) \
	VMOVUPS Y1, 32(R9) \
	ADDQ $64, R9 \
	ADDQ $(2*CH), DI \
	SUBQ $2, DX \
	JMP two \
one: \
	TESTQ DX, DX \
	JZ done \
	VMOVUPS (R9), Y0 \
	MOVQ SI, R10 \
	MOVQ DI, R11 \
	MOVQ CX, R12 \
row1: \
	VBROADCASTSS (R10), Y4 \
	LOAD((R11), Y5) \
	VFMADD231PS Y5, Y4, Y0 \
	ADDQ $4, R10 \
	ADDQ R8, R11 \
	DECQ R12 \
	JNZ row1 \
	VMOVUPS Y0, (R9) \
	ADDQ $32, R9 \
	ADDQ $CH, DI \
	DECQ DX \
	JMP one \
done: \
	VZEROUPPER \
	RET

// LOADZH and LOADZS load sixteen keys at memory operand m as float32 into Z: from
// halves (F16) or singles (F32).
#define LOADZH(m, Z) VCVTPH2PS m, Z
#define LOADZS(m, Z) VMOVUPS m, Z

// FCHZ adds sixteen elements of a row, loaded from m by LOADZ into T, times the query
// elements in Z12 to the row's accumulator A.
#define FCHZ(LOADZ, m, T, A) \
	LOADZ(m, T) \
	VFMADD231PS Z12, T, A

// FCHT adds a last chunk of eight elements, loaded from m by LOAD into Y13 (its upper
// half zeroed), times the query chunk in Y12 to the low half of A only (mask K1), the
// upper half left as it is.
#define FCHT(LOAD, m, A) \
	LOAD(m, Y13) \
	VFMADD231PS Z12, Z13, K1, A

// FOLD adds the upper half of Z (odd chunks of eight) to its lower half (even ones),
// into Y: the two-accumulator sum of dotF32F16 and FOUR4 (VADDPS of the odd into the
// even), bit for bit.
#define FOLD(Z, Y) \
	VEXTRACTF32X8 $1, Z, Y9 \
	VADDPS Y9, Y, Y

// RED4 is RED4T for EIGHT16: rows in Y0…Y3 or Y4…Y7 (folded), temporaries Y9…Y11,
// the scale broadcast in X15.
#define RED4(A, B, C, D, off) RED4T(A, B, C, D, Y9, X9, Y10, X10, Y11, X15, off)

// EIGHT16 is the AVX-512 scores kernels' loop over eight rows at once (DI + r·R8):
// row r's sum in Z(r), sixteen elements per fused multiply-add, where FOUR4 takes two
// ymm accumulators per row. Lane l < 8 of Z(r) sums what FOUR4's even accumulator's
// lane l sums (the chunks 0, 2, 4, …), lane 8+l what its odd one sums, in the same
// order; a last odd chunk goes to the low half alone, as FOUR4 adds it to the even
// accumulator. FOLD and RED4 then reduce as FOUR4 does, so every score is FOUR4's and
// the one-row kernel's bit for bit. Eight independent chains of sixteen lanes where
// FOUR4 has eight of eight: the loop is no longer bound by the multiply-add's latency.
#define EIGHT16(LOADZ, LOAD, CH) \
	VBROADCASTSS X8, X15 \
	MOVQ $0xFF, AX \
	KMOVW AX, K1 \
eight: \
	CMPQ CX, $8 \
	JLT eightdone \
	ZEROZ0_7 \
	MOVQ SI, R10 \
	MOVQ DI, R11 \
	LEAQ (DI)(R8*2), R13 \
	ADDQ R8, R13 \
	LEAQ (R13)(R8*2), R14 \
	ADDQ R8, R14 \
	MOVQ DX, R12 \
	CMPQ R12, $2 \
	JLT etail \
epair: \
	VMOVUPS (R10), Z12 \
	FCHZ(LOADZ, (R11), Z13, Z0) \
	FCHZ(LOADZ, (R11)(R8*1), Z14, Z1) \
	FCHZ(LOADZ, (R11)(R8*2), Z13, Z2) \
	FCHZ(LOADZ, (R13), Z14, Z3) \
	FCHZ(LOADZ, (R13)(R8*1), Z13, Z4) \
	FCHZ(LOADZ, (R13)(R8*2), Z14, Z5) \
	FCHZ(LOADZ, (R14), Z13, Z6) \
	FCHZ(LOADZ, (R14)(R8*1), Z14, Z7) \
	ADDQ $64, R10 \
	ADDQ $(2*CH), R11 \
	ADDQ $(2*CH), R13 \
	ADDQ $(2*CH), R14 \
	SUBQ $2, R12 \
	CMPQ R12, $2 \
	JGE epair \
etail: \
	TESTQ R12, R12 \
	JZ ered \
	VMOVUPS (R10), Y12 \
	FCHT(LOAD, (R11), Z0) \
	FCHT(LOAD, (R11)(R8*1), Z1) \
	FCHT(LOAD, (R11)(R8*2), Z2) \
	FCHT(LOAD, (R13), Z3) \
	FCHT(LOAD, (R13)(R8*1), Z4) \
	FCHT(LOAD, (R13)(R8*2), Z5) \
	FCHT(LOAD, (R14), Z6) \
	FCHT(LOAD, (R14)(R8*1), Z7) \
ered: \
	FOLD(Z0, Y0) \
	FOLD(Z1, Y1) \
	FOLD(Z2, Y2) \
	FOLD(Z3, Y3) \
	FOLD(Z4, Y4) \
	FOLD(Z5, Y5) \
	FOLD(Z6, Y6) \
	FOLD(Z7, Y7) \
	RED4(Y0, Y1, Y2, Y3, 0) \
	RED4(Y4, Y5, Y6, Y7, 16) \
	ADDQ $32, R9 \
	LEAQ (DI)(R8*8), DI \
	SUBQ $8, CX \
	JMP eight \
eightdone:

// func scoresF16x8(n int, q *float32, n8 int, k *uint16, stride int, scale float32, out *float32)
TEXT ·scoresF16x8(SB), NOSPLIT, $0-56
	SCORES(LOADH, 16)

// func scoresF32x8(n int, q *float32, n8 int, k *float32, stride int, scale float32, out *float32)
TEXT ·scoresF32x8(SB), NOSPLIT, $0-56
	SCORES(LOADS, 32)

// func scoresF16x16(n int, q *float32, n8 int, k *uint16, stride int, scale float32, out *float32)
//
// scoresF16x8 for AVX-512 CPUs: eight rows at a time in zmm registers (EIGHT16), then
// as scoresF16x8; the same scores bit for bit.
TEXT ·scoresF16x16(SB), NOSPLIT, $0-56
	SCOREARGS
	EIGHT16(LOADZH, LOADH, 16)
	SCOREREST(LOADH, 16)

// func scoresF32x16(n int, q *float32, n8 int, k *float32, stride int, scale float32, out *float32)
//
// scoresF16x16 for float32 rows.
TEXT ·scoresF32x16(SB), NOSPLIT, $0-56
	SCOREARGS
	EIGHT16(LOADZS, LOADS, 32)
	SCOREREST(LOADS, 32)

// func accumF16x8(n int, w *float32, v *uint16, stride int, n8 int, acc *float32)
TEXT ·accumF16x8(SB), NOSPLIT, $0-48
	ACCUM(LOADH, 16)

// func accumF32x8(n int, w *float32, v *float32, stride int, n8 int, acc *float32)
TEXT ·accumF32x8(SB), NOSPLIT, $0-48
	ACCUM(LOADS, 32)

// ACC2ROW4 adds row i's chunks in Z10…Z13 times the weights broadcast in Z8 (head 0)
// and Z9 (head 1) to the accumulators Z0…Z3 and Z4…Z7.
#define ACC2ROW4 \
	VFMADD231PS Z10, Z8, Z0 \
	VFMADD231PS Z11, Z8, Z1 \
	VFMADD231PS Z12, Z8, Z2 \
	VFMADD231PS Z13, Z8, Z3 \
	VFMADD231PS Z10, Z9, Z4 \
	VFMADD231PS Z11, Z9, Z5 \
	VFMADD231PS Z12, Z9, Z6 \
	VFMADD231PS Z13, Z9, Z7

// func accumF32x16pair(n int, w0, w1 *float32, v *float32, stride int, n16 int, acc0, acc1 *float32)
//
// accumF32x8 for two heads over the same n float32 rows (row stride bytes apart):
// acc0 (n16 chunks of sixteen floats) += w0[i] · row i and acc1 += w1[i] · row i,
// one fused multiply-add per row and lane in row order (each head's sums are
// accumF32x8's bit for bit). Four chunks of both heads stay in registers while the
// rows stream past, eight chains side by side where one head of 64 elements has four
// in zmm registers; each row is loaded once for the two heads.
TEXT ·accumF32x16pair(SB), NOSPLIT, $0-64
	MOVQ n+0(FP), CX
	MOVQ w0+8(FP), SI
	MOVQ w1+16(FP), BX
	MOVQ v+24(FP), DI
	MOVQ stride+32(FP), R8
	MOVQ n16+40(FP), DX
	MOVQ acc0+48(FP), R9
	MOVQ acc1+56(FP), R15
	TESTQ CX, CX
	JZ pdone
pfour:
	CMPQ DX, $4
	JLT pone
	VMOVUPS (R9), Z0
	VMOVUPS 64(R9), Z1
	VMOVUPS 128(R9), Z2
	VMOVUPS 192(R9), Z3
	VMOVUPS (R15), Z4
	VMOVUPS 64(R15), Z5
	VMOVUPS 128(R15), Z6
	VMOVUPS 192(R15), Z7
	MOVQ SI, R10
	MOVQ BX, R13
	MOVQ DI, R11
	MOVQ CX, R12
prow4:
	VBROADCASTSS (R10), Z8
	VBROADCASTSS (R13), Z9
	VMOVUPS (R11), Z10
	VMOVUPS 64(R11), Z11
	VMOVUPS 128(R11), Z12
	VMOVUPS 192(R11), Z13
	ACC2ROW4
	ADDQ $4, R10
	ADDQ $4, R13
	ADDQ R8, R11
	DECQ R12
	JNZ prow4
	VMOVUPS Z0, (R9)
	VMOVUPS Z1, 64(R9)
	VMOVUPS Z2, 128(R9)
	VMOVUPS Z3, 192(R9)
	VMOVUPS Z4, (R15)
	VMOVUPS Z5, 64(R15)
	VMOVUPS Z6, 128(R15)
	VMOVUPS Z7, 192(R15)
	ADDQ $256, R9
	ADDQ $256, R15
	ADDQ $256, DI
	SUBQ $4, DX
	JMP pfour
pone:
	TESTQ DX, DX
	JZ pdone
	VMOVUPS (R9), Z0
	VMOVUPS (R15), Z4
	MOVQ SI, R10
	MOVQ BX, R13
	MOVQ DI, R11
	MOVQ CX, R12
prow1:
	VBROADCASTSS (R10), Z8
	VBROADCASTSS (R13), Z9
	VMOVUPS (R11), Z10
	VFMADD231PS Z10, Z8, Z0
	VFMADD231PS Z10, Z9, Z4
	ADDQ $4, R10
	ADDQ $4, R13
	ADDQ R8, R11
	DECQ R12
	JNZ prow1
	VMOVUPS Z0, (R9)
	VMOVUPS Z4, (R15)
	ADDQ $64, R9
	ADDQ $64, R15
	ADDQ $64, DI
	DECQ DX
	JMP pone
pdone:
	VZEROUPPER
	RET

// func expSumx8(n int, s *float32, m float32, c *expVec) float64
//
// s[i] = exp32(s[i] − m) for the n values at s, each step rounded to float32 as exp32
// rounds it (no fused operations), returning their sum in float64: lanes 0-3 and 4-7
// of each group of eight summed in two four-lane float64 accumulators, then
// ((a0+b0)+(a2+b2)) + ((a1+b1)+(a3+b3)). A last group of fewer than eight is loaded,
// stored and summed under a lane mask. c holds exp32's constants (see expVec).
TEXT ·expSumx8(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ s+8(FP), SI
	VBROADCASTSS m+16(FP), Y15
	MOVQ c+24(FP), R8
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	VPCMPEQD Y14, Y14, Y14        // all lanes: the full groups' mask
exs_loop:
	CMPQ CX, $8
	JGE exs_full
	TESTQ CX, CX
	JZ exs_done
	MOVQ CX, X9                   // a last group of CX < 8: lanes below CX
	VPBROADCASTD X9, Y9
	VMOVDQU 480(R8), Y10
	VPCMPGTD Y10, Y9, Y14         // CX > lane
	VMASKMOVPS (SI), Y14, Y0
	JMP exs_group
exs_full:
	VMOVUPS (SI), Y0
exs_group:
	VSUBPS Y15, Y0, Y0            // x = s − m
	VMULPS 0(R8), Y0, Y1          // t = x·log2e
	VADDPS 32(R8), Y1, Y2         // t + 0.5
	VSUBPS 32(R8), Y1, Y3         // t − 0.5
	VXORPS Y4, Y4, Y4
	VCMPPS $1, Y4, Y1, Y4         // t < 0
	VBLENDVPS Y4, Y3, Y2, Y2
	VCVTTPS2DQ Y2, Y5             // n, truncated as Go's int32(·)
	VCVTDQ2PS Y5, Y6              // fn
	VMULPS 64(R8), Y6, Y7
	VSUBPS Y7, Y0, Y7             // r = x − fn·ln2Hi
	VMULPS 96(R8), Y6, Y8
	VSUBPS Y8, Y7, Y7             // r −= fn·ln2Lo
	VMULPS 128(R8), Y7, Y8
	VADDPS 160(R8), Y8, Y8        // p = P0·r + P1
	VMULPS Y7, Y8, Y8
	VADDPS 192(R8), Y8, Y8        // p·r + P2
	VMULPS Y7, Y8, Y8
	VADDPS 224(R8), Y8, Y8        // p·r + P3
	VMULPS Y7, Y8, Y8
	VADDPS 256(R8), Y8, Y8        // p·r + P4
	VMULPS Y7, Y8, Y8
	VADDPS 288(R8), Y8, Y8        // p·r + P5
	VMULPS Y7, Y8, Y8
	VMULPS Y7, Y8, Y8
	VADDPS Y7, Y8, Y8
	VADDPS 320(R8), Y8, Y8        // ((p·r)·r + r) + 1
	VPSRAD $1, Y5, Y9             // n1 = n >> 1
	VPSUBD Y9, Y5, Y10            // n − n1
	VPADDD 352(R8), Y9, Y9
	VPSLLD $23, Y9, Y9            // 2^n1
	VPADDD 352(R8), Y10, Y10
	VPSLLD $23, Y10, Y10          // 2^(n−n1)
	VMULPS Y9, Y8, Y8
	VMULPS Y10, Y8, Y8
	VCMPPS $1, 384(R8), Y0, Y11   // x < expLo: 0
	VANDNPS Y8, Y11, Y8
	VCMPPS $0x1e, 416(R8), Y0, Y11 // x > expHi: +Inf
	VBLENDVPS Y11, 448(R8), Y8, Y8
	VCMPPS $3, Y0, Y0, Y11        // NaN: x
	VBLENDVPS Y11, Y0, Y8, Y8
	VANDPS Y14, Y8, Y9            // the group's lanes only, into the sums
	VCVTPS2PD X9, Y10
	VEXTRACTF128 $1, Y9, X11
	VCVTPS2PD X11, Y11
	VADDPD Y10, Y12, Y12
	VADDPD Y11, Y13, Y13
	CMPQ CX, $8
	JLT exs_last
	VMOVUPS Y8, (SI)
	ADDQ $32, SI
	SUBQ $8, CX
	JMP exs_loop
exs_last:
	VMASKMOVPS Y8, Y14, (SI)
exs_done:
	VADDPD Y13, Y12, Y12
	VEXTRACTF128 $1, Y12, X13
	VADDPD X13, X12, X12
	VHADDPD X12, X12, X12
	VMOVSD X12, ret+32(FP)
	VZEROUPPER
	RET

// func expSumx16(n int, s *float32, m float32, c *expVec) float64
//
// expSumx8 for AVX-512 CPUs, sixteen values per group: the same float32 operations
// per value (constants broadcast from c's lanes, the selections under mask registers
// instead of VBLENDVPS), and the same float64 sums: lanes 0-7 of a group added to
// the eight-lane accumulator Z12 (expSumx8's a in its low half, b in its high), then
// lanes 8-15, as expSumx8 adds two groups of eight one after the other. A last group
// of fewer than sixteen goes under the mask K2; its missing lanes add +0 to sums that
// are never −0, as expSumx8's masked lanes do.
TEXT ·expSumx16(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ s+8(FP), SI
	VBROADCASTSS m+16(FP), Z15
	MOVQ c+24(FP), R8
	VXORPD Z12, Z12, Z12
	VXORPS Z4, Z4, Z4
exz_loop:
	KXNORW K2, K2, K2             // all sixteen lanes
	CMPQ CX, $16
	JGE exz_full
	TESTQ CX, CX
	JZ exz_done
	MOVQ $1, AX                   // a last group of CX < 16: lanes below CX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K2
	VMOVUPS.Z (SI), K2, Z0
	JMP exz_group
exz_full:
	VMOVUPS (SI), Z0
exz_group:
	VSUBPS Z15, Z0, Z0            // x = s − m
	VMULPS.BCST 0(R8), Z0, Z1     // t = x·log2e
	VADDPS.BCST 32(R8), Z1, Z2    // t + 0.5
	VSUBPS.BCST 32(R8), Z1, Z3    // t − 0.5
	VCMPPS $1, Z4, Z1, K3         // t < 0
	VMOVAPS Z3, K3, Z2
	VCVTTPS2DQ Z2, Z5             // n, truncated as Go's int32(·)
	VCVTDQ2PS Z5, Z6              // fn
	VMULPS.BCST 64(R8), Z6, Z7
	VSUBPS Z7, Z0, Z7             // r = x − fn·ln2Hi
	VMULPS.BCST 96(R8), Z6, Z8
	VSUBPS Z8, Z7, Z7             // r −= fn·ln2Lo
	VMULPS.BCST 128(R8), Z7, Z8
	VADDPS.BCST 160(R8), Z8, Z8   // p = P0·r + P1
	VMULPS Z7, Z8, Z8
	VADDPS.BCST 192(R8), Z8, Z8   // p·r + P2
	VMULPS Z7, Z8, Z8
	VADDPS.BCST 224(R8), Z8, Z8   // p·r + P3
	VMULPS Z7, Z8, Z8
	VADDPS.BCST 256(R8), Z8, Z8   // p·r + P4
	VMULPS Z7, Z8, Z8
	VADDPS.BCST 288(R8), Z8, Z8   // p·r + P5
	VMULPS Z7, Z8, Z8
	VMULPS Z7, Z8, Z8
	VADDPS Z7, Z8, Z8
	VADDPS.BCST 320(R8), Z8, Z8   // ((p·r)·r + r) + 1
	VPSRAD $1, Z5, Z9             // n1 = n >> 1
	VPSUBD Z9, Z5, Z10            // n − n1
	VPADDD.BCST 352(R8), Z9, Z9
	VPSLLD $23, Z9, Z9            // 2^n1
	VPADDD.BCST 352(R8), Z10, Z10
	VPSLLD $23, Z10, Z10          // 2^(n−n1)
	VMULPS Z9, Z8, Z8
	VMULPS Z10, Z8, Z8
	VCMPPS.BCST $1, 384(R8), Z0, K4    // x < expLo: 0
	VXORPS Z8, Z8, K4, Z8
	VCMPPS.BCST $0x1e, 416(R8), Z0, K5 // x > expHi: +Inf
	VBROADCASTSS 448(R8), K5, Z8
	VCMPPS $3, Z0, Z0, K6         // NaN: x
	VMOVAPS Z0, K6, Z8
	VMOVAPS.Z Z8, K2, Z9          // the group's lanes only, into the sums
	VCVTPS2PD Y9, Z10
	VADDPD Z10, Z12, Z12
	VEXTRACTF32X8 $1, Z9, Y11
	VCVTPS2PD Y11, Z11
	VADDPD Z11, Z12, Z12
	CMPQ CX, $16
	JLT exz_last
	VMOVUPS Z8, (SI)
	ADDQ $64, SI
	SUBQ $16, CX
	JMP exz_loop
exz_last:
	VMOVUPS Z8, K2, (SI)
exz_done:
	VEXTRACTF64X4 $1, Z12, Y13
	VADDPD Y13, Y12, Y12
	VEXTRACTF128 $1, Y12, X13
	VADDPD X13, X12, X12
	VHADDPD X12, X12, X12
	VMOVSD X12, ret+32(FP)
	VZEROUPPER
	RET

// func maxF32x8(n8 int, s *float32, m float32) float32
//
// The largest of m and the 8·n8 values at s, NaNs passed over: each lane keeps a value
// only when it is greater than the lane's maximum (VMAXPS returns its second source
// when either is NaN), as tileMaxGo's v > m. Two accumulators, then the lanes.
TEXT ·maxF32x8(SB), NOSPLIT, $0-28
	MOVQ n8+0(FP), CX
	MOVQ s+8(FP), SI
	VBROADCASTSS m+16(FP), Y0
	VMOVAPS Y0, Y1
mx_pair:
	CMPQ CX, $2
	JLT mx_one
	VMOVUPS (SI), Y2
	VMOVUPS 32(SI), Y3
	VMAXPS Y0, Y2, Y0
	VMAXPS Y1, Y3, Y1
	ADDQ $64, SI
	SUBQ $2, CX
	JMP mx_pair
mx_one:
	TESTQ CX, CX
	JZ mx_lanes
	VMOVUPS (SI), Y2
	VMAXPS Y0, Y2, Y0
mx_lanes:
	VMAXPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4E, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VMAXPS X1, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func scaleF32x8(n8 int, s *float32, f float32)
//
// s[i] *= f for the 8·n8 values at s (one rounded multiply each, as in Go).
TEXT ·scaleF32x8(SB), NOSPLIT, $0-20
	MOVQ n8+0(FP), CX
	MOVQ s+8(FP), SI
	VBROADCASTSS f+16(FP), Y0
sc_loop:
	VMULPS (SI), Y0, Y1
	VMOVUPS Y1, (SI)
	ADDQ $32, SI
	DECQ CX
	JNZ sc_loop
	VZEROUPPER
	RET

// func dequantQ8x8(nb int, b *byte, dst *float32)
//
// dequantQ8 for nb Q8_0 blocks at b (34 bytes each: an fp16 scale, 32 int8 quants):
// dst gets each quant widened (exact) times the block's scale, one rounded multiply,
// as the Go loop computes it.
TEXT ·dequantQ8x8(SB), NOSPLIT, $0-24
	MOVQ nb+0(FP), CX
	MOVQ b+8(FP), SI
	MOVQ dst+16(FP), DI
dq_loop:
	DQ8BLK(SI)
	ADDQ $34, SI
	ADDQ $128, DI
	DECQ CX
	JNZ dq_loop
	VZEROUPPER
	RET

// func prefetchRows(n int, p *byte, stride int, bytes int)
//
// Prefetches into L1 the lines of n rows of the given bytes each, row i at
// p + i·stride: every 64th byte of a row and its last.
TEXT ·prefetchRows(SB), NOSPLIT, $0-32
	MOVQ n+0(FP), CX
	MOVQ p+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ bytes+24(FP), DX
	TESTQ CX, CX
	JZ pfr_done
	TESTQ DX, DX
	JZ pfr_done
pfr_row:
	XORQ AX, AX
pfr_line:
	PREFETCHT0 (SI)(AX*1)
	ADDQ $64, AX
	CMPQ AX, DX
	JLT pfr_line
	PREFETCHT0 -1(SI)(DX*1)
	ADDQ R8, SI
	DECQ CX
	JNZ pfr_row
pfr_done:
	RET

// func dequantQ8x8rows(n int, src *byte, stride int, nb int, dst *float32, also *byte)
//
// dequantRows for n rows (DEQROWS without prefetch; also is not read).
TEXT ·dequantQ8x8rows(SB), NOSPLIT, $0-48
	DEQROWS(KVNOPF)

// func dequantQ8x8rowspf(n int, src *byte, stride int, nb int, dst *float32, also *byte)
//
// dequantQ8x8rows with DEQROWS's prefetches.
TEXT ·dequantQ8x8rowspf(SB), NOSPLIT, $0-48
	DEQROWS(KVPF)

// func widenF16x8(n int, src *uint16, stride int, n8 int, dst *float32, also *uint16)
//
// widenF16Rows for n rows (WIDEN without prefetch; also is not read).
TEXT ·widenF16x8(SB), NOSPLIT, $0-48
	WIDEN(KVNOPF)

// func widenF16x8pf(n int, src *uint16, stride int, n8 int, dst *float32, also *uint16)
//
// widenF16x8 with WIDEN's prefetches.
TEXT ·widenF16x8pf(SB), NOSPLIT, $0-48
	WIDEN(KVPF)
