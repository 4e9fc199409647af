//go:build amd64 && !purego

#include "textflag.h"
#include "lanes_amd64.h"

// The AVX2 kernels of the F16/BF16 float path (halfKern with eight lanes): weights
// widened in registers (VCVTPH2PS, or VPMOVZXWD+VPSLLD for BF16), activations already
// float32, eight lanes per output (element 8s+L in lane L) accumulated with
// VFMADD231PS in element order and reduced by RED8, as halfKern.dotGo does.

#define CVTH8(m, Y) \
	VCVTPH2PS m, Y

#define CVTB8(m, Y) \
	VPMOVZXWD m, Y \
	VPSLLD $16, Y, Y

// X8SETUP loads the arguments of the x4 kernels: rows at SI, R8, R9, R10, the token
// at DI; accumulators Y8..Y11 cleared.
#define X8SETUP \
	MOVQ n32+0(FP), CX \
	MOVQ w+8(FP), SI \
	MOVQ stride+16(FP), DX \
	MOVQ x+24(FP), DI \
	MOVQ out+32(FP), AX \
	LEAQ (SI)(DX*1), R8 \
	LEAQ (R8)(DX*1), R9 \
	LEAQ (R9)(DX*1), R10 \
	VXORPS Y8, Y8, Y8 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	VXORPS Y11, Y11, Y11

// ROW8 adds one row's 32 values at (P) times the activations Y12..Y15 to ACC, eight
// elements at a time in order.
#define ROW8(CVT, P, ACC) \
	CVT((P), Y0) \
	CVT(16(P), Y1) \
	CVT(32(P), Y2) \
	CVT(48(P), Y3) \
	VFMADD231PS Y12, Y0, ACC \
	VFMADD231PS Y13, Y1, ACC \
	VFMADD231PS Y14, Y2, ACC \
	VFMADD231PS Y15, Y3, ACC

// ROW8M is ROW8 with the row's four 16-byte chunks at memory operands m0…m3.
#define ROW8M(CVT, m0, m1, m2, m3, ACC) \
	CVT(m0, Y0) \
	CVT(m1, Y1) \
	CVT(m2, Y2) \
	CVT(m3, Y3) \
	VFMADD231PS Y12, Y0, ACC \
	VFMADD231PS Y13, Y1, ACC \
	VFMADD231PS Y14, Y2, ACC \
	VFMADD231PS Y15, Y3, ACC

// X8ROWS is the body of dotF16rows8 / dotBF16rows8, the AVX2 twins of dotF16rows: nrows
// rows (w, w+stride, …) times one row of float32 activations, each row summed as the
// x4 kernels sum it (ROW8, RED8), the sums stored at out[0…nrows). Row i of each of
// the four quarters of h = nrows/4 rows is summed in one pass (four long forward
// streams, no software prefetch); the last nrows mod 4 rows run one at a time.
//
// Registers: AX out, BX rows left, CX end of x, DX stride, SI w, DI x, R8/R9 the
// first/third quarter's row, R10 x within the row, R11 h·stride, R12 4h, R13 quads
// left.
#define X8ROWS(CVT) \
	MOVQ n32+0(FP), CX \
	MOVQ w+8(FP), SI \
	MOVQ stride+16(FP), DX \
	MOVQ nrows+24(FP), BX \
	MOVQ x+32(FP), DI \
	MOVQ out+40(FP), AX \
	SHLQ $7, CX \
	ADDQ DI, CX \
	MOVQ BX, R13 \
	SHRQ $2, R13 \
	JZ single \
	MOVQ R13, R11 \
	IMULQ DX, R11 \
	LEAQ (R13*4), R12 \
	LEAQ (R13*4), R8 \
	SUBQ R8, BX \
quad: \
	VXORPS Y8, Y8, Y8 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	VXORPS Y11, Y11, Y11 \
	MOVQ SI, R8 \
	LEAQ (SI)(R11*2), R9 \
	MOVQ DI, R10 \
qstep: \
	VMOVUPS (R10), Y12 \
	VMOVUPS 32(R10), Y13 \
	VMOVUPS 64(R10), Y14 \
	VMOVUPS 96(R10), Y15 \
	ROW8M(CVT, (R8), 16(R8), 32(R8), 48(R8), Y8) \
	ROW8M(CVT, (R8)(R11*1), 16(R8)(R11*1), 32(R8)(R11*1), 48(R8)(R11*1), Y9) \
	ROW8M(CVT, (R9), 16(R9), 32(R9), 48(R9), Y10) \
	ROW8M(CVT, (R9)(R11*1), 16(R9)(R11*1), 32(R9)(R11*1), 48(R9)(R11*1), Y11) \
	ADDQ $64, R8 \
	ADDQ $64, R9 \
	ADDQ $128, R10 \
	CMPQ R10, CX \
	JB qstep \
	RED8TO(Y8, X8, (AX)) \
	RED8TO(Y9, X9, (AX)(R12*1)) \
	RED8TO(Y10, X10, (AX)(R12*2)) \
	LEAQ (AX)(R12*2), R10 \
	RED8TO(Y11, X11, (R10)(R12*1)) \
	ADDQ $4, AX \
	ADDQ DX, SI \
	DECQ R13 \
	JNZ quad \
	LEAQ (SI)(R11*2), SI \
	ADDQ R11, SI \
	LEAQ (AX)(R12*2), AX \
	ADDQ R12, AX \
single: \
	TESTQ BX, BX \
	JZ done \
row: \
	VXORPS Y8, Y8, Y8 \
	MOVQ SI, R8 \
	MOVQ DI, R10 \
step: \
	VMOVUPS (R10), Y12 \
	VMOVUPS 32(R10), Y13 \
	VMOVUPS 64(R10), Y14 \
	VMOVUPS 96(R10), Y15 \
	ROW8(CVT, R8, Y8) \
	ADDQ $64, R8 \
	ADDQ $128, R10 \
	CMPQ R10, CX \
	JB step \
	RED8(Y8, X8, 0) \
	ADDQ $4, AX \
	ADDQ DX, SI \
	DECQ BX \
	JNZ row \
done: \
	VZEROUPPER \
	RET

// X8STEP is one step of 32 elements of four rows (prefetching each row 512 bytes
// ahead, as the AVX-512 kernels do).
#define X8STEP(CVT) \
	PREFETCHT0 512(SI) \
	PREFETCHT0 512(R8) \
	PREFETCHT0 512(R9) \
	PREFETCHT0 512(R10) \
	VMOVUPS (DI), Y12 \
	VMOVUPS 32(DI), Y13 \
	VMOVUPS 64(DI), Y14 \
	VMOVUPS 96(DI), Y15 \
	ROW8(CVT, SI, Y8) \
	ROW8(CVT, R8, Y9) \
	ROW8(CVT, R9, Y10) \
	ROW8(CVT, R10, Y11) \
	ADDQ $64, SI \
	ADDQ $64, R8 \
	ADDQ $64, R9 \
	ADDQ $64, R10 \
	ADDQ $128, DI

#define X8DONE \
	RED8(Y8, X8, 0) \
	RED8(Y9, X9, 4) \
	RED8(Y10, X10, 8) \
	RED8(Y11, X11, 12) \
	VZEROUPPER \
	RET

// G8SETUP loads the arguments of the gemm kernels: rows at SI, R8 and R9, tokens at
// DI, R12, R13, R14 (tokens past ntok repeating the last), the twelve accumulators
// cleared. Three rows × four tokens keep twelve independent chains of fused
// multiply-adds in flight (two rows' eight waited on their latency: llama-1b F16 pp128
// -t 2 on AMD Zen 4 at LLMBENCH_CPU=avx2, 58.9 → 72.4 t/s).
#define G8SETUP \
	MOVQ n16+0(FP), CX \
	MOVQ w+8(FP), SI \
	MOVQ wstride+16(FP), DX \
	MOVQ x+24(FP), DI \
	MOVQ xstride+32(FP), BX \
	MOVQ ntok+40(FP), AX \
	LEAQ (SI)(DX*1), R8 \
	LEAQ (R8)(DX*1), R9 \
	LEAQ (DI)(BX*1), R12 \
	CMPQ AX, $2 \
	CMOVQLT DI, R12 \
	LEAQ (R12)(BX*1), R13 \
	CMPQ AX, $3 \
	CMOVQLT R12, R13 \
	LEAQ (R13)(BX*1), R14 \
	CMPQ AX, $4 \
	CMOVQLT R13, R14 \
	MOVQ out+48(FP), AX \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y7, Y7, Y7 \
	VXORPS Y8, Y8, Y8 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	VXORPS Y11, Y11, Y11 \
	VXORPS Y12, Y12, Y12 \
	VXORPS Y13, Y13, Y13 \
	VXORPS Y14, Y14, Y14 \
	VXORPS Y15, Y15, Y15

// G8TOK multiplies the three widened rows Y4, Y5, Y6 by one token's eight activations
// at memory operand m into the accumulators A0, A1, A2.
#define G8TOK(m, A0, A1, A2) \
	VMOVUPS m, Y3 \
	VFMADD231PS Y3, Y4, A0 \
	VFMADD231PS Y3, Y5, A1 \
	VFMADD231PS Y3, Y6, A2

// G8HALF multiplies eight elements (at weight offset wo, activation offset xo) of
// the three rows by the four tokens: token 0 into Y0–Y2, tokens 1–3 into Y7+3(t−1)+r.
#define G8HALF(CVT, wo, xo) \
	CVT(wo(SI), Y4) \
	CVT(wo(R8), Y5) \
	CVT(wo(R9), Y6) \
	G8TOK(xo(DI), Y0, Y1, Y2) \
	G8TOK(xo(R12), Y7, Y8, Y9) \
	G8TOK(xo(R13), Y10, Y11, Y12) \
	G8TOK(xo(R14), Y13, Y14, Y15)

#define G8STEP(CVT) \
	G8HALF(CVT, 0, 0) \
	G8HALF(CVT, 16, 32) \
	ADDQ $32, SI \
	ADDQ $32, R8 \
	ADDQ $32, R9 \
	ADDQ $64, DI \
	ADDQ $64, R12 \
	ADDQ $64, R13 \
	ADDQ $64, R14

// G8DONE stores row r, token t at out[4t+r] (RED8 clobbers X6, a row register by now).
#define G8DONE \
	RED8(Y0, X0, 0) \
	RED8(Y1, X1, 4) \
	RED8(Y2, X2, 8) \
	RED8(Y7, X7, 16) \
	RED8(Y8, X8, 20) \
	RED8(Y9, X9, 24) \
	RED8(Y10, X10, 32) \
	RED8(Y11, X11, 36) \
	RED8(Y12, X12, 40) \
	RED8(Y13, X13, 48) \
	RED8(Y14, X14, 52) \
	RED8(Y15, X15, 56) \
	VZEROUPPER \
	RET

// func dotF16x4AVX2(n32 int, w *byte, stride int, x *byte, out *[4]float32)
TEXT ·dotF16x4AVX2(SB), NOSPLIT, $0-40
	X8SETUP
	TESTQ CX, CX
	JZ hx4_done
hx4_loop:
	X8STEP(CVTH8)
	DECQ CX
	JNZ hx4_loop
hx4_done:
	X8DONE

// func dotBF16x4AVX2(n32 int, w *byte, stride int, x *byte, out *[4]float32)
TEXT ·dotBF16x4AVX2(SB), NOSPLIT, $0-40
	X8SETUP
	TESTQ CX, CX
	JZ bx4_done
bx4_loop:
	X8STEP(CVTB8)
	DECQ CX
	JNZ bx4_loop
bx4_done:
	X8DONE

// func gemmF16x3AVX2(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *[16]float32)
TEXT ·gemmF16x3AVX2(SB), NOSPLIT, $0-56
	G8SETUP
	TESTQ CX, CX
	JZ hg_done
hg_loop:
	G8STEP(CVTH8)
	DECQ CX
	JNZ hg_loop
hg_done:
	G8DONE

// func gemmBF16x3AVX2(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *[16]float32)
TEXT ·gemmBF16x3AVX2(SB), NOSPLIT, $0-56
	G8SETUP
	TESTQ CX, CX
	JZ bg_done
bg_loop:
	G8STEP(CVTB8)
	DECQ CX
	JNZ bg_loop
bg_done:
	G8DONE

// func dotF16rows8(n32 int, w *byte, stride, nrows int, x *byte, out *float32)
TEXT ·dotF16rows8(SB), NOSPLIT, $0-48
	X8ROWS(CVTH8)

// func dotBF16rows8(n32 int, w *byte, stride, nrows int, x *byte, out *float32)
TEXT ·dotBF16rows8(SB), NOSPLIT, $0-48
	X8ROWS(CVTB8)
