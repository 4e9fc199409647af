//go:build race

package micro

// raceEnabled: the race detector's shadow memory counts in the resident set and is
// not handed back with the Go heap, so peak-RSS checks are meaningless under it.
const raceEnabled = true
