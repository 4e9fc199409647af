package serving

import (
	"testing"

	"llmbench/workloads"
)

// TestEnergyDevice: the inproc engine's energy is the CPU's; an external server's is
// the device the user names, none by default; a GPU cannot be named for inproc.
func TestEnergyDevice(t *testing.T) {
	cases := []struct {
		backend, dev, want string
		bad                bool
	}{
		{"inproc", "", "cpu", false},
		{"inproc", "cpu", "cpu", false},
		{"inproc", "none", "none", false},
		{"inproc", "gpu:0", "", true},
		{"openai", "", "", false},
		{"openai", "GPU:0", "gpu:0", false},
		{"llamacpp", "gpu", "gpu", false},
		{"openai", "tpu", "", true},
	}
	for _, c := range cases {
		s := workloads.ServeSpec{Backend: c.backend, EnergyDevice: c.dev}
		err := CheckEnergyDevice(&s)
		if (err != nil) != c.bad {
			t.Errorf("%s %q: %v", c.backend, c.dev, err)
			continue
		}
		if got := (&Bench{Spec: s}).EnergyDevice(); !c.bad && got != c.want {
			t.Errorf("%s %q: energy device %q; want %q", c.backend, c.dev, got, c.want)
		}
	}
}
