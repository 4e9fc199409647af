package engine

import (
	"bufio"
	"context"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"llmbench/engine/synth"
	"llmbench/kernels"
	"llmbench/kernels/cpu"
)

// prepCheck is the CPU backend with a record of the matrices the engine prepared and
// of those it multiplied before preparing them.
type prepCheck struct {
	*cpu.CPU
	mu         sync.Mutex
	prepared   map[*kernels.Matrix]bool // Prepare's answer
	unprepared []*kernels.Matrix
}

var (
	prepChecksMu sync.Mutex
	prepChecks   []*prepCheck
)

func init() {
	kernels.Register("prepcheck-test", func(threads int) (kernels.Backend, error) {
		p := &prepCheck{CPU: cpu.New(threads), prepared: map[*kernels.Matrix]bool{}}
		prepChecksMu.Lock()
		prepChecks = append(prepChecks, p)
		prepChecksMu.Unlock()
		return p, nil
	})
}

func (p *prepCheck) Prepare(w *kernels.Matrix) bool {
	ok := p.CPU.Prepare(w)
	p.mu.Lock()
	p.prepared[w] = ok
	p.mu.Unlock()
	return ok
}

func (p *prepCheck) MatMul(dst []float32, w *kernels.Matrix, x []float32, n int) {
	p.check(w)
	p.CPU.MatMul(dst, w, x, n)
}

// MatMulShared checks every matrix: the embedded CPU's would skip MatMul's check.
func (p *prepCheck) MatMulShared(dst [][]float32, w []*kernels.Matrix, x []float32, n int) {
	for _, m := range w {
		p.check(m)
	}
	p.CPU.MatMulShared(dst, w, x, n)
}

func (p *prepCheck) check(w *kernels.Matrix) {
	p.mu.Lock()
	if _, ok := p.prepared[w]; !ok {
		p.unprepared = append(p.unprepared, w)
	}
	p.mu.Unlock()
}

// q4Model writes a small synthetic llama in Q4_0 (rows a multiple of the tile unit)
// and returns its path.
func q4Model(t *testing.T, tied bool) string { return prepModel(t, "Q4_0", tied) }

// prepModel writes q4Model's shape in weight type typ and returns its path.
func prepModel(t *testing.T, typ string, tied bool) string {
	return writeSynth(t, typ, 9, synth.Shape{Name: "prep-test", Arch: "llama", Vocab: 1024, Embd: 256, Layers: 4,
		Heads: 4, HeadsKV: 2, FF: 512, Context: 256, RopeBase: 10000, RMSEps: 1e-5, Tied: tied, Tok: synth.VocabSPM})
}

// progressLog records Load's progress calls.
type progressLog struct{ steps, last, total int64 }

func (p *progressLog) Progress(step string, done, total int64) {
	if step == PrepareStep {
		p.steps++
		p.last, p.total = done, total
	}
}

// TestLoadPreparesWeights checks that Load hands every matrix the model multiplies
// to the backend before the first request (no MatMul meets an unprepared matrix, so
// none pays for a tiling), reporting progress up to the total, and that releasing the
// prepared matrices' mapped pages changes no logit: a tied embedding, tiled for the
// output and released, is read back from the file a row at a time.
func TestLoadPreparesWeights(t *testing.T) {
	for _, tied := range []bool{false, true} {
		path := q4Model(t, tied)
		var prog progressLog
		e, err := Load(context.Background(), path, Options{Backend: "prepcheck-test", Threads: 2, Progress: &prog})
		if err != nil {
			t.Fatal(err)
		}
		prepChecksMu.Lock()
		p := prepChecks[len(prepChecks)-1]
		prepChecksMu.Unlock()
		for _, w := range e.Model.Matrices() {
			if _, ok := p.prepared[w]; !ok {
				t.Fatalf("tied=%v: a %dx%d matrix was not prepared at load", tied, w.Rows, w.Cols)
			}
		}
		if prog.steps != int64(len(e.Model.Matrices())) || prog.last != prog.total || prog.total == 0 {
			t.Errorf("tied=%v: progress %d calls ending at %d of %d, want %d calls ending at the total", tied, prog.steps, prog.last, prog.total, len(e.Model.Matrices()))
		}
		toks := []int32{1, 17, 300, 999, 5, 17}
		got, err := e.Logits(toks)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.unprepared) > 0 {
			t.Fatalf("tied=%v: %d MatMuls on matrices not prepared at load", tied, len(p.unprepared))
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := LoadBytes(context.Background(), "in memory", data, Options{Threads: 2}) // nothing released
		if err != nil {
			t.Fatal(err)
		}
		want, err := ref.Logits(toks)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("tied=%v: logit %d = %g from the mapped file, %g from memory", tied, i, got[i], want[i])
			}
		}
		ref.Close()
		e.Close()
	}
}

// mappedRSS returns the resident bytes of the process's mappings of path, from
// /proc/self/smaps.
func mappedRSS(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	var rss int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = len(fields) >= 6 && fields[len(fields)-1] == path
			continue
		}
		if in && fields[0] == "Rss:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			rss += kb << 10
		}
	}
	return rss
}

// TestLoadReleasesTiledPages checks that after a forward pass the model file's
// mapped pages the process holds are about those of the weights the backend does not
// copy (embedding, norms, header), not the whole file: the tiled weights (Q4_0), and
// the F16 weights the backend copies as they are, are resident once, as their copy.
// The slack allows the pages the released ranges share with their neighbours and the
// kernel's fault-around window. Before the release the mapping held every tiled
// weight too (the check failed by the tiled weights' size).
func TestLoadReleasesTiledPages(t *testing.T) {
	for _, typ := range []string{"Q4_0", "F16"} {
		t.Run(typ, func(t *testing.T) { checkReleasedPages(t, prepModel(t, typ, false)) })
	}
}

func checkReleasedPages(t *testing.T, path string) {
	e, err := Load(context.Background(), path, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var prepared int64
	pr, ok := e.Backend().(kernels.Preparer)
	if !ok {
		t.Skip("the backend prepares no weights")
	}
	for _, w := range e.Model.Matrices() {
		if pr.Prepare(w) { // already prepared: answers without tiling again
			prepared += int64(len(w.Data))
		}
	}
	if prepared == 0 {
		t.Skipf("%s multiplies Q4_0 from the file's bytes", e.Backend().Name())
	}
	if _, err := e.Logits([]int32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	page := int64(os.Getpagesize())
	slack := 2*page*int64(len(e.Model.Matrices())) + 64<<10
	rss, limit := mappedRSS(t, path), fi.Size()-prepared+slack
	t.Logf("file %d bytes, %d prepared; mapped RSS %d (limit %d)", fi.Size(), prepared, rss, limit)
	if rss == 0 {
		t.Skip("smaps shows no mapping of the model file")
	}
	if rss > limit {
		t.Fatalf("mapped RSS %d bytes after a forward pass: more than the %d bytes not tiled plus %d slack", rss, fi.Size()-prepared, slack)
	}
}
