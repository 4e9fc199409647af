package tui

import (
	"llmbench/tui/screens/history"
	"llmbench/tui/screens/setup"
	"llmbench/workloads/result"
)

// RunInfo is one stored run as the History screen lists it: the store's id and the
// run's summary (result.Summarize of its Document, kept by the store so that listing
// does not read every run).
type RunInfo = history.Run

// Store is the results store the workbench reads and writes (the profiles package
// provides it; main wires it in). Every finished run, partial or not, is saved once,
// by the root, when its Done arrives.
type Store interface {
	history.Store
	// Save keeps d and returns its id.
	Save(d result.Document) (id string, err error)
}

// ProfileSaver writes the setup c as a profile file at path (the profiles package
// provides it; main wires it in). The Results screen's `s` calls it.
type ProfileSaver func(c setup.Config, path string) error
