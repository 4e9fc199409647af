//go:build amd64 && !purego

#include "textflag.h"

// The bandwidth probe's reading loops (ReadSum): 64 bytes per stream and step, summed
// as 64-bit words into two ymm accumulators per stream (VPADDQ from memory: the loads
// are the work). PF(m) is PREFETCHT0 m (ReadPrefetchAhead = 1024 bytes ahead) or nothing.

#define PFYES(m) PREFETCHT0 m
#define PFNO(m)

// HSUM adds the four quadwords of Y4 into AX.
#define HSUM \
	VEXTRACTI128 $1, Y4, X5 \
	VPADDQ X5, X4, X4 \
	VPSHUFD $0x4E, X4, X5 \
	VPADDQ X5, X4, X4 \
	VMOVQ X4, AX \
	VZEROUPPER

#define RS1(PF) \
	MOVQ lines+0(FP), CX \
	MOVQ p+8(FP), SI \
	VPXOR Y4, Y4, Y4 \
	VPXOR Y5, Y5, Y5 \
loop: \
	PF(1024(SI)) \
	VPADDQ (SI), Y4, Y4 \
	VPADDQ 32(SI), Y5, Y5 \
	ADDQ $64, SI \
	DECQ CX \
	JNZ loop \
	VPADDQ Y5, Y4, Y4 \
	HSUM \
	MOVQ AX, ret+16(FP) \
	RET

#define RS4(PF) \
	MOVQ lines+0(FP), CX \
	MOVQ p+8(FP), SI \
	MOVQ stride+16(FP), DX \
	LEAQ (SI)(DX*2), R9 \
	VPXOR Y4, Y4, Y4 \
	VPXOR Y5, Y5, Y5 \
	VPXOR Y6, Y6, Y6 \
	VPXOR Y7, Y7, Y7 \
loop: \
	PF(1024(SI)) \
	PF(1024(SI)(DX*1)) \
	PF(1024(R9)) \
	PF(1024(R9)(DX*1)) \
	VPADDQ (SI), Y4, Y4 \
	VPADDQ 32(SI), Y5, Y5 \
	VPADDQ (SI)(DX*1), Y6, Y6 \
	VPADDQ 32(SI)(DX*1), Y7, Y7 \
	VPADDQ (R9), Y4, Y4 \
	VPADDQ 32(R9), Y5, Y5 \
	VPADDQ (R9)(DX*1), Y6, Y6 \
	VPADDQ 32(R9)(DX*1), Y7, Y7 \
	ADDQ $64, SI \
	ADDQ $64, R9 \
	DECQ CX \
	JNZ loop \
	VPADDQ Y5, Y4, Y4 \
	VPADDQ Y7, Y6, Y6 \
	VPADDQ Y6, Y4, Y4 \
	HSUM \
	MOVQ AX, ret+24(FP) \
	RET

// func readSum1(lines int, p *byte) uint64
TEXT ·readSum1(SB), NOSPLIT, $0-24
	RS1(PFNO)

// func readSum1pf(lines int, p *byte) uint64
TEXT ·readSum1pf(SB), NOSPLIT, $0-24
	RS1(PFYES)

// func readSum4(lines int, p *byte, stride int) uint64
TEXT ·readSum4(SB), NOSPLIT, $0-32
	RS4(PFNO)

// func readSum4pf(lines int, p *byte, stride int) uint64
TEXT ·readSum4pf(SB), NOSPLIT, $0-32
	RS4(PFYES)
