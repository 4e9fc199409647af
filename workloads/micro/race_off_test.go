//go:build !race

package micro

const raceEnabled = false
