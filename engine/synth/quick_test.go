package synth

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestQuickScratch(t *testing.T) {
	for _, n := range Shapes() {
		sp, _ := NewSpec(n, "F16", 0)
		st := time.Now()
		sz, err := sp.FileSize()
		t.Logf("%s params %.4fB size %d err %v (%v)", n, float64(sp.Params())/1e9, sz, err, time.Since(st))
	}
	sp, _ := NewSpec("llama-tiny", "F16", 0)
	f, _ := os.Create("/tmp/tiny-f16.gguf")
	st := time.Now()
	err := Write(context.Background(), f, sp, nil)
	f.Close()
	t.Log(err, time.Since(st))
}
