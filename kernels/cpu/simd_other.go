//go:build !amd64 || purego

package cpu

// Without assembly every kernel runs its pure-Go twin: the kernels.Traits reference dot
// products and gemmGo.
