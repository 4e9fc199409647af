//go:build amd64 && !purego

#include "textflag.h"

// Word indexes for VPERMT2W: the 16 nibble bytes of each of four consecutive Q4_0
// blocks (72 bytes; the second table is the group loaded from byte 8).
DATA q40nib<>+0(SB)/8, $0x0004000300020001
DATA q40nib<>+8(SB)/8, $0x0008000700060005
DATA q40nib<>+16(SB)/8, $0x000d000c000b000a
DATA q40nib<>+24(SB)/8, $0x00110010000f000e
DATA q40nib<>+32(SB)/8, $0x0016001500140013
DATA q40nib<>+40(SB)/8, $0x001a001900180017
DATA q40nib<>+48(SB)/8, $0x001f001e001d001c
DATA q40nib<>+56(SB)/8, $0x003f003e003d003c
GLOBL q40nib<>(SB), RODATA|NOPTR, $64

// Word indexes for VPERMW: each block's fp16 scale, four times.
DATA q40scl<>+0(SB)/8, $0x0000000000000000
DATA q40scl<>+8(SB)/8, $0x0009000900090009
DATA q40scl<>+16(SB)/8, $0x0012001200120012
DATA q40scl<>+24(SB)/8, $0x001b001b001b001b
DATA q40scl<>+32(SB)/8, $0x0000000000000000
DATA q40scl<>+40(SB)/8, $0x0000000000000000
DATA q40scl<>+48(SB)/8, $0x0000000000000000
DATA q40scl<>+56(SB)/8, $0x0000000000000000
GLOBL q40scl<>(SB), RODATA|NOPTR, $64

// Q40ROW accumulates one row's group of four Q4_0 blocks at (P) into ACC, against the
// prepared activations in Z24 (low halves), Z25 (high halves), Z26 (starting sums)
// and Z27 (activation scales). S is the ymm name of T3.
#define Q40ROW(P, ACC, T0, T1, T2, T3, S) \
	VMOVDQU64 (P), T0 \
	VPERMW T0, Z29, T3 \
	VPERMT2W 8(P), Z30, T0 \
	VPSRLW $4, T0, T1 \
	VPANDQ Z31, T0, T0 \
	VPANDQ Z31, T1, T1 \
	VMOVDQA64 Z26, T2 \
	VPDPBUSD Z24, T0, T2 \
	VPDPBUSD Z25, T1, T2 \
	VCVTPH2PS S, T3 \
	VMULPS Z27, T3, T3 \
	VCVTDQ2PS T2, T2 \
	VFMADD231PS T3, T2, ACC

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

// func dotQ4_0x4VNNI(ng int, w *byte, stride int, x *byte, out *[4]float32)
//
// Four Q4_0 rows (w, w+stride, w+2·stride, w+3·stride) times one activation row in the
// layout of prepQ40x4, over ng groups of four blocks.
TEXT ·dotQ4_0x4VNNI(SB), NOSPLIT, $0-40
	MOVQ ng+0(FP), CX
	MOVQ w+8(FP), SI
	MOVQ stride+16(FP), DX
	MOVQ x+24(FP), DI
	MOVQ out+32(FP), AX
	LEAQ (SI)(DX*1), R8
	LEAQ (R8)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	LEAQ (R10)(DX*1), R11
	MOVL $0x0F0F0F0F, BX
	VPBROADCASTD BX, Z31
	VMOVDQU64 q40nib<>(SB), Z30
	VMOVDQU64 q40scl<>(SB), Z29
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	TESTQ CX, CX
	JZ q40x4_done
q40x4_loop:
	PREFETCHT0 0(R11)
	PREFETCHT0 64(R11)
	PREFETCHT0 128(R11)
	PREFETCHT0 192(R11)
	PREFETCHT0 256(R11)
	VMOVDQU64 (DI), Z24
	VMOVDQU64 64(DI), Z25
	VMOVDQU64 128(DI), Z26
	VMOVDQU64 192(DI), Z27
	Q40ROW(SI, Z16, Z0, Z1, Z2, Z3, Y3)
	Q40ROW(R8, Z17, Z4, Z5, Z6, Z7, Y7)
	Q40ROW(R9, Z18, Z8, Z9, Z10, Z11, Y11)
	Q40ROW(R10, Z19, Z12, Z13, Z14, Z15, Y15)
	ADDQ $72, SI
	ADDQ $72, R8
	ADDQ $72, R9
	ADDQ $72, R10
	ADDQ $288, R11
	ADDQ $256, DI
	DECQ CX
	JNZ q40x4_loop
q40x4_done:
	RED16(Z16, 0)
	RED16(Z17, 4)
	RED16(Z18, 8)
	RED16(Z19, 12)
	VZEROUPPER
	RET
