//go:build amd64 && !purego

#include "textflag.h"
#include "lanes_amd64.h"

// REDTO sums the 16 lanes of Z (copied to Z0) and stores the float at dst.
#define REDTO(Z, dst) \
	VMOVAPS Z, Z0 \
	VEXTRACTF64X4 $1, Z0, Y1 \
	VADDPS Y1, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS X1, X0, X0 \
	VHADDPS X0, X0, X0 \
	VHADDPS X0, X0, X0 \
	VMOVSS X0, dst

// RED16 is REDTO storing at off(AX).
#define RED16(Z, off) REDTO(Z, off(AX))

// CVTH widens sixteen fp16 values at m to float32 lanes of Z; CVTB sixteen bfloat16
// values (a bfloat16 is the high half of a float32).
#define CVTH(m, Z) \
	VCVTPH2PS m, Z

#define CVTB(m, Z) \
	VPMOVZXWD m, Z \
	VPSLLD $16, Z, Z

// HROW adds one row's 32 16-bit values at (P), widened by CVT, times the float
// activations Z20/Z21 to ACC: elements 0..15, then 16..31 (the order of the gemm
// kernels, so both give the same sums).
#define HROW(CVT, P, ACC, T0, T1) \
	CVT((P), T0) \
	CVT(32(P), T1) \
	VFMADD231PS Z20, T0, ACC \
	VFMADD231PS Z21, T1, ACC

// X4SETUP loads the arguments of the x4 kernels (rows at SI, R8, R9, R10) and
// clears the accumulators; X4STEP is one step of 32 elements; X4DONE stores the sums.
#define X4SETUP \
	MOVQ n32+0(FP), CX \
	MOVQ w+8(FP), SI \
	MOVQ stride+16(FP), DX \
	MOVQ x+24(FP), DI \
	MOVQ out+32(FP), AX \
	LEAQ (SI)(DX*1), R8 \
	LEAQ (R8)(DX*1), R9 \
	LEAQ (R9)(DX*1), R10 \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z12, Z12, Z12 \
	VPXORD Z14, Z14, Z14

// Each step prefetches its four rows 512 bytes ahead into L1 (PREFETCHT0). The
// kernels used to prefetch the next four rows non-temporally (PREFETCHNTA), a few per
// cent faster on AMD Zen 4 but half the read rate on Intel Xeon (Sapphire Rapids
// class: 5.8 GB/s against 13.1 GB/s on one core), where lines fetched that way are
// evicted before use.
#define X4STEP(CVT) \
	PREFETCHT0 512(SI) \
	PREFETCHT0 512(R8) \
	PREFETCHT0 512(R9) \
	PREFETCHT0 512(R10) \
	VMOVUPS (DI), Z20 \
	VMOVUPS 64(DI), Z21 \
	HROW(CVT, SI, Z8, Z0, Z1) \
	HROW(CVT, R8, Z10, Z2, Z3) \
	HROW(CVT, R9, Z12, Z4, Z5) \
	HROW(CVT, R10, Z14, Z6, Z7) \
	ADDQ $64, SI \
	ADDQ $64, R8 \
	ADDQ $64, R9 \
	ADDQ $64, R10 \
	ADDQ $128, DI

#define X4DONE \
	RED16(Z8, 0) \
	RED16(Z10, 4) \
	RED16(Z12, 8) \
	RED16(Z14, 12) \
	VZEROUPPER \
	RET

// F16G4 multiplies the four weight vectors Z16..Z19 by token vector X into
// accumulators A0..A3 (rows 0..3 of that token).
#define F16G4(X, A0, A1, A2, A3) \
	VFMADD231PS X, Z16, A0 \
	VFMADD231PS X, Z17, A1 \
	VFMADD231PS X, Z18, A2 \
	VFMADD231PS X, Z19, A3

// GARGS loads the arguments of the gemm kernels: rows at SI, R8, R9, R10 (wstride in
// DX), tokens at DI, R12, R13, R14 (xstride in BX, ntok in AX), token t ≥ ntok
// reading token ntok−1 (GTOK).
#define GARGS \
	MOVQ n16+0(FP), CX \
	MOVQ w+8(FP), SI \
	MOVQ wstride+16(FP), DX \
	MOVQ x+24(FP), DI \
	MOVQ xstride+32(FP), BX \
	MOVQ ntok+40(FP), AX \
	LEAQ (SI)(DX*1), R8 \
	LEAQ (R8)(DX*1), R9 \
	LEAQ (R9)(DX*1), R10 \
	GTOK(DI, R12, 2) \
	GTOK(R12, R13, 3) \
	GTOK(R13, R14, 4)

// GTOK points next at the token after prev's (BX bytes on), or at prev's where the
// call has fewer than k tokens (AX).
#define GTOK(prev, next, k) \
	LEAQ (prev)(BX*1), next \
	CMPQ AX, $k \
	CMOVQLT prev, next

// GZERO16 clears the accumulators Z0–Z15.
#define GZERO16 ZEROZ0_15

// GSETUP loads the arguments of the gemm kernels (GARGS), out at AX, clears their
// accumulators and the offsets of rows (DX) and tokens (R11).
#define GSETUP \
	GARGS \
	MOVQ out+48(FP), AX \
	GZERO16 \
	XORQ DX, DX \
	XORQ R11, R11

#define GSTEP(CVT) \
	CVT((SI)(DX*1), Z16) \
	CVT((R8)(DX*1), Z17) \
	CVT((R9)(DX*1), Z18) \
	CVT((R10)(DX*1), Z19) \
	VMOVUPS (DI)(R11*1), Z20 \
	VMOVUPS (R12)(R11*1), Z21 \
	VMOVUPS (R13)(R11*1), Z22 \
	VMOVUPS (R14)(R11*1), Z23 \
	F16G4(Z20, Z0, Z1, Z2, Z3) \
	F16G4(Z21, Z4, Z5, Z6, Z7) \
	F16G4(Z22, Z8, Z9, Z10, Z11) \
	F16G4(Z23, Z12, Z13, Z14, Z15) \
	ADDQ $32, DX \
	ADDQ $64, R11

// GDONE stores the sixteen sums, each reduced exactly as RED16 reduces one
// accumulator (its two 256-bit halves added, then its two 128-bit quarters, then two
// horizontal adds), four accumulators per instruction: group g holds accumulators
// Zg, Zg+4, Zg+8, Zg+12 (members 0..3); GRED4 leaves member k's four partial sums in
// 128-bit lane k of its result, and three horizontal adds (HADD512) leave accumulator g+4k's sum in
// element 4k+g, its place in out. (RED16 one accumulator at a time cost eight
// instructions each, as much as the products themselves for a 128-wide row.)
#define GRED4(M0, M1, M2, M3, H) GRED4T(M0, M1, M2, M3, H, Z16, Z17, Z18, Z19, Z20, Z21)

// GRED4T is GRED4 with temporaries T0…T5.
#define GRED4T(M0, M1, M2, M3, H, T0, T1, T2, T3, T4, T5) \
	VSHUFF64X2 $0x44, M1, M0, T0 \
	VSHUFF64X2 $0xEE, M1, M0, T1 \
	VADDPS T1, T0, T0 \
	VSHUFF64X2 $0x44, M3, M2, T2 \
	VSHUFF64X2 $0xEE, M3, M2, T3 \
	VADDPS T3, T2, T2 \
	VSHUFF32X4 $0x88, T2, T0, T4 \
	VSHUFF32X4 $0xDD, T2, T0, T5 \
	VADDPS T5, T4, H

// HADD512 is VHADDPS B, A, D on 512-bit registers (which AVX-512 lacks): in each
// 128-bit lane, D = [a0+a1, a2+a3, b0+b1, b2+b3]. It clobbers Z22, Z23.
#define HADD512(B, A, D) \
	VSHUFPS $0x88, B, A, Z22 \
	VSHUFPS $0xDD, B, A, Z23 \
	VADDPS Z23, Z22, D

#define GDONE \
	GSUM16 \
	VMOVUPS Z30, (AX) \
	VZEROUPPER \
	RET

// GSUM16 is GDONE's reduction: Z0…Z15's sums into Z30 (accumulator g+4k's in element
// 4k+g). It clobbers Z16…Z29.
#define GSUM16 \
	GRED4(Z0, Z4, Z8, Z12, Z24) \
	GRED4(Z1, Z5, Z9, Z13, Z25) \
	GRED4(Z2, Z6, Z10, Z14, Z26) \
	GRED4(Z3, Z7, Z11, Z15, Z27) \
	HADD512(Z25, Z24, Z28) \
	HADD512(Z27, Z26, Z29) \
	HADD512(Z29, Z28, Z30)

// X1ROWS is the body of dotF16rows / dotBF16rows: nrows rows (w, w+stride, …) times one
// row of float32 activations, each row summed exactly as the x4 kernels sum a row (HROW
// per 32 elements into one accumulator, RED16), the sums stored at out[0…nrows).
// The rows are split in four quarters of h = nrows/4 rows, and row i of every quarter
// is summed in the same pass: four long forward streams for the hardware prefetcher
// (no software prefetch) and four independent accumulator chains, where one row at a
// time waits on each FMA's latency. The last nrows mod 4 rows then run one at a time.
// The x4 kernels' four adjacent rows at once are four page-long streams instead. On a
// 2-core AMD EPYC (Zen 4), llama-1b F16 tg32: x4 10.48, one row at a time 13.87
// (medians of five). Quarters against one row at a time, two threads reading 1 GiB of
// 4 KiB rows in runs of 32 to 4096 rows: 1.35–1.5× (28–29 against 19–21 GB/s, file
// mapping or huge-page copy alike); llama-1b tg32 13.16 → 14.25 t/s (medians of six
// alternated runs). Intel Xeon keeps x4 (four streams read faster there, see X4STEP).
//
// QSTEP is one step of 32 elements for the four rows at (R8), (R8)(R11*1), (R9),
// (R9)(R11*1) into Z8…Z11, STEP1 one for the row at (R8) into Z8; XB is the bytes of
// activations per step (R10).
//
// Registers: AX out, BX rows left, CX end of x, DX stride, SI w, DI x, R8/R9 the
// first/third quarter's row, R10 x within the row, R11 h·stride, R12 4h, R13 quads left.
#define X1ROWS(QSTEP, STEP1, XB) \
	MOVQ n32+0(FP), CX \
	MOVQ w+8(FP), SI \
	MOVQ stride+16(FP), DX \
	MOVQ nrows+24(FP), BX \
	MOVQ x+32(FP), DI \
	MOVQ out+40(FP), AX \
	IMULQ $XB, CX \
	ADDQ DI, CX \
	MOVQ BX, R13 \
	SHRQ $2, R13 \
	JZ single \
	MOVQ R13, R11 \
	IMULQ DX, R11 \
	LEAQ (R13*4), R12 \
	MOVQ R13, R8 \
	SHLQ $2, R8 \
	SUBQ R8, BX \
quad: \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	MOVQ SI, R8 \
	LEAQ (SI)(R11*2), R9 \
	MOVQ DI, R10 \
qstep: \
	QSTEP \
	ADDQ $64, R8 \
	ADDQ $64, R9 \
	ADDQ $XB, R10 \
	CMPQ R10, CX \
	JB qstep \
	REDTO(Z8, (AX)) \
	REDTO(Z9, (AX)(R12*1)) \
	REDTO(Z10, (AX)(R12*2)) \
	LEAQ (AX)(R12*2), R10 \
	REDTO(Z11, (R10)(R12*1)) \
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
	VPXORD Z8, Z8, Z8 \
	MOVQ SI, R8 \
	MOVQ DI, R10 \
step: \
	STEP1 \
	ADDQ $64, R8 \
	ADDQ $XB, R10 \
	CMPQ R10, CX \
	JB step \
	RED16(Z8, 0) \
	ADDQ $4, AX \
	ADDQ DX, SI \
	DECQ BX \
	JNZ row \
done: \
	VZEROUPPER \
	RET

// HQUAD(CVT) is X1ROWS's QSTEP for 16-bit weights widened by CVT times float32
// activations (each row as HROW sums it); HONE(CVT) its STEP1.
#define HQUAD(CVT) \
	VMOVUPS (R10), Z20 \
	VMOVUPS 64(R10), Z21 \
	CVT((R8), Z0) \
	CVT((R8)(R11*1), Z2) \
	CVT((R9), Z4) \
	CVT((R9)(R11*1), Z6) \
	CVT(32(R8), Z1) \
	CVT(32(R8)(R11*1), Z3) \
	CVT(32(R9), Z5) \
	CVT(32(R9)(R11*1), Z7) \
	HFMA8

// HFMA8 adds a QSTEP's four widened rows (Z0…Z7, two halves each) times the activations
// Z20, Z21 into Z8…Z11: each row's first half, then its second.
#define HFMA8 \
	VFMADD231PS Z20, Z0, Z8 \
	VFMADD231PS Z20, Z2, Z9 \
	VFMADD231PS Z20, Z4, Z10 \
	VFMADD231PS Z20, Z6, Z11 \
	VFMADD231PS Z21, Z1, Z8 \
	VFMADD231PS Z21, Z3, Z9 \
	VFMADD231PS Z21, Z5, Z10 \
	VFMADD231PS Z21, Z7, Z11

// HQUADPF(CVT, d) is HQUAD with the line d bytes ahead of each row prefetched just
// before that row's loads: the same sums.
#define HQUADPF(CVT, d) \
	VMOVUPS (R10), Z20 \
	VMOVUPS 64(R10), Z21 \
	HROWPF(CVT, d, (R8), Z0, Z1) \
	HROWPF(CVT, d, (R8)(R11*1), Z2, Z3) \
	HROWPF(CVT, d, (R9), Z4, Z5) \
	HROWPF(CVT, d, (R9)(R11*1), Z6, Z7) \
	HFMA8

// HROWPF prefetches the line d bytes past the row at memory operand P and widens the
// row's 32 elements there into T0 and T1.
#define HROWPF(CVT, d, P, T0, T1) \
	PREFETCHT0 d P \
	CVT(P, T0) \
	CVT(32 P, T1)

#define HONE(CVT) \
	VMOVUPS (R10), Z20 \
	VMOVUPS 64(R10), Z21 \
	HROW(CVT, R8, Z8, Z0, Z1)

#define HQUAD_F16 HQUAD(CVTH)
#define HONE_F16 HONE(CVTH)
#define HQUAD_BF16 HQUAD(CVTB)
#define HONE_BF16 HONE(CVTB)

// PFQUAD(d) prefetches the line d bytes ahead of each of X1ROWS's four rows (R8,
// R8+R11, R9, R9+R11): a QSTEP's software prefetch, one line per row and step.
#define PFQUAD(d) \
	PREFETCHT0 d(R8) \
	PREFETCHT0 d(R8)(R11*1) \
	PREFETCHT0 d(R9) \
	PREFETCHT0 d(R9)(R11*1)

// HQUADPF_F16 is HQUAD_F16 reading each row 1024 bytes ahead (HQUADPF): on AMD Zen 5
// the four streams' hardware prefetch alone leaves a core short of the memory's rate
// (see quarterPrefetch). Four prefetches at the step's start, 2048 bytes ahead, read
// slower there than each row's just before its loads, 1024 ahead: one 5632×2048 product
// after another over 1 GiB, two threads 62.7 → 67.8 and 38.8 → 42.5 GB/s (seven
// alternated rounds each, the probe 68 and 38), one thread 34.1 → 36.2; 2048 ahead
// read 64.7, 40.2 and 35.5, 4096 ahead 56.1, 37.7 and 30.2. (BF16's pairs kernel,
// DPQUADPF, read the same either way.) Whole llama-1b F16 decode, -t 2, alternated
// rounds of scripts/bench-ab.sh: 1.029× and 1.033× (tg32, ten rounds each), 1.000×
// (tg64, six), 0.930× (tg64, eight, while the host read 18 t/s where it reads 27).
#define HQUADPF_F16 HQUADPF(CVTH, 1024)

// func dotF16rows(n32 int, w *byte, stride, nrows int, x *byte, out *float32)
TEXT ·dotF16rows(SB), NOSPLIT, $0-48
	X1ROWS(HQUAD_F16, HONE_F16, 128)

// func dotF16rowsPF(n32 int, w *byte, stride, nrows int, x *byte, out *float32)
//
// dotF16rows with software prefetch (HQUADPF_F16), the same sums.
TEXT ·dotF16rowsPF(SB), NOSPLIT, $0-48
	X1ROWS(HQUADPF_F16, HONE_F16, 128)

// func dotBF16rows(n32 int, w *byte, stride, nrows int, x *byte, out *float32)
TEXT ·dotBF16rows(SB), NOSPLIT, $0-48
	X1ROWS(HQUAD_BF16, HONE_BF16, 128)

// VDPBF16PS_Z(s2, s1, d) is VDPBF16PS Z(s2), Z(s1), Z(d) (EVEX.512.F3.0F38.W0 52 /r,
// register operands; Go's assembler lacks AVX512-BF16): for each float lane i,
// Zd[i] += s1[2i+1]·s2[2i+1], rounded, then += s1[2i]·s2[2i], rounded (bfloat16
// products are exact in float32; denormal inputs read as zero, denormal results
// flush to zero). The arguments are register numbers 0…31.
#define VDPBF16PS_Z(s2, s1, d) \
	BYTE $0x62; \
	BYTE $(((1-((d>>3)&1))<<7) | ((1-((s2>>4)&1))<<6) | ((1-((s2>>3)&1))<<5) | ((1-((d>>4)&1))<<4) | 2); \
	BYTE $(((15-(s1&15))<<3) | 6); \
	BYTE $(0x40 | ((1-((s1>>4)&1))<<3)); \
	BYTE $0x52; \
	BYTE $(0xC0 | ((d&7)<<3) | (s2&7))

// DPQUAD / DPONE are X1ROWS's steps for bfloat16 weights times bfloat16 activations
// (32 of each per step, one VDPBF16PS per row).
#define DPQUAD \
	VMOVDQU64 (R10), Z20 \
	VMOVDQU64 (R8), Z0 \
	VMOVDQU64 (R8)(R11*1), Z2 \
	VMOVDQU64 (R9), Z4 \
	VMOVDQU64 (R9)(R11*1), Z6 \
	VDPBF16PS_Z(20, 0, 8) \
	VDPBF16PS_Z(20, 2, 9) \
	VDPBF16PS_Z(20, 4, 10) \
	VDPBF16PS_Z(20, 6, 11)

#define DPONE \
	VMOVDQU64 (R10), Z20 \
	VMOVDQU64 (R8), Z0 \
	VDPBF16PS_Z(20, 0, 8)

// func dotBF16dpRows(n32 int, w *byte, stride, nrows int, x *byte, out *float32)
//
// dotBF16rows for CPUs with AVX512-BF16: x holds the bfloat16 activations themselves
// (64 bytes per step), and each row's sum is the pairs order of VDPBF16PS (see
// halfKern.pairs), the order gemmBF16dp gives every output too.
TEXT ·dotBF16dpRows(SB), NOSPLIT, $0-48
	X1ROWS(DPQUAD, DPONE, 64)

// DPQUADPF is DPQUAD reading each row 1024 bytes ahead (half HQUADPF_F16's distance: a
// step here takes half the time; 2048 and 4096 were slower on AMD Zen 5).
#define DPQUADPF \
	PFQUAD(1024) \
	DPQUAD

// func dotBF16dpRowsPF(n32 int, w *byte, stride, nrows int, x *byte, out *float32)
//
// dotBF16dpRows with software prefetch (DPQUADPF), the same sums.
TEXT ·dotBF16dpRowsPF(SB), NOSPLIT, $0-48
	X1ROWS(DPQUADPF, DPONE, 64)

// func dotBF16dpX4(n32 int, w *byte, stride int, x *byte, out *[4]float32)
//
// dotBF16x4 for CPUs with AVX512-BF16: four rows (w, w+stride, …) times the bfloat16
// activations at x (64 bytes per step), prefetched as X4STEP prefetches; each row is
// summed with one VDPBF16PS per step into one accumulator and reduced with REDTO,
// exactly as dotBF16dpRows sums it. Intel's decode order (four adjacent rows with
// software prefetch; AMD takes the quarters of dotBF16dpRows).
TEXT ·dotBF16dpX4(SB), NOSPLIT, $0-40
	X4SETUP
	TESTQ CX, CX
	JZ dpx4_done
dpx4_loop:
	PREFETCHT0 512(SI)
	PREFETCHT0 512(R8)
	PREFETCHT0 512(R9)
	PREFETCHT0 512(R10)
	VMOVDQU64 (DI), Z20
	VMOVDQU64 (SI), Z0
	VMOVDQU64 (R8), Z2
	VMOVDQU64 (R9), Z4
	VMOVDQU64 (R10), Z6
	VDPBF16PS_Z(20, 0, 8)
	VDPBF16PS_Z(20, 2, 10)
	VDPBF16PS_Z(20, 4, 12)
	VDPBF16PS_Z(20, 6, 14)
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $64, DI
	DECQ CX
	JNZ dpx4_loop
dpx4_done:
	X4DONE

// DPG4(x, w, a0…a3) adds the four rows in registers w…w+3 times the token in register
// x to accumulators a0…a3 (register numbers).
#define DPG4(x, w, a0, a1, a2, a3) \
	VDPBF16PS_Z(x, w, a0) \
	VDPBF16PS_Z(x, (w+1), a1) \
	VDPBF16PS_Z(x, (w+2), a2) \
	VDPBF16PS_Z(x, (w+3), a3)

// func gemmBF16dp(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *[16]float32)
//
// gemmBF16x4 for CPUs with AVX512-BF16: four bfloat16 rows times four tokens'
// bfloat16 activations, 32 elements per step (n16 is even), every output summed in
// the pairs order of VDPBF16PS, as dotBF16dpRows sums a row.
TEXT ·gemmBF16dp(SB), NOSPLIT, $0-56
	GSETUP
	SHRQ $1, CX
	TESTQ CX, CX
	JZ dpg_done
dpg_loop:
	VMOVDQU64 (SI)(DX*1), Z16
	VMOVDQU64 (R8)(DX*1), Z17
	VMOVDQU64 (R9)(DX*1), Z18
	VMOVDQU64 (R10)(DX*1), Z19
	VMOVDQU64 (DI)(R11*1), Z20
	VMOVDQU64 (R12)(R11*1), Z21
	VMOVDQU64 (R13)(R11*1), Z22
	VMOVDQU64 (R14)(R11*1), Z23
	DPG4(20, 16, 0, 1, 2, 3)
	DPG4(21, 16, 4, 5, 6, 7)
	DPG4(22, 16, 8, 9, 10, 11)
	DPG4(23, 16, 12, 13, 14, 15)
	ADDQ $64, DX
	ADDQ $64, R11
	DECQ CX
	JNZ dpg_loop
dpg_done:
	GDONE

// func dotF16x4(n32 int, w *byte, stride int, x *byte, out *[4]float32)
//
// Four F16 rows (w, w+stride, w+2·stride, w+3·stride) times one row of float32
// activations, over n32 steps of 32 elements.
TEXT ·dotF16x4(SB), NOSPLIT, $0-40
	X4SETUP
	TESTQ CX, CX
	JZ f16x4_done
f16x4_loop:
	X4STEP(CVTH)
	DECQ CX
	JNZ f16x4_loop
f16x4_done:
	X4DONE

// func dotBF16x4(n32 int, w *byte, stride int, x *byte, out *[4]float32)
//
// dotF16x4 for BF16 rows.
TEXT ·dotBF16x4(SB), NOSPLIT, $0-40
	X4SETUP
	TESTQ CX, CX
	JZ bf16x4_done
bf16x4_loop:
	X4STEP(CVTB)
	DECQ CX
	JNZ bf16x4_loop
bf16x4_done:
	X4DONE

// func gemmF16x4(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *[16]float32)
//
// Four F16 rows (w + r·wstride) times four float32 token rows (x + t·xstride, tokens
// past ntok repeating the last) over n16 steps of 16 elements; out[4t+r] receives
// each product (its 16 lanes reduced as RED16 does).
TEXT ·gemmF16x4(SB), NOSPLIT, $0-56
	GSETUP
	TESTQ CX, CX
	JZ f16g_done
f16g_loop:
	GSTEP(CVTH)
	DECQ CX
	JNZ f16g_loop
f16g_done:
	GDONE

// func gemmBF16x4(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *[16]float32)
//
// gemmF16x4 for BF16 rows.
TEXT ·gemmBF16x4(SB), NOSPLIT, $0-56
	GSETUP
	TESTQ CX, CX
	JZ bf16g_done
bf16g_loop:
	GSTEP(CVTB)
	DECQ CX
	JNZ bf16g_loop
bf16g_done:
	GDONE

// G6SETUP loads the arguments of the six-token gemm kernel: rows at SI, R8, R9, R10
// (offset DX), tokens at DI, R12, R13, R14, R15, BX (offset R11), token t ≥ ntok
// reading token ntok−1, out at AX; it clears the 24 accumulators (token t, row r in
// Z(4t+r)).
#define G6SETUP \
	GARGS \
	GTOK(R14, R15, 5) \
	GTOK(R15, BX, 6) \
	MOVQ out+48(FP), AX \
	GZERO16 \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z19, Z19, Z19 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23 \
	XORQ DX, DX \
	XORQ R11, R11

// GRED4X is GRED4 with Z24…Z29 for its temporaries (Z16…Z23 hold the six-token
// kernel's last accumulators); H may be M0.
#define GRED4X(M0, M1, M2, M3, H) GRED4T(M0, M1, M2, M3, H, Z24, Z25, Z26, Z27, Z28, Z29)

// G6DONE reduces the 24 sums, each as RED16 reduces one accumulator (GDONE's
// operations), and stores token t's four (rows 0…3) at AX + 4·t·DX bytes for
// t < CX only (each kernel loads ntok into CX and ostride into DX: vet checks a
// macro's arguments against the function above it), so the kernel writes straight
// into a matrix of outputs (the copy out of a scratch array cost 4–10 % of
// BenchmarkMatMul F16 n512 on AMD Zen 5). First tokens 4 and 5, as four groups (row g: token 4, token 5, and
// the two again, whose sums are not stored), so that element 4k+g of the last add
// is token 4+k's row g, kept in Y31; then tokens 0 to 3 as GDONE, into Z30.
#define G6DONE \
	GRED4X(Z16, Z20, Z16, Z20, Z16) \
	GRED4X(Z17, Z21, Z17, Z21, Z17) \
	GRED4X(Z18, Z22, Z18, Z22, Z18) \
	GRED4X(Z19, Z23, Z19, Z23, Z19) \
	HADD512(Z17, Z16, Z24) \
	HADD512(Z19, Z18, Z25) \
	HADD512(Z25, Z24, Z31) \
	GSUM16 \
	SHLQ $2, DX \
	VMOVUPS X30, (AX) \
	CMPQ CX, $2 \
	JLT g6_stored \
	ADDQ DX, AX \
	VEXTRACTF32X4 $1, Z30, (AX) \
	CMPQ CX, $3 \
	JLT g6_stored \
	ADDQ DX, AX \
	VEXTRACTF32X4 $2, Z30, (AX) \
	CMPQ CX, $4 \
	JLT g6_stored \
	ADDQ DX, AX \
	VEXTRACTF32X4 $3, Z30, (AX) \
	CMPQ CX, $5 \
	JLT g6_stored \
	ADDQ DX, AX \
	VMOVUPS X31, (AX) \
	CMPQ CX, $6 \
	JLT g6_stored \
	ADDQ DX, AX \
	VEXTRACTF32X4 $1, Z31, (AX) \
g6_stored: \
	VZEROUPPER \
	RET

// G6W4 adds the four rows in Z24…Z27 times the token in X to accumulators A0…A3
// (F16G4's products: the same sums whatever the operand order of the multiply).
#define G6W4(X, A0, A1, A2, A3) \
	VFMADD231PS X, Z24, A0 \
	VFMADD231PS X, Z25, A1 \
	VFMADD231PS X, Z26, A2 \
	VFMADD231PS X, Z27, A3

// G6STEP(CVT) is one step of 16 elements of the six-token kernels on widened rows:
// four rows converted by CVT into Z24…Z27, six tokens' float32 activations.
#define G6STEP(CVT) \
	CVT((SI)(DX*1), Z24) \
	CVT((R8)(DX*1), Z25) \
	CVT((R9)(DX*1), Z26) \
	CVT((R10)(DX*1), Z27) \
	VMOVUPS (DI)(R11*1), Z28 \
	VMOVUPS (R12)(R11*1), Z29 \
	G6W4(Z28, Z0, Z1, Z2, Z3) \
	G6W4(Z29, Z4, Z5, Z6, Z7) \
	VMOVUPS (R13)(R11*1), Z28 \
	VMOVUPS (R14)(R11*1), Z29 \
	G6W4(Z28, Z8, Z9, Z10, Z11) \
	G6W4(Z29, Z12, Z13, Z14, Z15) \
	VMOVUPS (R15)(R11*1), Z28 \
	VMOVUPS (BX)(R11*1), Z29 \
	G6W4(Z28, Z16, Z17, Z18, Z19) \
	G6W4(Z29, Z20, Z21, Z22, Z23) \
	ADDQ $32, DX \
	ADDQ $64, R11

// func gemmF16x6(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *float32, ostride int)
//
// gemmF16x4 for six tokens (x + t·xstride, tokens past ntok repeating the last):
// out[t·ostride+r] receives each product of a token t < ntok, summed and reduced
// exactly as gemmF16x4 does; four
// conversions and six loads per 24 fused multiply-adds, where gemmF16x4 takes four
// and four per 16.
TEXT ·gemmF16x6(SB), NOSPLIT, $0-64
	G6SETUP
	TESTQ CX, CX
	JZ f16g6_done
f16g6_loop:
	G6STEP(CVTH)
	DECQ CX
	JNZ f16g6_loop
f16g6_done:
	MOVQ ntok+40(FP), CX
	MOVQ ostride+56(FP), DX
	G6DONE

// func gemmBF16x6(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *float32, ostride int)
//
// gemmF16x6 for BF16 rows (gemmBF16x4's sums), for AVX-512 CPUs without AVX512-BF16.
TEXT ·gemmBF16x6(SB), NOSPLIT, $0-64
	G6SETUP
	TESTQ CX, CX
	JZ bf16g6_done
bf16g6_loop:
	G6STEP(CVTB)
	DECQ CX
	JNZ bf16g6_loop
bf16g6_done:
	MOVQ ntok+40(FP), CX
	MOVQ ostride+56(FP), DX
	G6DONE

// func gemmBF16dp6(n16 int, w *byte, wstride int, x *byte, xstride, ntok int, out *float32, ostride int)
//
// gemmBF16dp for six tokens (x + t·xstride, tokens past ntok repeating the last):
// out[t·ostride+r] receives each product of a token t < ntok, summed in the pairs order of VDPBF16PS and reduced
// exactly as gemmBF16dp does. Twenty-four accumulators take four weight loads and six
// activation loads per 24 VDPBF16PS, where gemmBF16dp takes four and four per 16:
// BenchmarkMatMul BF16 n512 ran 1.08–1.12× faster (AMD Zen 5). gemmF16x6 is the same
// structure on widened F16 weights (four conversions per 24 fused multiply-adds).
TEXT ·gemmBF16dp6(SB), NOSPLIT, $0-64
	G6SETUP
	SHRQ $1, CX
	TESTQ CX, CX
	JZ dpg6_done
dpg6_loop:
	VMOVDQU64 (SI)(DX*1), Z24
	VMOVDQU64 (R8)(DX*1), Z25
	VMOVDQU64 (R9)(DX*1), Z26
	VMOVDQU64 (R10)(DX*1), Z27
	VMOVDQU64 (DI)(R11*1), Z28
	VMOVDQU64 (R12)(R11*1), Z29
	DPG4(28, 24, 0, 1, 2, 3)
	DPG4(29, 24, 4, 5, 6, 7)
	VMOVDQU64 (R13)(R11*1), Z28
	VMOVDQU64 (R14)(R11*1), Z29
	DPG4(28, 24, 8, 9, 10, 11)
	DPG4(29, 24, 12, 13, 14, 15)
	VMOVDQU64 (R15)(R11*1), Z28
	VMOVDQU64 (BX)(R11*1), Z29
	DPG4(28, 24, 16, 17, 18, 19)
	DPG4(29, 24, 20, 21, 22, 23)
	ADDQ $64, DX
	ADDQ $64, R11
	DECQ CX
	JNZ dpg6_loop
dpg6_done:
	MOVQ ntok+40(FP), CX
	MOVQ ostride+56(FP), DX
	G6DONE

