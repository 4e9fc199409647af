package engine

import (
	"context"
	"errors"
	"testing"

	"llmbench/engine/builtin"
	"llmbench/engine/sample"
)

// TestBatchKeepsGreedyAnswers prefills 12 prompts of different lengths in one
// forward pass, decodes 15 steps and checks each sequence gets the greedy tokens it
// gets alone on a Session (checkGreedy's rule: a difference only at a near-tie).
func TestBatchKeepsGreedyAnswers(t *testing.T) {
	e, err := LoadBytes(context.Background(), "builtin", builtin.Stories260K, Options{Threads: 2, Partitions: PartitionsOff})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	prompts := testPrompts(e, 12, 11)
	const gen = 16
	b, err := e.NewBatch(len(prompts), 40+gen, sample.Params{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Size() != 12 || b.KVBytes() <= 0 {
		t.Fatalf("Size %d, KVBytes %d", b.Size(), b.KVBytes())
	}
	got := make([][]int32, len(prompts))
	// Twice over: a second Prefill starts every sequence afresh.
	for round := range 2 {
		next, err := b.Prefill(prompts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			got[i] = append(got[i][:0], next[i])
		}
		for range gen - 1 {
			if next, err = b.Decode(); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i] = append(got[i], next[i])
			}
		}
		t.Logf("round %d", round)
		checkGreedy(t, e, prompts, got, gen)
	}
}

// TestBatchRefuses checks the batch's sad paths: no sequences, a context beyond the
// engine's, the wrong number of prompts, an empty or too long prompt, a decode before
// any prefill and a decode past the sequence's positions.
func TestBatchRefuses(t *testing.T) {
	e, err := LoadBytes(context.Background(), "builtin", builtin.Stories260K, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.NewBatch(0, 8, sample.Params{}); err == nil {
		t.Error("NewBatch(0, …) accepted")
	}
	if _, err := e.NewBatch(2, e.Options().Context+1, sample.Params{}); !errors.Is(err, ErrContextFull) {
		t.Errorf("NewBatch past the context: %v", err)
	}
	if _, err := e.NewBatch(2, 8, sample.Params{TopP: -1}); err == nil {
		t.Error("NewBatch with top_p -1 accepted")
	}
	b, err := e.NewBatch(2, 4, sample.Params{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Decode(); err == nil {
		t.Error("Decode before Prefill accepted")
	}
	if _, err := b.Prefill([][]int32{{5}}); err == nil {
		t.Error("1 prompt for a batch of 2 accepted")
	}
	if _, err := b.Prefill([][]int32{{5}, {}}); err == nil {
		t.Error("an empty prompt accepted")
	}
	if _, err := b.Prefill([][]int32{{5}, {5, 6, 7, 8, 9}}); !errors.Is(err, ErrContextFull) {
		t.Errorf("a 5-token prompt in 4 positions: %v", err)
	}
	if _, err := b.Prefill([][]int32{{5, 6}, {7, 8}}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // positions 2 and 3
		if _, err := b.Decode(); err != nil {
			t.Fatalf("decode %d: %v", i, err)
		}
	}
	if _, err := b.Decode(); !errors.Is(err, ErrContextFull) {
		t.Errorf("a decode past 4 positions: %v", err)
	}
}
