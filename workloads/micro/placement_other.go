//go:build !linux

package micro

import "errors"

var errPlacement = errors.New("CPU placement (-C, --prio, --numa) is implemented on Linux only")

func setAffinity(cpus []int) (func() error, error) {
	if len(cpus) == 0 {
		return func() error { return nil }, nil
	}
	return nil, errPlacement
}

func setNice(nice int) (func() error, error) {
	if nice == 0 {
		return func() error { return nil }, nil
	}
	return nil, errPlacement
}

func numaCPUs(mode string) ([]int, error) {
	if mode == "" || mode == "numactl" {
		return nil, nil
	}
	return nil, errPlacement
}
