//go:build amd64 && !purego

#include "textflag.h"

// Constants of exp32 (exp.go) as float32 bits, in the order the kernel broadcasts them.
DATA expc<>+0(SB)/4, $0x3fb8aa3b  // log2e
DATA expc<>+4(SB)/4, $0x3f000000  // 0.5
DATA expc<>+8(SB)/4, $0x3f318000  // ln2Hi
DATA expc<>+12(SB)/4, $0xb95e8083 // ln2Lo
DATA expc<>+16(SB)/4, $0x39506967 // P0
DATA expc<>+20(SB)/4, $0x3ab743ce // P1
DATA expc<>+24(SB)/4, $0x3c088908 // P2
DATA expc<>+28(SB)/4, $0x3d2aa9c1 // P3
DATA expc<>+32(SB)/4, $0x3e2aaaaa // P4
DATA expc<>+36(SB)/4, $0x3f000000 // P5
DATA expc<>+40(SB)/4, $0x3f800000 // 1
DATA expc<>+44(SB)/4, $0x42b17218 // expHi
DATA expc<>+48(SB)/4, $0xc2cff1b5 // expLo
DATA expc<>+52(SB)/4, $0x80000000 // sign bit
DATA expc<>+56(SB)/4, $0x7f800000 // +Inf
GLOBL expc<>(SB), RODATA|NOPTR, $60

// func swigluAVX512(n16 int, dst, gate, up *float32)
// dst[i] = gate[i] / (1 + exp32(-gate[i])) * up[i] for 16·n16 values, sixteen at a
// time, with exp32's operations in exp32's order and roundings (a product and a sum
// are never fused), so each value is the pure-Go twin's bit for bit. VSCALEFPS scales
// by 2^n with one rounding, as exp32's two exact-then-rounding steps do.
TEXT ·swigluAVX512(SB), NOSPLIT, $0-32
	MOVQ n16+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ gate+16(FP), SI
	MOVQ up+24(FP), DX
	VBROADCASTSS expc<>+0(SB), Z31
	VBROADCASTSS expc<>+4(SB), Z30
	VBROADCASTSS expc<>+8(SB), Z29
	VBROADCASTSS expc<>+12(SB), Z28
	VBROADCASTSS expc<>+16(SB), Z27
	VBROADCASTSS expc<>+20(SB), Z26
	VBROADCASTSS expc<>+24(SB), Z25
	VBROADCASTSS expc<>+28(SB), Z24
	VBROADCASTSS expc<>+32(SB), Z23
	VBROADCASTSS expc<>+36(SB), Z22
	VBROADCASTSS expc<>+40(SB), Z21
	VBROADCASTSS expc<>+44(SB), Z20
	VBROADCASTSS expc<>+48(SB), Z19
	VBROADCASTSS expc<>+52(SB), Z18
	VBROADCASTSS expc<>+56(SB), Z17
	TESTQ CX, CX
	JZ   done

loop:
	VMOVUPS (SI), Z0             // g
	VPXORD  Z18, Z0, Z1          // x = -g
	VMULPS  Z31, Z1, Z2          // t = x·log2e
	VPANDD  Z18, Z2, Z3
	VPORD   Z30, Z3, Z3          // ±0.5 with t's sign
	VADDPS  Z3, Z2, Z3
	VCVTTPS2DQ Z3, Z4            // n = trunc(t ± 0.5)
	VCVTDQ2PS Z4, Z5             // fn
	VMULPS  Z29, Z5, Z6
	VSUBPS  Z6, Z1, Z6           // r = x - fn·ln2Hi
	VMULPS  Z28, Z5, Z7
	VSUBPS  Z7, Z6, Z6           // r -= fn·ln2Lo
	VMULPS  Z27, Z6, Z7          // P0·r
	VADDPS  Z26, Z7, Z7          // + P1
	VMULPS  Z6, Z7, Z7
	VADDPS  Z25, Z7, Z7          // + P2
	VMULPS  Z6, Z7, Z7
	VADDPS  Z24, Z7, Z7          // + P3
	VMULPS  Z6, Z7, Z7
	VADDPS  Z23, Z7, Z7          // + P4
	VMULPS  Z6, Z7, Z7
	VADDPS  Z22, Z7, Z7          // + P5
	VMULPS  Z6, Z7, Z7
	VMULPS  Z6, Z7, Z7           // p·r·r
	VADDPS  Z6, Z7, Z7           // + r
	VADDPS  Z21, Z7, Z7          // + 1
	VSCALEFPS Z5, Z7, Z7         // · 2^n
	VCMPPS  $0x1e, Z20, Z1, K1   // x > expHi (ordered)
	VCMPPS  $0x11, Z19, Z1, K2   // x < expLo (ordered)
	VMOVAPS Z17, K1, Z7          // +Inf
	VPXORD  Z7, Z7, K2, Z7       // 0
	VADDPS  Z21, Z7, Z7          // 1 + e^-g
	VDIVPS  Z7, Z0, Z7           // g / (1 + e^-g)
	VMULPS  (DX), Z7, Z7         // · up
	VMOVUPS Z7, (DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET

// func swigluAVX2(n8 int, dst, gate, up *float32)
// swigluAVX512 eight values at a time with AVX2: the same operations, with exp32's own
// scaling by 2^n (two exact powers of two, 2^(n>>1) then 2^(n−n>>1), each product
// rounded) where AVX-512 has VSCALEFPS, and vector masks for the overflow and
// underflow cases. Each value is the pure-Go twin's bit for bit.
TEXT ·swigluAVX2(SB), NOSPLIT, $0-32
	MOVQ n8+0(FP), CX
	MOVQ dst+8(FP), DI
	MOVQ gate+16(FP), SI
	MOVQ up+24(FP), DX
	VBROADCASTSS expc<>+0(SB), Y15
	VBROADCASTSS expc<>+4(SB), Y14
	VBROADCASTSS expc<>+40(SB), Y13
	VBROADCASTSS expc<>+52(SB), Y12
	MOVL $127, AX
	MOVQ AX, X11
	VPBROADCASTD X11, Y11
	TESTQ CX, CX
	JZ   done8

loop8:
	VMOVUPS (SI), Y0             // g
	VXORPS  Y12, Y0, Y1          // x = -g
	VMULPS  Y15, Y1, Y2          // t = x·log2e
	VANDPS  Y12, Y2, Y3
	VORPS   Y14, Y3, Y3          // ±0.5 with t's sign
	VADDPS  Y3, Y2, Y3
	VCVTTPS2DQ Y3, Y4            // n = trunc(t ± 0.5)
	VCVTDQ2PS Y4, Y5             // fn
	VBROADCASTSS expc<>+8(SB), Y6
	VMULPS  Y6, Y5, Y6
	VSUBPS  Y6, Y1, Y6           // r = x - fn·ln2Hi
	VBROADCASTSS expc<>+12(SB), Y7
	VMULPS  Y7, Y5, Y7
	VSUBPS  Y7, Y6, Y6           // r -= fn·ln2Lo
	VBROADCASTSS expc<>+16(SB), Y7
	VMULPS  Y7, Y6, Y7           // P0·r
	VBROADCASTSS expc<>+20(SB), Y8
	VADDPS  Y8, Y7, Y7           // + P1
	VMULPS  Y6, Y7, Y7
	VBROADCASTSS expc<>+24(SB), Y8
	VADDPS  Y8, Y7, Y7           // + P2
	VMULPS  Y6, Y7, Y7
	VBROADCASTSS expc<>+28(SB), Y8
	VADDPS  Y8, Y7, Y7           // + P3
	VMULPS  Y6, Y7, Y7
	VBROADCASTSS expc<>+32(SB), Y8
	VADDPS  Y8, Y7, Y7           // + P4
	VMULPS  Y6, Y7, Y7
	VADDPS  Y14, Y7, Y7          // + P5 (0.5)
	VMULPS  Y6, Y7, Y7
	VMULPS  Y6, Y7, Y7           // p·r·r
	VADDPS  Y6, Y7, Y7           // + r
	VADDPS  Y13, Y7, Y7          // + 1
	VPSRAD  $1, Y4, Y5           // n1 = n >> 1
	VPSUBD  Y5, Y4, Y4           // n - n1
	VPADDD  Y11, Y5, Y5
	VPSLLD  $23, Y5, Y5          // 2^n1
	VPADDD  Y11, Y4, Y4
	VPSLLD  $23, Y4, Y4          // 2^(n-n1)
	VMULPS  Y5, Y7, Y7
	VMULPS  Y4, Y7, Y7
	VBROADCASTSS expc<>+44(SB), Y8
	VCMPPS  $0x1e, Y8, Y1, Y9    // x > expHi (ordered)
	VBROADCASTSS expc<>+56(SB), Y8
	VBLENDVPS Y9, Y8, Y7, Y7     // +Inf
	VBROADCASTSS expc<>+48(SB), Y8
	VCMPPS  $0x11, Y8, Y1, Y9    // x < expLo (ordered)
	VANDNPS Y7, Y9, Y7           // 0
	VADDPS  Y13, Y7, Y7          // 1 + e^-g
	VDIVPS  Y7, Y0, Y7           // g / (1 + e^-g)
	VMULPS  (DX), Y7, Y7         // · up
	VMOVUPS Y7, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ  loop8

done8:
	VZEROUPPER
	RET
