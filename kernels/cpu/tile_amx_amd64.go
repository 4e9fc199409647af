//go:build amd64 && !purego

package cpu

import (
	"golang.org/x/sys/cpu"

	"llmbench/kernels"
)

// AMX kernels (tile_amx_amd64.s). scr is an amxScratch's aligned tile buffers, cfg the
// type's amxConsts.

//go:noescape
func amxQ8x16(nu int, tile, act, scr, cfg *byte, out *float32, ostride int)

//go:noescape
func amxQ4x16(nu int, tile, act, scr, cfg *byte, out *float32, ostride int)

//go:noescape
func amxQ4Kx16(nu int, tile, act, scr, cfg *byte, out *float32, ostride int)

// amxProbe runs the kernels' AMX instruction encodings once (see the .s file): the
// tile configuration and tmm6 are loaded from cfg (amxConsts' layout), tmm0 and tmm1
// zeroed, tmm2/tmm3 loaded from a and a+704 (rows 32 bytes apart), tmm4/tmm5 from b
// and b+512 (rows 64 bytes apart); then TDPBSUD tmm0 += tmm2·tmm4, tmm1 += tmm3·tmm5;
// with q4 set, tmm4/tmm5 are loaded again from scr+2048 and scr+2560 and multiplied
// likewise; then TDPBSSD tmm0 += tmm2·tmm6, tmm1 += tmm3·tmm6, and tmm0/tmm1 are
// stored at scr and scr+1024.
//
//go:noescape
func amxProbe(a, b, scr, cfg *byte, q4 bool)

// amxConsts is what an AMX kernel loads on entry: the tile configuration (LDTILECFG,
// 64 bytes), then eight 64-byte rows of the signed byte −k (tmm6). Palette 1; tmm0,
// tmm1: 16×16 int32 block sums (16 rows × 64 bytes); tmm2, tmm3: sixteen tokens' 32
// activation bytes (16 rows × 32 bytes); tmm4, tmm5: sixteen weight rows' 32 quants,
// four bytes per row and tile row (8 rows × 64 bytes); tmm6: −k in the same shape,
// so that TDPBSSD adds −k·Σy, each token's starting sum, to the block sums (the
// weights are stored as q+k; see prepActs).
type amxConsts [64 + 512]byte

// newAMXConsts returns the constants of a type whose weights are stored as q+k.
func newAMXConsts(k int32) *amxConsts {
	var c amxConsts
	c[0] = 1 // palette
	for t, sh := range [7][2]int{{16, 64}, {16, 64}, {16, 32}, {16, 32}, {8, 64}, {8, 64}, {8, 64}} {
		c[16+2*t] = byte(sh[1]) // bytes per row (little-endian uint16; all below 256)
		c[48+t] = byte(sh[0])   // rows
	}
	for i := 64; i < len(c); i++ {
		c[i] = byte(int8(-k))
	}
	return &c
}

func init() {
	x := &cpu.X86
	switch {
	case !x.HasAMXTile || !x.HasAMXInt8:
		amxWhyOff = "the CPU has no AMX-INT8"
		return
	case !x.HasAVX512F || !x.HasAVX512BW || !x.HasAVX512VL:
		amxWhyOff = "the CPU has AMX-INT8 but not AVX-512 (F, BW, VL)"
		return
	}
	amxWhyOff = ""
	amxEnable = enableAMX
	if ok, why := amxGate(); !ok {
		amxWhyOff = why
		return
	}
	if err := amxEnable(); err != nil {
		amxWhyOff = "the OS refused the AMX tile state (" + err.Error() + "); the VNNI kernels run"
		return
	}
	amxOn = true
}

// enableAMX is amxEnable where the CPU has AMX-INT8 and AVX-512.
func enableAMX() error {
	if tileX16 != nil {
		return nil
	}
	if err := requestAMX(); err != nil {
		return err
	}
	consts := map[*tileFmt]*amxConsts{}
	for t, k := range map[kernels.DType]amxKernel{
		kernels.Q8_0: amxQ8x16, kernels.Q4_0: amxQ4x16, kernels.Q4_K: amxQ4Kx16,
	} {
		f := tileFmts[t]
		amxKernels[f], consts[f] = k, newAMXConsts(f.pk.k)
	}
	tileX16 = func(f *tileFmt, nu int, tile, act []byte, s *amxScratch, dst []float32, stride int) {
		if dst == nil {
			dst, stride = s.out[:], tileRows
		}
		_ = dst[(amxToks-1)*stride+tileRows-1]
		if nu == 0 {
			for t := range amxToks {
				clear(dst[t*stride : t*stride+tileRows])
			}
			return
		}
		_, _ = tile[nu*f.unitBytes-1], act[nu*f.unit/f.pk.bs*amxToks*(f.pk.bs+12)-1]
		amxKernels[f](nu, &tile[0], &act[0], s.tiles(), &consts[f][0], &dst[0], 4*stride)
	}
	return nil
}
