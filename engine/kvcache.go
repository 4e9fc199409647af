package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"llmbench/engine/model"
	"llmbench/kernels"
)

// DefaultBlockSize is the positions of one KV cache block (vLLM's default).
const DefaultBlockSize = 16

// KVMemFraction is the largest share of the memory available at load time that the
// default KV cache pool takes (when Options.KVCacheMemory is not given).
const KVMemFraction = 0.25

// KVCacheInfo describes the paged KV cache pool that Generate's requests share.
type KVCacheInfo struct {
	Type          kernels.DType
	Blocks        int   // blocks in the pool
	BlockSize     int   // positions per block
	BytesPerToken int64 // keys and values of every layer for one position, in Type
	// F16PerToken and F32PerToken are BytesPerToken in F16 and in F32, to say what the
	// cache type saves.
	F16PerToken, F32PerToken int64
	PrefixCache              bool
	Sizing                   string // how the pool size was chosen
	// Window is the rolling window (Options.Window): each sequence holds at most
	// WindowBlocks blocks, its last Window positions; 0 = none.
	Window int
}

// WindowBlocks returns the blocks of bs positions a sequence holds under a rolling
// window of w positions: the window at any alignment plus one, so that a step always
// has a block to write into.
func WindowBlocks(w, bs int) int { return (w+bs-1)/bs + 1 }

// Tokens returns the positions the pool holds.
func (k KVCacheInfo) Tokens() int { return k.Blocks * k.BlockSize }

// Bytes returns the pool's memory in bytes.
func (k KVCacheInfo) Bytes() int64 { return int64(k.Tokens()) * k.BytesPerToken }

// SavedVs returns the bytes the pool's type saves against the same pool in F16 or F32
// (typ); negative when it takes more.
func (k KVCacheInfo) SavedVs(typ kernels.DType) int64 {
	per := k.F32PerToken
	if typ == kernels.F16 {
		per = k.F16PerToken
	}
	return int64(k.Tokens())*per - k.Bytes()
}

// String describes the pool in one line: type, blocks, tokens, bytes, what the type
// saves against f16 and f32, the prefix cache and how the size was chosen.
func (k KVCacheInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "KV cache: %s, %d blocks of %d tokens (%d tokens), %s (%s/token)",
		strings.ToLower(k.Type.String()), k.Blocks, k.BlockSize, k.Tokens(), mib(k.Bytes()), kib(k.BytesPerToken))
	for _, t := range []kernels.DType{kernels.F16, kernels.F32} {
		if t == k.Type {
			continue
		}
		saved := k.SavedVs(t)
		other := k.Bytes() + saved
		if saved >= 0 {
			fmt.Fprintf(&b, "; saves %s vs %s (%.0f %%)", mib(saved), strings.ToLower(t.String()), 100*float64(saved)/float64(other))
		} else {
			fmt.Fprintf(&b, "; %s more than %s", mib(-saved), strings.ToLower(t.String()))
		}
	}
	pc := "on"
	if !k.PrefixCache {
		pc = "off"
	}
	fmt.Fprintf(&b, "; prefix cache %s; %s", pc, k.Sizing)
	if k.Window > 0 {
		fmt.Fprintf(&b, "; rolling window of %d tokens (%d blocks a sequence)", k.Window, WindowBlocks(k.Window, k.BlockSize))
	}
	return b.String()
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
func kib(n int64) string { return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10)) }

// KVCache returns the KV cache pool of Generate's requests.
func (e *Engine) KVCache() KVCacheInfo { return e.kv }

// sizeKVCache chooses the KV cache pool for o (defaults filled in, except BlockSize)
// and lowers o.SeqContext to the tokens the pool holds (without a rolling window; with
// one, a sequence needs only its ring of blocks). avail is the memory available in
// bytes (0: unknown).
func sizeKVCache(m *model.Model, o *Options, avail int64) (KVCacheInfo, error) {
	if err := m.CheckKVType(o.KVType); err != nil {
		return KVCacheInfo{}, err
	}
	if o.BlockSize <= 0 {
		o.BlockSize = DefaultBlockSize
	}
	k := KVCacheInfo{Type: o.KVType, BlockSize: o.BlockSize, BytesPerToken: m.KVBytesPerToken(o.KVType),
		F16PerToken: m.KVBytesPerToken(kernels.F16), F32PerToken: m.KVBytesPerToken(kernels.F32), PrefixCache: !o.NoPrefixCache}
	blockBytes := int64(o.BlockSize) * k.BytesPerToken
	perSeq := o.SeqContext // the tokens one sequence holds at most
	if o.Window > 0 {
		k.Window = o.Window
		perSeq = min(perSeq, WindowBlocks(o.Window, o.BlockSize)*o.BlockSize)
	}
	mem := o.KVCacheMemory
	switch {
	case mem < 0:
		return k, fmt.Errorf("engine: KV cache memory %d bytes", mem)
	case mem > 0:
		k.Sizing = "sized by --kv-cache-memory"
	case o.KVCacheFraction < 0 || o.KVCacheFraction > 1:
		return k, fmt.Errorf("engine: KV cache share %g of the available memory (want 0 to 1)", o.KVCacheFraction)
	case o.KVCacheFraction > 0:
		if avail <= 0 {
			return k, fmt.Errorf("engine: KV cache as a share of the available memory: the available memory is unknown here (give bytes)")
		}
		mem = int64(o.KVCacheFraction * float64(avail))
		k.Sizing = fmt.Sprintf("sized to %.0f %% of the %s available", 100*o.KVCacheFraction, mib(avail))
	default:
		mem = int64(o.MaxNumSeqs) * int64(perSeq) * k.BytesPerToken
		k.Sizing = fmt.Sprintf("sized for %d sequences of %d tokens", o.MaxNumSeqs, perSeq)
		if limit := int64(KVMemFraction * float64(avail)); avail > 0 && mem > limit {
			mem = max(limit, blockBytes)
			k.Sizing = fmt.Sprintf("sized to %.0f %% of the %s available", 100*KVMemFraction, mib(avail))
		}
	}
	k.Blocks = int(mem / blockBytes)
	if k.Blocks < 1 {
		return k, fmt.Errorf("engine: KV cache memory of %d bytes holds no block (one block of %d tokens takes %d bytes in %s)",
			mem, o.BlockSize, blockBytes, strings.ToLower(o.KVType.String()))
	}
	if o.Window == 0 {
		o.SeqContext = min(o.SeqContext, k.Tokens())
	} else if need := (perSeq + o.BlockSize - 1) / o.BlockSize; k.Blocks < need {
		return k, fmt.Errorf("engine: KV cache of %d blocks cannot hold one sequence's rolling window of %d tokens (%d blocks of %d)",
			k.Blocks, o.Window, need, o.BlockSize)
	}
	return k, nil
}

// memAvailable returns the memory available for new allocations in bytes (Linux's
// MemAvailable), or 0 when it is unknown.
func memAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
