// HSUM reduces Y3 to a float32 in X3 (pairwise, as ggml's reduce); it clobbers X1.
#define HSUM \
	VEXTRACTF128 $1, Y3, X1 \
	VADDPS X1, X3, X3 \
	VHADDPS X3, X3, X3 \
	VHADDPS X3, X3, X3

// RED8TO reduces the eight float lanes of Y (X its low half) as reduce8 does,
// ((a0+a4)+(a1+a5)) + ((a2+a6)+(a3+a7)), and stores the float at memory operand dst;
// it clobbers X6. RED8 stores it at off(AX).
#define RED8TO(Y, X, dst) \
	VEXTRACTF128 $1, Y, X6 \
	VADDPS X6, X, X6 \
	VHADDPS X6, X6, X6 \
	VHADDPS X6, X6, X6 \
	VMOVSS X6, dst

#define RED8(Y, X, off) RED8TO(Y, X, off(AX))
