//go:build amd64 && !purego

#include "textflag.h"

// func cpuid0() (ebx, ecx, edx uint32)
//
// CPUID leaf 0: the vendor string is EBX, EDX, ECX ("Genu" "ineI" "ntel").
TEXT ·cpuid0(SB), NOSPLIT, $0-12
	XORL AX, AX
	XORL CX, CX
	CPUID
	MOVL BX, ebx+0(FP)
	MOVL CX, ecx+4(FP)
	MOVL DX, edx+8(FP)
	RET

// func cpuid1() (eax uint32)
//
// CPUID leaf 1: EAX holds the stepping, model and family numbers.
TEXT ·cpuid1(SB), NOSPLIT, $0-4
	MOVL $1, AX
	XORL CX, CX
	CPUID
	MOVL AX, eax+0(FP)
	RET
