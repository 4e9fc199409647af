// Package history is the History screen: the runs kept in the results store, newest
// first, with a filter, multi-select for comparison, delete (confirmed) and open.
package history

import "llmbench/workloads/result"

// Run is one stored run: the store's id and the run's summary.
type Run struct {
	ID string
	result.Summary
}

// Store is what the History screen needs of the results store: the list of runs
// (newest first), one run in full, and deleting one.
type Store interface {
	List() ([]Run, error)
	Load(id string) (result.Document, error)
	Delete(id string) error
}
