package telemetry

import (
	"strings"
	"testing"

	"llmbench/tui/theme"
	hw "llmbench/workloads/telemetry"
)

// TestTitleNamesTheDevice: the panel's title names the device read, FAKE first when
// the readings are the scripted device's, so a cut title still says so.
func TestTitleNamesTheDevice(t *testing.T) {
	cases := []struct {
		r    *hw.Reading
		want string
	}{
		{nil, "Device"},
		{&hw.Reading{}, "Device · CPU"},
		{&hw.Reading{GPUKind: "nvml", GPUs: []hw.GPU{{Name: "NVIDIA H100 80GB HBM3"}}}, "Device · NVIDIA H100 80GB HBM3"},
		{&hw.Reading{GPUKind: "fake", GPUs: []hw.GPU{{Name: "Fake H100 80GB HBM3"}}}, "Device · FAKE · Fake H100 80GB HBM3"},
	}
	for _, c := range cases {
		m := New(theme.New(theme.ASCII))
		if c.r != nil {
			m.Set(*c.r)
		}
		if got := m.Title(); got != c.want {
			t.Errorf("Title() = %q; want %q", got, c.want)
		}
	}
	m := New(theme.New(theme.ASCII))
	m.Set(hw.Reading{GPUKind: "fake", GPUs: []hw.GPU{{Name: "Fake H100 80GB HBM3", PowerW: 400, PowerLimitW: 700}}})
	if !strings.Contains(m.View(), "power 400 W / 700 W") {
		t.Errorf("View:\n%s", m.View())
	}
}
