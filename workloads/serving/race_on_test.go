//go:build race

package serving

// raceEnabled: timing checks are meaningless under the race detector's slowdown.
const raceEnabled = true
