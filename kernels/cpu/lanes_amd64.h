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

// ZEROZ0_7 clears Z0…Z7; ZEROZ0_15 clears Z0…Z15.
#define ZEROZ0_7 \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7

#define ZEROZ0_15 \
	ZEROZ0_7 \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	VPXORD Z12, Z12, Z12 \
	VPXORD Z13, Z13, Z13 \
	VPXORD Z14, Z14, Z14 \
	VPXORD Z15, Z15, Z15
