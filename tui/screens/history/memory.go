package history

import (
	"errors"
	"fmt"
	"llmbench/workloads/result"
	"slices"
)

// Memory is a results store that lives as long as the program: the workbench keeps
// the runs of the session in it when no results store is given, and tests use it.
// Ids are "run-1", "run-2", … in save order; List is newest first.
type Memory struct {
	docs  map[string]result.Document
	order []string
	next  int
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{docs: map[string]result.Document{}} }

// Save keeps d and returns its id.
func (s *Memory) Save(d result.Document) (string, error) {
	s.next++
	id := fmt.Sprintf("run-%d", s.next)
	s.docs[id] = d
	s.order = append(s.order, id)
	return id, nil
}

// List returns the runs newest first.
func (s *Memory) List() ([]Run, error) {
	out := make([]Run, 0, len(s.order))
	for _, id := range slices.Backward(s.order) {
		out = append(out, Run{ID: id, Summary: result.Summarize(s.docs[id])})
	}
	return out, nil
}

// Load returns the run id.
func (s *Memory) Load(id string) (result.Document, error) {
	d, ok := s.docs[id]
	if !ok {
		return d, errors.New("no such run")
	}
	return d, nil
}

// Delete forgets the run id.
func (s *Memory) Delete(id string) error {
	if _, ok := s.docs[id]; !ok {
		return errors.New("no such run")
	}
	delete(s.docs, id)
	s.order = slices.DeleteFunc(s.order, func(x string) bool { return x == id })
	return nil
}

// Len returns the number of runs kept.
func (s *Memory) Len() int { return len(s.order) }
