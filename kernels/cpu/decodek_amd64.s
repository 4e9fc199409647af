//go:build amd64 && !purego

#include "textflag.h"

// RED16 sums the 16 lanes of Z (copied to Z0) and stores the float at off(AX).
#define RED16(Z, off) \
	VMOVAPS Z, Z0 \
	VEXTRACTF64X4 $1, Z0, Y1 \
	VADDPS Y1, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS X1, X0, X0 \
	VHADDPS X0, X0, X0 \
	VHADDPS X0, X0, X0 \
	VMOVSS X0, off(AX)

// F16ROW adds one row's 32 halves at (P) times the float activations Z20/Z21 to ACC:
// elements 0..15, then 16..31 (the order of gemmF16x4, so both give the same sums).
#define F16ROW(P, ACC, T0, T1) \
	VCVTPH2PS (P), T0 \
	VCVTPH2PS 32(P), T1 \
	VFMADD231PS Z20, T0, ACC \
	VFMADD231PS Z21, T1, ACC

// func dotF16x4(n32 int, w *byte, stride int, x *float32, out *[4]float32)
//
// Four F16 rows (w, w+stride, w+2·stride, w+3·stride) times one row of float32
// activations, over n32 steps of 32 elements. Each step prefetches four lines of the
// next four rows, non-temporally (a few per cent faster than PREFETCHT0 from DRAM,
// no prefetch is about 20 % slower).
TEXT ·dotF16x4(SB), NOSPLIT, $0-40
	MOVQ n32+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ stride+16(FP), DX
	MOVQ x+24(FP), DI
	MOVQ out+32(FP), AX
	LEAQ (SI)(DX*1), R8
	LEAQ (R8)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	LEAQ (R10)(DX*1), R11
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	TESTQ CX, CX
	JZ f16x4_done
f16x4_loop:
	PREFETCHNTA 0(R11)
	PREFETCHNTA 64(R11)
	PREFETCHNTA 128(R11)
	PREFETCHNTA 192(R11)
	VMOVUPS (DI), Z20
	VMOVUPS 64(DI), Z21
	F16ROW(SI, Z8, Z0, Z1)
	F16ROW(R8, Z10, Z2, Z3)
	F16ROW(R9, Z12, Z4, Z5)
	F16ROW(R10, Z14, Z6, Z7)
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $256, R11
	ADDQ $128, DI
	DECQ CX
	JNZ f16x4_loop
f16x4_done:
	RED16(Z8, 0)
	RED16(Z10, 4)
	RED16(Z12, 8)
	RED16(Z14, 12)
	VZEROUPPER
	RET

// F16G4 multiplies the four weight vectors Z16..Z19 by token vector X into
// accumulators A0..A3 (rows 0..3 of that token).
#define F16G4(X, A0, A1, A2, A3) \
	VFMADD231PS X, Z16, A0 \
	VFMADD231PS X, Z17, A1 \
	VFMADD231PS X, Z18, A2 \
	VFMADD231PS X, Z19, A3

// func gemmF16x4(n16 int, w *byte, wstride int, x *byte, xstride int, out *[16]float32)
//
// Four F16 rows (w + r·wstride) times four float32 token rows (x + t·xstride) over
// n16 steps of 16 elements; out[4t+r] receives each product (its 16 lanes reduced as
// RED16 does).
TEXT ·gemmF16x4(SB), NOSPLIT, $0-48
	MOVQ n16+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ wstride+16(FP), DX
	MOVQ x+24(FP), DI
	MOVQ xstride+32(FP), BX
	MOVQ out+40(FP), AX
	LEAQ (SI)(DX*1), R8
	LEAQ (R8)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	LEAQ (DI)(BX*1), R12
	LEAQ (R12)(BX*1), R13
	LEAQ (R13)(BX*1), R14
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	XORQ DX, DX
	XORQ R11, R11
	TESTQ CX, CX
	JZ f16g_done
f16g_loop:
	VCVTPH2PS (SI)(DX*1), Z16
	VCVTPH2PS (R8)(DX*1), Z17
	VCVTPH2PS (R9)(DX*1), Z18
	VCVTPH2PS (R10)(DX*1), Z19
	VMOVUPS (DI)(R11*1), Z20
	VMOVUPS (R12)(R11*1), Z21
	VMOVUPS (R13)(R11*1), Z22
	VMOVUPS (R14)(R11*1), Z23
	F16G4(Z20, Z0, Z1, Z2, Z3)
	F16G4(Z21, Z4, Z5, Z6, Z7)
	F16G4(Z22, Z8, Z9, Z10, Z11)
	F16G4(Z23, Z12, Z13, Z14, Z15)
	ADDQ $32, DX
	ADDQ $64, R11
	DECQ CX
	JNZ f16g_loop
f16g_done:
	VMOVAPS Z15, Z31
	VMOVAPS Z14, Z30
	VMOVAPS Z13, Z29
	VMOVAPS Z12, Z28
	VMOVAPS Z11, Z27
	VMOVAPS Z10, Z26
	VMOVAPS Z9, Z25
	VMOVAPS Z8, Z24
	VMOVAPS Z7, Z23
	VMOVAPS Z6, Z22
	VMOVAPS Z5, Z21
	VMOVAPS Z4, Z20
	VMOVAPS Z3, Z19
	VMOVAPS Z2, Z18
	VMOVAPS Z1, Z17
	RED16(Z0, 0)
	RED16(Z17, 4)
	RED16(Z18, 8)
	RED16(Z19, 12)
	RED16(Z20, 16)
	RED16(Z21, 20)
	RED16(Z22, 24)
	RED16(Z23, 28)
	RED16(Z24, 32)
	RED16(Z25, 36)
	RED16(Z26, 40)
	RED16(Z27, 44)
	RED16(Z28, 48)
	RED16(Z29, 52)
	RED16(Z30, 56)
	RED16(Z31, 60)
	VZEROUPPER
	RET
