package cpu

// Masked attention over whole sequences (the attention-gym comparison): a dense
// kernel that scores every (query, key) pair and applies an explicit mask, a fused
// causal flash kernel, and a block-sparse ("flex") kernel driven by a BlockMap, each
// with its backward pass. Tensors are float32, row-major [B][H][S][D].

import (
	"errors"
	"fmt"
	"math"
)

// MaskFunc says whether query position q may attend to key position kv in batch b and
// head h (flex attention's mask_mod).
type MaskFunc func(b, h, q, kv int) bool

// ScoreMod changes the scaled scores s = Scale·q·k before the softmax (flex
// attention's score_mod), in this order: the ALiBi bias, then the tanh soft cap.
type ScoreMod struct {
	// ALiBi holds one slope per head: s += ALiBi[h]·(kv − q) (attention-gym's
	// alibi_mod). nil: no bias.
	ALiBi []float32
	// Softcap > 0 caps the scores: s = Softcap·tanh(s/Softcap).
	Softcap float32
	// ApproxTanh uses TanhApprox in the soft cap instead of the exact tanh.
	ApproxTanh bool
}

// AttnProblem is one attention call: Q is [B][H][Sq][D], K and V are [B][H][Skv][D].
type AttnProblem struct {
	B, H, Sq, Skv, D int
	Q, K, V          []float32
	// Scale multiplies q·k (usually 1/√D).
	Scale float32
	Mod   ScoreMod
}

// AttnGrads are the gradients of an attention call, shaped as Q, K and V.
type AttnGrads struct {
	DQ, DK, DV []float32
}

// Validate says what is wrong with p's shapes, nil when nothing is.
func (p *AttnProblem) Validate() error {
	switch {
	case p.B < 1 || p.H < 1 || p.Sq < 1 || p.Skv < 1 || p.D < 1:
		return fmt.Errorf("attention: shape B=%d H=%d Sq=%d Skv=%d D=%d has a dimension below 1", p.B, p.H, p.Sq, p.Skv, p.D)
	case len(p.Q) != p.B*p.H*p.Sq*p.D:
		return fmt.Errorf("attention: Q has %d values, want %d", len(p.Q), p.B*p.H*p.Sq*p.D)
	case len(p.K) != p.B*p.H*p.Skv*p.D || len(p.V) != len(p.K):
		return fmt.Errorf("attention: K/V have %d/%d values, want %d", len(p.K), len(p.V), p.B*p.H*p.Skv*p.D)
	case p.Mod.ALiBi != nil && len(p.Mod.ALiBi) != p.H:
		return fmt.Errorf("attention: %d ALiBi slopes for %d heads", len(p.Mod.ALiBi), p.H)
	case p.Mod.Softcap < 0:
		return errors.New("attention: negative soft cap")
	}
	return nil
}

// score applies the score modification to the scaled dot product raw of query q and
// key kv in head h; t is tanh(s/Softcap) (0 without a soft cap), which the backward
// pass needs.
func (p *AttnProblem) score(raw float32, h, q, kv int) (s, t float32) {
	s = raw * p.Scale
	if p.Mod.ALiBi != nil {
		s += p.Mod.ALiBi[h] * float32(kv-q)
	}
	if c := p.Mod.Softcap; c > 0 {
		if p.Mod.ApproxTanh {
			t = TanhApprox(s / c)
		} else {
			t = float32(math.Tanh(float64(s / c)))
		}
		s = c * t
	}
	return s, t
}

// dscore turns the gradient of a modified score into the gradient of q·k: the soft
// cap's derivative is 1 − tanh², the ALiBi bias has none, and the scale comes last.
func (p *AttnProblem) dscore(ds, t float32) float32 {
	if p.Mod.Softcap > 0 {
		ds *= 1 - t*t
	}
	return ds * p.Scale
}

// TanhApproxMaxAbsErr bounds |TanhApprox(x) − tanh(x)| over all float32 x (measured
// on a grid of step 1e-5 over [−12, 12] by TestTanhApprox: 3.4e-7, at |x| ≈ 2.5). A
// score s capped at c then moves by at most c·TanhApproxMaxAbsErr, so every softmax
// weight changes by a factor within exp(±2·c·TanhApproxMaxAbsErr): at c = 30,
// ±0.0024 %.
const TanhApproxMaxAbsErr = 4e-7

// TanhApprox is the soft cap's approximate tanh, a cheaper stand-in for the exact one
// as attention-gym's tanh.approx.f32: the [7/6] Padé approximant
// x(135135 + 17325x² + 378x⁴ + x⁶) / (135135 + 62370x² + 3150x⁴ + 28x⁶) in float32
// for |x| < 2.5 (one division, no exp: the scores of a soft cap of 30 almost always
// fall there), ±(1 − 2/(1 + e^(2|x|))) beyond, where the approximant's error would
// grow. Its error is at most TanhApproxMaxAbsErr.
func TanhApprox(x float32) float32 {
	a := x
	if a < 0 {
		a = -a
	}
	if a >= 2.5 {
		r := 1 - 2/(1+expf(2*a))
		if x < 0 {
			return -r
		}
		return r
	}
	x2 := x * x
	return x * (135135 + x2*(17325+x2*(378+x2))) / (135135 + x2*(62370+x2*(3150+x2*28)))
}

// SoftmaxExpMaxRelErr bounds |softmaxExp(x) − eˣ| / eˣ for x in [−87, 0.1], where the
// masked kernels call it (measured by TestSoftmaxExp on a grid of step 1e-4: 9.7e-8,
// float32 rounding of the polynomial, about 1 ulp).
const SoftmaxExpMaxRelErr = 2e-7

// softmaxExp is eˣ in float32 for the softmax weights (x ≤ 0 up to rounding): 2ⁿ·eʳ
// with n the nearest integer to x·log2(e), r = x − n·ln2 computed with ln2 split in
// two (Cody–Waite, so r stays exact to float32 even at x = −87), eʳ, |r| ≤ ln2/2, a
// degree-7 Taylor polynomial (truncation ≤ 6e-9), and n added to the exponent bits.
// It spares the float64 round trip of math.Exp (1.2–1.9× faster in a loop on the
// shared 2-core machine, three alternating runs; exp is a large part of a score's
// time). Below −87 it returns 0 (eˣ < 2⁻¹²⁵, below float32's normal range).
func softmaxExp(x float32) float32 {
	if x < -87 {
		return 0
	}
	t := x * math.Log2E
	var n int32
	if t >= 0 {
		n = int32(t + 0.5)
	} else {
		n = int32(t - 0.5)
	}
	const ln2Hi, ln2Lo = 0.693359375, -2.12194440e-4
	r := x - float32(n)*ln2Hi - float32(n)*ln2Lo
	p := float32(1.0 / 5040)
	p = p*r + 1.0/720
	p = p*r + 1.0/120
	p = p*r + 1.0/24
	p = p*r + 1.0/6
	p = p*r + 0.5
	p = p*r + 1
	p = p*r + 1
	return math.Float32frombits(uint32(int32(math.Float32bits(p)) + n<<23))
}

// DenseMask is an explicit boolean mask [B][H][Sq][Skv]: what "dense attention with a
// mask" reads (torch's attn_mask). B or H of 1 broadcast over batches or heads.
type DenseMask struct {
	B, H, Sq, Skv int
	Allow         []bool
}

// NewDenseMask evaluates f at every position of a [B][H][Sq][Skv] mask, B or H of 1
// meaning the mask does not depend on the batch or head, spread over c's threads.
func (c *CPU) NewDenseMask(f MaskFunc, B, H, Sq, Skv int) *DenseMask {
	m := &DenseMask{B: B, H: H, Sq: Sq, Skv: Skv, Allow: make([]bool, B*H*Sq*Skv)}
	c.pool.Run(B*H*Sq, func(part, _ int) {
		b, h, q := part/(H*Sq), part/Sq%H, part%Sq
		row := m.Allow[part*Skv:][:Skv]
		for kv := range row {
			row[kv] = f(b, h, q, kv)
		}
	})
	return m
}

// row returns the mask of query q in batch b, head h.
func (m *DenseMask) row(b, h, q int) []bool {
	if m.B == 1 {
		b = 0
	}
	if m.H == 1 {
		h = 0
	}
	return m.Allow[((b*m.H+h)*m.Sq+q)*m.Skv:][:m.Skv]
}

func (m *DenseMask) check(p *AttnProblem) error {
	if m.Sq != p.Sq || m.Skv != p.Skv || (m.B != 1 && m.B != p.B) || (m.H != 1 && m.H != p.H) || len(m.Allow) != m.B*m.H*m.Sq*m.Skv {
		return fmt.Errorf("attention: mask %dx%dx%dx%d does not fit B=%d H=%d Sq=%d Skv=%d", m.B, m.H, m.Sq, m.Skv, p.B, p.H, p.Sq, p.Skv)
	}
	return nil
}

// BlockKind says what a (query block, key block) tile of a mask holds.
type BlockKind uint8

// The kinds of tile.
const (
	BlockEmpty   BlockKind = iota // every position masked: skipped
	BlockPartial                  // some masked: the mask is applied position by position
	BlockFull                     // none masked: computed without looking at the mask
)

// BlockMap is the block structure of a mask (flex attention's BlockMask): the kind of
// every Size×Size tile, per query block the key blocks that are not empty, and the
// mask of every partial tile as a bitmap (kept while the map is computed, as the mask
// is evaluated at every position anyway, so a partial tile tests one bit per position
// instead of calling the mask function). B or H of 1 broadcast over batches or heads.
type BlockMap struct {
	B, H, Sq, Skv, Size int
	NQ, NK              int         // query and key blocks
	Kinds               []BlockKind // [B][H][NQ][NK]
	// live[(b·H+h)·NQ+qb] lists the non-empty key blocks of a query block.
	live [][]int32
	// bits[tile] is a partial tile's mask, bit i·Size+j for query q0+i and key k0+j
	// (nil for the other tiles).
	bits [][]uint64
}

// NewBlockMap computes the block map of mask f over [B][H][Sq][Skv] with square
// tiles of size positions, evaluating f at every position once (B or H of 1: f does
// not depend on them), spread over c's threads.
func (c *CPU) NewBlockMap(f MaskFunc, B, H, Sq, Skv, size int) *BlockMap {
	if size < 1 {
		panic("cpu: block size below 1")
	}
	nq, nk := (Sq+size-1)/size, (Skv+size-1)/size
	m := &BlockMap{B: B, H: H, Sq: Sq, Skv: Skv, Size: size, NQ: nq, NK: nk,
		Kinds: make([]BlockKind, B*H*nq*nk), live: make([][]int32, B*H*nq), bits: make([][]uint64, B*H*nq*nk)}
	words := (size*size + 63) / 64
	c.pool.Run(B*H*nq, func(part, _ int) {
		b, h, qb := part/(H*nq), part/nq%H, part%nq
		kinds := m.Kinds[part*nk:][:nk]
		bits := make([]uint64, words)
		for kb := range kinds {
			some, all := false, true
			clear(bits)
			for q := qb * size; q < min(Sq, (qb+1)*size); q++ {
				for kv := kb * size; kv < min(Skv, (kb+1)*size); kv++ {
					if f(b, h, q, kv) {
						some = true
						bit := (q-qb*size)*size + kv - kb*size
						bits[bit>>6] |= 1 << (bit & 63)
					} else {
						all = false
					}
				}
			}
			switch {
			case all:
				kinds[kb] = BlockFull
			case some:
				kinds[kb] = BlockPartial
				m.bits[part*nk+kb] = bits
				bits = make([]uint64, words)
			}
			if some {
				m.live[part] = append(m.live[part], int32(kb))
			}
		}
	})
	return m
}

// Sparsity is the share of tiles that are empty (skipped entirely), in [0, 1].
func (m *BlockMap) Sparsity() float64 {
	empty := 0
	for _, k := range m.Kinds {
		if k == BlockEmpty {
			empty++
		}
	}
	return float64(empty) / float64(len(m.Kinds))
}

// Kind returns the kind of tile (qb, kb) in batch b, head h.
func (m *BlockMap) Kind(b, h, qb, kb int) BlockKind {
	b, h = m.at(b, h)
	return m.Kinds[((b*m.H+h)*m.NQ+qb)*m.NK+kb]
}

func (m *BlockMap) at(b, h int) (int, int) {
	if m.B == 1 {
		b = 0
	}
	if m.H == 1 {
		h = 0
	}
	return b, h
}

func (m *BlockMap) check(p *AttnProblem) error {
	if m.Sq != p.Sq || m.Skv != p.Skv || (m.B != 1 && m.B != p.B) || (m.H != 1 && m.H != p.H) {
		return fmt.Errorf("attention: block map %dx%dx%dx%d does not fit B=%d H=%d Sq=%d Skv=%d", m.B, m.H, m.Sq, m.Skv, p.B, p.H, p.Sq, p.Skv)
	}
	return nil
}

// tilePlan tells the flash kernels which key blocks a query block visits and which
// positions of a partial tile are allowed. Implementations are value types so that
// each instantiation of the generic kernels is compiled for its own plan.
type tilePlan interface {
	size() int
	// blocks appends the non-empty key blocks of query block qb to dst.
	blocks(b, h, qb int, dst []tileRef) []tileRef
	// allow says whether query q may see key kv in partial tile t, bit being the
	// position's index i·size+j inside the tile.
	allow(t *tileRef, q, kv, bit int) bool
}

// tileRef is a key block to visit, whether it needs the mask, and the mask of a
// partial tile of a block map.
type tileRef struct {
	kb      int
	partial bool
	bits    []uint64
}

// causalPlan is causal attention (kv ≤ q, torch's is_causal) in tiles of n: the
// blocks and the mask follow from the indices, no map and no mask function.
type causalPlan struct{ n, sq, skv int }

func (c causalPlan) size() int { return c.n }

func (c causalPlan) blocks(_, _, qb int, dst []tileRef) []tileRef {
	q0, qLast := qb*c.n, min(c.sq, (qb+1)*c.n)-1
	for kb := 0; kb*c.n <= qLast && kb*c.n < c.skv; kb++ {
		kvLast := min(c.skv, (kb+1)*c.n) - 1
		dst = append(dst, tileRef{kb: kb, partial: kvLast > q0})
	}
	return dst
}

func (causalPlan) allow(_ *tileRef, q, kv, _ int) bool { return kv <= q }

// mapPlan is a block map: empty tiles skipped, the mask applied on partial tiles
// only (from their bitmaps).
type mapPlan struct{ m *BlockMap }

func (p mapPlan) size() int { return p.m.Size }

func (p mapPlan) blocks(b, h, qb int, dst []tileRef) []tileRef {
	b, h = p.m.at(b, h)
	row := (b*p.m.H+h)*p.m.NQ + qb
	kinds := p.m.Kinds[row*p.m.NK:][:p.m.NK]
	for _, kb := range p.m.live[row] {
		dst = append(dst, tileRef{kb: int(kb), partial: kinds[kb] == BlockPartial, bits: p.m.bits[row*p.m.NK+int(kb)]})
	}
	return dst
}

func (mapPlan) allow(t *tileRef, _, _, bit int) bool { return t.bits[bit>>6]>>(bit&63)&1 != 0 }

// attnScratchF holds one worker's space for the masked attention kernels.
type attnScratchF struct {
	s, t, m, l []float32
	acc        []float32
	tiles      []tileRef
}

func newScratches(n int) []attnScratchF { return make([]attnScratchF, n) }

var negInf = float32(math.Inf(-1))

func checkOut(p *AttnProblem, o, lse []float32) {
	if err := p.Validate(); err != nil {
		panic(err)
	}
	if len(o) != len(p.Q) || len(lse) != p.B*p.H*p.Sq {
		panic(fmt.Sprintf("attention: output %d/%d values, want %d/%d", len(o), len(lse), len(p.Q), p.B*p.H*p.Sq))
	}
}

// AttnCausal is the fused causal flash kernel: o = softmax(mod(Scale·QKᵀ), kv ≤ q)·V
// in block×block tiles with an online softmax (running maximum and sum per row), tiles
// above the diagonal skipped and the causal test applied on diagonal tiles only.
// lse receives each row's log-sum-exp of the modified scores (−Inf for a row with
// nothing allowed, whose output is 0), which AttnCausalBackward needs. Parallel over
// (batch, head, query block).
func (c *CPU) AttnCausal(o, lse []float32, p *AttnProblem, block int) {
	checkOut(p, o, lse)
	flashForward(c, o, lse, p, causalPlan{n: block, sq: p.Sq, skv: p.Skv})
}

// AttnBlockSparse is the block-sparse ("flex") kernel: as AttnCausal but the tiles
// come from bm: empty tiles are skipped, partial tiles apply the mask per position
// (from the tile's bitmap), full tiles are computed without the mask.
func (c *CPU) AttnBlockSparse(o, lse []float32, p *AttnProblem, bm *BlockMap) {
	checkOut(p, o, lse)
	if err := bm.check(p); err != nil {
		panic(err)
	}
	flashForward(c, o, lse, p, mapPlan{m: bm})
}

func flashForward[P tilePlan](c *CPU, o, lse []float32, p *AttnProblem, plan P) {
	n, d := plan.size(), p.D
	nq := (p.Sq + n - 1) / n
	scr := newScratches(c.threads)
	c.pool.Run(p.B*p.H*nq, func(part, worker int) {
		b, h, qb := part/(p.H*nq), part/nq%p.H, part%nq
		ws := &scr[worker]
		ws.s, ws.m, ws.l, ws.acc = grow(ws.s, n), grow(ws.m, n), grow(ws.l, n), grow(ws.acc, n*d)
		q0, q1 := qb*n, min(p.Sq, (qb+1)*n)
		rows := q1 - q0
		m, l, acc := ws.m[:rows], ws.l[:rows], ws.acc[:rows*d]
		for i := range m {
			m[i], l[i] = negInf, 0
		}
		clear(acc)
		head := (b*p.H + h)
		qs := p.Q[(head*p.Sq+q0)*d:]
		ks, vs := p.K[head*p.Skv*d:][:p.Skv*d], p.V[head*p.Skv*d:][:p.Skv*d]
		ws.tiles = plan.blocks(b, h, qb, ws.tiles[:0])
		for ti := range ws.tiles {
			t := &ws.tiles[ti]
			k0, k1 := t.kb*n, min(p.Skv, (t.kb+1)*n)
			s := ws.s[:k1-k0]
			for i := range rows {
				qi, qv := q0+i, qs[i*d:][:d]
				tm := negInf
				for j := range s {
					kv := k0 + j
					if t.partial && !plan.allow(t, qi, kv, i*n+j) {
						s[j] = negInf
						continue
					}
					s[j], _ = p.score(dotF32s(qv, ks[kv*d:][:d]), h, qi, kv)
					tm = max(tm, s[j])
				}
				if tm == negInf {
					continue
				}
				a := acc[i*d:][:d]
				if tm > m[i] {
					if l[i] != 0 {
						r := softmaxExp(m[i] - tm)
						l[i] *= r
						for x := range a {
							a[x] *= r
						}
					}
					m[i] = tm
				}
				for j, v := range s {
					if v == negInf {
						continue
					}
					e := softmaxExp(v - m[i])
					l[i] += e
					axpyF32s(a, e, vs[(k0+j)*d:][:d])
				}
			}
		}
		finish(o[(head*p.Sq+q0)*d:][:rows*d], lse[head*p.Sq+q0:][:rows], acc, m, l)
	})
}

// finish writes normalized rows and their log-sum-exp.
func finish(o, lse, acc, m, l []float32) {
	d := len(acc) / len(m)
	for i := range m {
		out := o[i*d:][:d]
		if l[i] == 0 {
			clear(out)
			lse[i] = negInf
			continue
		}
		inv := 1 / l[i]
		for x, v := range acc[i*d:][:d] {
			out[x] = v * inv
		}
		lse[i] = m[i] + float32(math.Log(float64(l[i])))
	}
}

// AttnDense is dense attention with an explicit mask (torch's sdpa with attn_mask):
// every row scores all Skv keys, masked scores become −Inf, a two-pass softmax, and the
// weighted sum over all Skv values. It skips nothing, so its work does not depend on
// the mask. lse is as AttnCausal's. Parallel over (batch, head, query row).
func (c *CPU) AttnDense(o, lse []float32, p *AttnProblem, mask *DenseMask) {
	checkOut(p, o, lse)
	if err := mask.check(p); err != nil {
		panic(err)
	}
	d := p.D
	scr := newScratches(c.threads)
	c.pool.Run(p.B*p.H*p.Sq, func(part, worker int) {
		b, h, qi := part/(p.H*p.Sq), part/p.Sq%p.H, part%p.Sq
		ws := &scr[worker]
		ws.s = grow(ws.s, p.Skv)
		s := ws.s[:p.Skv]
		head := b*p.H + h
		qv := p.Q[part*d:][:d]
		ks, vs := p.K[head*p.Skv*d:][:p.Skv*d], p.V[head*p.Skv*d:][:p.Skv*d]
		allow := mask.row(b, h, qi)
		mx := negInf
		for kv := range s {
			v, _ := p.score(dotF32s(qv, ks[kv*d:][:d]), h, qi, kv)
			if !allow[kv] {
				v = negInf
			}
			s[kv] = v
			mx = max(mx, v)
		}
		out := o[part*d:][:d]
		clear(out)
		if mx == negInf {
			lse[part] = negInf
			return
		}
		var sum float32
		for kv, v := range s {
			e := softmaxExp(v - mx)
			s[kv] = e
			sum += e
		}
		inv := 1 / sum
		for kv, e := range s {
			axpyF32s(out, e*inv, vs[kv*d:][:d])
		}
		lse[part] = mx + float32(math.Log(float64(sum)))
	})
}

func checkGrads(p *AttnProblem, g AttnGrads, o, lse, dO []float32) {
	checkOut(p, o, lse)
	if len(dO) != len(o) || len(g.DQ) != len(p.Q) || len(g.DK) != len(p.K) || len(g.DV) != len(p.V) {
		panic("attention: gradient shapes do not match the problem")
	}
}

// rowDots computes D_i = dO_i·O_i of every query row of one head (the softmax
// backward's correction term).
func rowDots(dst, o, dO []float32, d int) {
	for i := range dst {
		dst[i] = dotF32s(dO[i*d:][:d], o[i*d:][:d])
	}
}

// AttnCausalBackward is AttnCausal's backward pass: from the forward's o and lse and
// the output gradient dO it writes g (overwriting it), recomputing each tile's
// probabilities P = exp(s − lse): dV += Pᵀ·dO, dP = dO·Vᵀ, dS = P∘(dP − rowsum(dO∘O)),
// dQ += dS·K·Scale, dK += dSᵀ·Q·Scale, the soft cap's 1 − tanh² folded into dS.
// Parallel over (batch, head): each part owns its head's dQ, dK and dV.
func (c *CPU) AttnCausalBackward(g AttnGrads, p *AttnProblem, block int, o, lse, dO []float32) {
	checkGrads(p, g, o, lse, dO)
	flashBackward(c, g, p, causalPlan{n: block, sq: p.Sq, skv: p.Skv}, o, lse, dO)
}

// AttnBlockSparseBackward is AttnBlockSparse's backward pass, visiting the tiles of
// bm as the forward does (see AttnCausalBackward).
func (c *CPU) AttnBlockSparseBackward(g AttnGrads, p *AttnProblem, bm *BlockMap, o, lse, dO []float32) {
	checkGrads(p, g, o, lse, dO)
	if err := bm.check(p); err != nil {
		panic(err)
	}
	flashBackward(c, g, p, mapPlan{m: bm}, o, lse, dO)
}

// headBuf returns the [S][D] slice of head (b·H+h) of a tensor.
func headBuf(x []float32, head, s, d int) []float32 { return x[head*s*d:][:s*d] }

func flashBackward[P tilePlan](c *CPU, g AttnGrads, p *AttnProblem, plan P, o, lse, dO []float32) {
	n, d := plan.size(), p.D
	nq := (p.Sq + n - 1) / n
	scr := newScratches(c.threads)
	c.pool.Run(p.B*p.H, func(head, worker int) {
		b, h := head/p.H, head%p.H
		ws := &scr[worker]
		ws.m = grow(ws.m, p.Sq)
		dr := ws.m[:p.Sq]
		qs, dq, dos := headBuf(p.Q, head, p.Sq, d), headBuf(g.DQ, head, p.Sq, d), headBuf(dO, head, p.Sq, d)
		ks, vs := headBuf(p.K, head, p.Skv, d), headBuf(p.V, head, p.Skv, d)
		dk, dv := headBuf(g.DK, head, p.Skv, d), headBuf(g.DV, head, p.Skv, d)
		ls := lse[head*p.Sq:][:p.Sq]
		clear(dq)
		clear(dk)
		clear(dv)
		rowDots(dr, headBuf(o, head, p.Sq, d), dos, d)
		for qb := range nq {
			q0, q1 := qb*n, min(p.Sq, (qb+1)*n)
			ws.tiles = plan.blocks(b, h, qb, ws.tiles[:0])
			for ti := range ws.tiles {
				t := &ws.tiles[ti]
				k0, k1 := t.kb*n, min(p.Skv, (t.kb+1)*n)
				for qi := q0; qi < q1; qi++ {
					if ls[qi] == negInf {
						continue
					}
					qv, do, dqv := qs[qi*d:][:d], dos[qi*d:][:d], dq[qi*d:][:d]
					for kv := k0; kv < k1; kv++ {
						if t.partial && !plan.allow(t, qi, kv, (qi-q0)*n+kv-k0) {
							continue
						}
						kr := ks[kv*d:][:d]
						s, th := p.score(dotF32s(qv, kr), h, qi, kv)
						pr := softmaxExp(s - ls[qi])
						axpyF32s(dv[kv*d:][:d], pr, do)
						ds := p.dscore(pr*(dotF32s(do, vs[kv*d:][:d])-dr[qi]), th)
						axpyF32s(dqv, ds, kr)
						axpyF32s(dk[kv*d:][:d], ds, qv)
					}
				}
			}
		}
	})
}

// AttnDenseBackward is AttnDense's backward pass: as AttnCausalBackward over every
// (query, key) pair, masked pairs carrying P = 0 through the same arithmetic (nothing
// is skipped). Parallel over (batch, head).
func (c *CPU) AttnDenseBackward(g AttnGrads, p *AttnProblem, mask *DenseMask, o, lse, dO []float32) {
	checkGrads(p, g, o, lse, dO)
	if err := mask.check(p); err != nil {
		panic(err)
	}
	d := p.D
	scr := newScratches(c.threads)
	c.pool.Run(p.B*p.H, func(head, worker int) {
		b, h := head/p.H, head%p.H
		ws := &scr[worker]
		ws.m, ws.s, ws.t = grow(ws.m, p.Sq), grow(ws.s, p.Skv), grow(ws.t, p.Skv)
		dr, pr, th := ws.m[:p.Sq], ws.s[:p.Skv], ws.t[:p.Skv]
		qs, dq, dos := headBuf(p.Q, head, p.Sq, d), headBuf(g.DQ, head, p.Sq, d), headBuf(dO, head, p.Sq, d)
		ks, vs := headBuf(p.K, head, p.Skv, d), headBuf(p.V, head, p.Skv, d)
		dk, dv := headBuf(g.DK, head, p.Skv, d), headBuf(g.DV, head, p.Skv, d)
		ls := lse[head*p.Sq:][:p.Sq]
		clear(dq)
		clear(dk)
		clear(dv)
		rowDots(dr, headBuf(o, head, p.Sq, d), dos, d)
		for qi := range p.Sq {
			qv, do, dqv := qs[qi*d:][:d], dos[qi*d:][:d], dq[qi*d:][:d]
			allow := mask.row(b, h, qi)
			for kv := range pr {
				s, t := p.score(dotF32s(qv, ks[kv*d:][:d]), h, qi, kv)
				pr[kv], th[kv] = 0, t
				if allow[kv] {
					pr[kv] = softmaxExp(s - ls[qi])
				}
			}
			for kv, w := range pr {
				kr := ks[kv*d:][:d]
				axpyF32s(dv[kv*d:][:d], w, do)
				ds := p.dscore(w*(dotF32s(do, vs[kv*d:][:d])-dr[qi]), th[kv])
				axpyF32s(dqv, ds, kr)
				axpyF32s(dk[kv*d:][:d], ds, qv)
			}
		}
	})
}
