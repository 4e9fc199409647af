// AVX-VNNI's VPDPBUSD on ymm registers, encoded by hand: Go's assembler knows only the
// EVEX form (AVX512-VNNI), which a CPU with AVX-VNNI but no AVX-512 (Intel Core from
// Alder Lake on, Xeon 6 with E-cores) cannot run. Each macro is the five bytes of the
// VEX form, VEX.256.66.0F38.W0 50 /r:
//
//	C4, R̄·X̄·B̄·00010, W0·v̄v̄v̄v̄·L1·01, 50, ModRM 11·(d&7)·(s&7)
//
// VDP_d_u_s adds to each int32 lane of Yd the four products of the unsigned bytes of Yu
// (the VEX.vvvv operand) and the signed bytes of Ys (r/m) in that lane: Intel's
// VPDPBUSD ymmd, ymmu, ymms; Go's operand order would be VPDPBUSD Ys, Yu, Yd. The bytes
// were checked against GNU as (objdump prints "{vex} vpdpbusd %ymm_s,%ymm_u,%ymm_d"),
// and TestTileKernels checks the kernels that use them against the Go reference.

#define VDP_6_2_0 BYTE $0xC4; BYTE $0xE2; BYTE $0x6D; BYTE $0x50; BYTE $0xF0
#define VDP_6_3_0 BYTE $0xC4; BYTE $0xE2; BYTE $0x65; BYTE $0x50; BYTE $0xF0
#define VDP_6_4_1 BYTE $0xC4; BYTE $0xE2; BYTE $0x5D; BYTE $0x50; BYTE $0xF1
#define VDP_6_5_1 BYTE $0xC4; BYTE $0xE2; BYTE $0x55; BYTE $0x50; BYTE $0xF1
#define VDP_7_2_0 BYTE $0xC4; BYTE $0xE2; BYTE $0x6D; BYTE $0x50; BYTE $0xF8
#define VDP_7_3_0 BYTE $0xC4; BYTE $0xE2; BYTE $0x65; BYTE $0x50; BYTE $0xF8
#define VDP_7_4_1 BYTE $0xC4; BYTE $0xE2; BYTE $0x5D; BYTE $0x50; BYTE $0xF9
#define VDP_7_5_1 BYTE $0xC4; BYTE $0xE2; BYTE $0x55; BYTE $0x50; BYTE $0xF9
#define VDP_8_2_0 BYTE $0xC4; BYTE $0x62; BYTE $0x6D; BYTE $0x50; BYTE $0xC0
#define VDP_8_3_0 BYTE $0xC4; BYTE $0x62; BYTE $0x65; BYTE $0x50; BYTE $0xC0
#define VDP_8_4_1 BYTE $0xC4; BYTE $0x62; BYTE $0x5D; BYTE $0x50; BYTE $0xC1
#define VDP_8_5_1 BYTE $0xC4; BYTE $0x62; BYTE $0x55; BYTE $0x50; BYTE $0xC1
#define VDP_9_2_0 BYTE $0xC4; BYTE $0x62; BYTE $0x6D; BYTE $0x50; BYTE $0xC8
#define VDP_9_3_0 BYTE $0xC4; BYTE $0x62; BYTE $0x65; BYTE $0x50; BYTE $0xC8
#define VDP_9_4_1 BYTE $0xC4; BYTE $0x62; BYTE $0x5D; BYTE $0x50; BYTE $0xC9
#define VDP_9_5_1 BYTE $0xC4; BYTE $0x62; BYTE $0x55; BYTE $0x50; BYTE $0xC9
#define VDP_10_2_0 BYTE $0xC4; BYTE $0x62; BYTE $0x6D; BYTE $0x50; BYTE $0xD0
#define VDP_10_3_0 BYTE $0xC4; BYTE $0x62; BYTE $0x65; BYTE $0x50; BYTE $0xD0
#define VDP_10_4_1 BYTE $0xC4; BYTE $0x62; BYTE $0x5D; BYTE $0x50; BYTE $0xD1
#define VDP_10_5_1 BYTE $0xC4; BYTE $0x62; BYTE $0x55; BYTE $0x50; BYTE $0xD1
#define VDP_11_2_0 BYTE $0xC4; BYTE $0x62; BYTE $0x6D; BYTE $0x50; BYTE $0xD8
#define VDP_11_3_0 BYTE $0xC4; BYTE $0x62; BYTE $0x65; BYTE $0x50; BYTE $0xD8
#define VDP_11_4_1 BYTE $0xC4; BYTE $0x62; BYTE $0x5D; BYTE $0x50; BYTE $0xD9
#define VDP_11_5_1 BYTE $0xC4; BYTE $0x62; BYTE $0x55; BYTE $0x50; BYTE $0xD9
#define VDP_12_2_0 BYTE $0xC4; BYTE $0x62; BYTE $0x6D; BYTE $0x50; BYTE $0xE0
#define VDP_12_3_0 BYTE $0xC4; BYTE $0x62; BYTE $0x65; BYTE $0x50; BYTE $0xE0
#define VDP_12_4_1 BYTE $0xC4; BYTE $0x62; BYTE $0x5D; BYTE $0x50; BYTE $0xE1
#define VDP_12_5_1 BYTE $0xC4; BYTE $0x62; BYTE $0x55; BYTE $0x50; BYTE $0xE1
#define VDP_13_2_0 BYTE $0xC4; BYTE $0x62; BYTE $0x6D; BYTE $0x50; BYTE $0xE8
#define VDP_13_3_0 BYTE $0xC4; BYTE $0x62; BYTE $0x65; BYTE $0x50; BYTE $0xE8
#define VDP_13_4_1 BYTE $0xC4; BYTE $0x62; BYTE $0x5D; BYTE $0x50; BYTE $0xE9
#define VDP_13_5_1 BYTE $0xC4; BYTE $0x62; BYTE $0x55; BYTE $0x50; BYTE $0xE9
