package cpu

import (
	"fmt"
	"os"
	"strings"

	"llmbench/kernels"
)

// path is one of MatMul's ways through a product.
type path int

const (
	pathRef      path = iota // the kernels.Traits reference dot product, row by row
	pathDot                  // an assembly dot product (fastDots), row by row
	pathHalfX4               // F16/BF16, one token: the halfKern's x4 kernel
	pathHalfGemm             // F16/BF16, several tokens: the halfKern's gemm kernel
	pathTile                 // the tiled copy and the tile kernels (tileFmt)
	pathBatch2               // MXFP4 on AVX2: two rows × up to four tokens (batch2)
)

// pathOf returns the path MatMul takes for weights of type t with cols columns and n
// tokens.
func pathOf(t kernels.DType, cols, n int) path {
	if hk := halfKerns[t]; hk != nil && hk.gemm != nil && cols%32 == 0 {
		if n > 1 && (n > claimToks || hk.rows == nil) {
			return pathHalfGemm
		}
		return pathHalfX4 // the rows kernel once per token for up to claimToks (bandX4)
	}
	if f := tileFmts[t]; f != nil && f.x4 != nil && tileX4 != nil && cols%f.unit == 0 {
		return pathTile
	}
	if batch2[t] != nil && cols%32 == 0 {
		return pathBatch2
	}
	if fastDots[t] != nil {
		return pathDot
	}
	return pathRef
}

// kernelTypes are the weight types Kernels describes (sysinfo lists each, saying where
// one takes the reference dot product).
var kernelTypes = []kernels.DType{kernels.F32, kernels.F16, kernels.BF16, kernels.Q8_0, kernels.Q4_0, kernels.Q4_1, kernels.Q5_0, kernels.Q5_1,
	kernels.Q2_K, kernels.Q3_K, kernels.Q4_K, kernels.Q5_K, kernels.Q6_K, kernels.IQ4_NL, kernels.IQ4_XS, kernels.MXFP4}

// describeCols is the row length Kernels describes: a multiple of every block and
// tile unit, as every llama-family matrix is.
const describeCols = 4096

// Kernels implements kernels.KernelLister: for each weight type, the kernel that
// multiplies it in decode (one token) and prompt (several tokens) steps on this CPU,
// and the CPU features (and LLMBENCH_CPU ceiling) that chose it.
func (c *CPU) Kernels() []kernels.KernelChoice { return Kernels() }

// Kernels is CPU.Kernels without a backend (the choice depends only on the CPU and
// LLMBENCH_CPU).
func Kernels() []kernels.KernelChoice {
	var out []kernels.KernelChoice
	for _, t := range kernelTypes {
		for _, ph := range []struct {
			name string
			n    int
		}{{kernels.PhaseDecode, 1}, {kernels.PhasePrompt, gemmToks}} {
			k, d, why := describePath(t, pathOf(t, describeCols, ph.n), ph.n)
			out = append(out, kernels.KernelChoice{Type: t, Phase: ph.name, Kernel: k, Detail: d, Why: why})
		}
	}
	for _, t := range []kernels.DType{kernels.F16, kernels.F32, kernels.Q8_0} {
		k, d, why := describeAttention(t)
		out = append(out, kernels.KernelChoice{Type: t, Phase: kernels.PhaseAttention, Kernel: k, Detail: d, Why: why})
	}
	return out
}

// describeAttention names the attention kernel for a key/value cache of type kv, says
// what it does and why it runs.
func describeAttention(kv kernels.DType) (kernel, detail, why string) {
	if !attnTileAsm { // level go, as the reference path's
		return "attn-row-go", "pure Go, one position at a time", levelWhy(kv, pathRef)
	}
	tiles := "64-position tiles per query head"
	switch kv {
	case kernels.Q8_0:
		tiles = "64-position tiles; the query heads of a key/value head share each tile's rows, dequantized to float32 once (VPMOVSXBD + VCVTDQ2PS ymm; a prompt's whole cache once per call)"
	case kernels.F16:
		tiles = "64-position tiles; the query heads of a key/value head share each tile's rows, widened to float32 once (VCVTPH2PS ymm)"
	}
	scores, why := "", "AVX2+FMA+F16C"
	if attnScores16 {
		scores, why = " (eight positions at a time, VFMADD231PS zmm; exponentials sixteen at a time; value sums two heads at a time in zmm where heads share a tile and the head size is a multiple of 16)", "AVX-512 F/VL/BW for the scores, exponentials and paired value sums, AVX2+FMA+F16C"
	}
	return "attn-tile-" + strings.ToLower(kv.String()), tiles + ", then scores" + scores + ", exponentials and value sum one assembly loop each, VFMADD231PS ymm (head size a multiple of 8)",
		why + envNote()
}

// twoTokens is the prompt line's note on a step of claimToks tokens (a batch of two
// sequences) where it runs the decode kernel once per token, the second pass reading
// the weights from cache: the quarters tile path (claimBands) and the F16/BF16 rows
// kernel (pathOf, bandX4); "" elsewhere.
func twoTokens(t kernels.DType) string {
	h := halfKerns[t]
	perToken := tileFmts[t] != nil && tileFmts[t].x1m != nil && x1Quarters
	if h != nil && h.gemm != nil {
		perToken = pathOf(t, describeCols, claimToks) == pathHalfX4
	}
	if !perToken {
		return ""
	}
	kernel, _, _ := describePath(t, pathOf(t, describeCols, 1), 1)
	return fmt.Sprintf("; %d tokens (a batch of two sequences): %s once per token", claimToks, kernel)
}

// describePath names the kernel of path p for type t and n tokens, says what it does
// and why it runs.
func describePath(t kernels.DType, p path, n int) (kernel, detail, why string) {
	ty := strings.ToLower(t.String())
	switch p {
	case pathTile:
		if name, why := amxPromptKernel(t); n > 1 && name != "" {
			return name, fmt.Sprintf("16-row tiles × 16 tokens, TDPBSSD/TDPBUSD (from %d tokens; fewer: tile-%s-x4)", amxMinToks, ty), why
		}
		if level == "avx2" { // tile_avx2_amd64.s
			// pick names the instruction set of t's kernel of kind use, its products and why.
			pick := func(use vnniUse) (isa, op, why string) {
				if avxVNNI[t]&use != 0 {
					return "avxvnni", "VPDPBUSD ymm (AVX-VNNI), two halves of 8 rows", "AVX2+FMA+F16C+AVX-VNNI; no AVX-512 VNNI" + envNote()
				}
				return "avx2", "VPMADDUBSW + VPMADDWD ymm, two halves of 8 rows", levelWhy(t, p)
			}
			switch {
			case n > 1:
				isa, op, why := pick(vnniX4)
				return "tile-" + ty + "-x4-" + isa, "16-row tiles × 4 tokens, " + op + twoTokens(t), why
			case tileFmts[t].x1m != nil: // only in quarters
				isa, op, why := pick(vnniX1m)
				kernel, pf := "tile-"+ty+"-x1m-"+isa, ""
				if tileFmts[t].x1mPF {
					kernel, pf = kernel+"-pf", ", software prefetch "+x1mAhead(t)+" of each stream"
				}
				return kernel, "4 tiles of 16 rows × 1 token, one from each quarter of a worker's band (four streams; one band per worker, its calls claimed one at a time), " + op + pf +
					orderNote("AMD: quarters, as at the VNNI level"), why
			}
			isa, op, why := pick(vnniX1)
			return "tile-" + ty + "-x1-" + isa, "16-row tile × 1 token, " + op + orderNote(""), why
		}
		switch {
		case n > 1:
			kernel, detail = "tile-"+ty+"-x4", "16-row tiles × 4 tokens, VPDPBUSD zmm"+twoTokens(t)
		case tileFmts[t].x1m != nil && x1Quarters:
			kernel, detail = "tile-"+ty+"-x1m", "4 tiles of 16 rows × 1 token, one from each quarter of a worker's band (four streams; one band per worker, its calls claimed one at a time), VPDPBUSD zmm, "
			claim := "AMD: faster than one tile at a time"
			if f := tileFmts[t]; f.x1mPF { // the prefetching kernel of quartersPF
				kernel += "-pf"
				detail, claim = detail+"software prefetch "+x1mAhead(t)+" of each stream", claim+"; Zen 5: faster with software prefetch"
				if f.x1mWarm != nil {
					detail += warmNote()
				}
			} else {
				detail += "hardware prefetch only"
			}
			detail += orderNote(claim)
		case tileFmts[t].x1m != nil:
			kernel, detail = "tile-"+ty+"-x1m", "4 adjacent tiles of 16 rows × 1 token, VPDPBUSD zmm"+orderNote("")
		default:
			kernel, detail = "tile-"+ty+"-x1", "16-row tile × 1 token, VPDPBUSD zmm"
			claim := ""
			if x1Quarters {
				detail, claim = detail+", hardware prefetch only", "AMD: faster than software prefetch"
			}
			detail += orderNote(claim)
		}
	case pathHalfX4, pathHalfGemm:
		h, reg := halfKerns[t], "zmm"
		if h.lanes == 8 {
			reg = "ymm"
		}
		name, op := ty, "VCVTPH2PS + VFMADD231PS "+reg
		switch {
		case h.pairs:
			name, op = ty+"-dp", "VDPBF16PS zmm on bfloat16 activations"
		case t == kernels.BF16:
			op = "VPMOVZXWD+VPSLLD + VFMADD231PS " + reg
		}
		switch {
		case p == pathHalfGemm:
			kernel, detail = name+"-gemm", fmt.Sprintf("%d rows × 4 tokens, %s", h.gr, op)
			if h.gemm6 != nil {
				detail = fmt.Sprintf("%d rows × 6 tokens from %d tokens (4 below), %s", h.gr, gemm6Toks, op)
			}
			detail += twoTokens(t)
		case h.rows != nil:
			kernel, detail = name+"-rows", "four rows at a time, one per quarter of the band × 1 token (four forward streams), "+op
			claim := "AMD: four long streams per thread read faster than four adjacent rows"
			if h.rowsWarm != nil { // the prefetching kernel of quartersPF
				kernel += "-pf"
				detail, claim = detail+", software prefetch ahead of each stream"+warmNote(), claim+"; Zen 5: faster with software prefetch"
			}
			detail += orderNote(claim)
		default:
			kernel, detail = name+"-x4", "4 rows × 1 token, "+op
			if level == "avx512vnni" { // the level with both orders
				detail += orderNote("")
			}
		}
		detail += "; weights read from a copy made at load (huge pages where the system gives them)"
	case pathBatch2:
		kernel, detail = "batch-"+ty+"-avx2", "2 rows × up to 4 tokens, VPMADDUBSW ymm"
	case pathDot:
		kernel, detail = "dot-"+ty+"-"+dotISA[t], "one row × one token at a time"
	default:
		kernel, detail = "reference", "pure Go, one row × one token at a time"
	}
	return kernel, detail, levelWhy(t, p)
}

// levelWhy says which CPU features (and LLMBENCH_CPU ceiling) put type t on path p.
func levelWhy(t kernels.DType, p path) string {
	var why string
	switch {
	case p == pathRef && level != "go":
		why = "no assembly kernel for " + t.String() + " at level " + level
	case p == pathRef:
		why = "no AVX2+FMA+F16C kernels (CPU, purego build or " + EnvLevel + ")"
	case p == pathDot && level != "avx2":
		why = "AVX2+FMA+F16C; no AVX-512 kernel for " + t.String()
	case level == "avx2":
		why = "AVX2+FMA+F16C; no AVX-512 VNNI"
	case halfKerns[t] != nil && halfKerns[t].pairs && (p == pathHalfX4 || p == pathHalfGemm):
		why = "AVX-512 F/VL/BW + AVX512-VNNI + AVX512-BF16 (two products per lane and instruction)"
	default:
		why = "AVX-512 F/VL/BW + AVX512-VNNI"
	}
	return why + envNote()
}

// warmNote is the -pf kernels' note of when they run without their prefetch.
func warmNote() string {
	return fmt.Sprintf(" (none while all weights take at most %d MiB: they stay in cache)", warmBytes>>20)
}

// orderNote is a decode kernel's note of what chose its row order: LLMBENCH_DECODE_ORDER
// where set, else claim (the vendor's reason; "" for none).
func orderNote(claim string) string {
	if orderEnv != "" {
		claim = EnvDecodeOrder + "=" + orderEnv
	}
	if claim == "" {
		return ""
	}
	return "; " + claim
}

// envNote is the reasons' note of the LLMBENCH_CPU ceiling in force ("; LLMBENCH_CPU=avx2"),
// empty when none is set.
func envNote() string {
	if v := os.Getenv(EnvLevel); v != "" && levelErr == nil {
		return "; " + EnvLevel + "=" + v
	}
	return ""
}

// x1mAhead says how far ahead the prefetching four-tile kernel of type t reads its
// streams (tile_amd64.s: about PFD for the Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL,
// IQ4_XS, MXFP4, Q4_K, Q5_K and Q6_K kernels, 2048 bytes for the others).
func x1mAhead(t kernels.DType) string {
	switch t {
	case kernels.Q4_0, kernels.Q4_1, kernels.Q5_0, kernels.Q5_1, kernels.IQ4_NL, kernels.MXFP4:
		return "about 1 KiB ahead (non-temporal: PREFETCHNTA)"
	case kernels.Q8_0, kernels.Q4_K, kernels.Q5_K, kernels.Q6_K, kernels.IQ4_XS:
		return "about 1 KiB ahead"
	}
	return "about 2 KiB ahead"
}
