package cpu

import (
	"unsafe"

	"llmbench/kernels"
)

// StoreKV implements kernels.KVStorer: an F16 cache takes the vector conversion where
// the CPU has it (toF16Fast, the reference's values); other types the reference's.
// Storing a prompt's keys and values one float at a time was a tenth of a small
// model's prompt time.
func (c *CPU) StoreKV(kv *kernels.KVView, off int, src []float32) {
	if kv.Type == kernels.F16 && toF16Fast != nil {
		dst := kv.F16[off : off+len(src)]
		toF16Fast(src, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), 2*len(dst)))
		return
	}
	kernels.StoreKV(kv, off, src)
}
