// Package workloads holds the serialisable specifications of what llmbench runs
// (benchmarks, serving load, kernel benchmarks). It performs no I/O; the subpackages
// execute the specs.
package workloads
