package serving

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestFailReasonRunVersusRequest: a request cut off because the run stopped (cancelled
// or past the run's own deadline) is interrupted, not a failure; only the request's own
// timeout is a timeout.
func TestFailReasonRunVersusRequest(t *testing.T) {
	live := context.Background()
	cancelled, cancel := context.WithCancel(live)
	cancel()
	expired, cancel2 := context.WithDeadline(live, time.Now().Add(-time.Second))
	defer cancel2()
	reqExpired, cancel3 := context.WithDeadline(live, time.Now().Add(-time.Second))
	defer cancel3()
	cases := []struct {
		name     string
		run, req context.Context
		err      error
		want     string
	}{
		{"run cancelled", cancelled, cancelled, context.Canceled, ErrInterrupted},
		{"run past its deadline", expired, expired, context.DeadlineExceeded, ErrInterrupted},
		{"request timeout", live, reqExpired, context.DeadlineExceeded, "timeout:"},
		{"connection reset", live, live, errors.New("read: connection reset by peer"), "stream closed mid-way"},
	}
	for _, c := range cases {
		if got := failReason(c.run, c.req, c.err, 5*time.Second); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want prefix %q", c.name, got, c.want)
		}
	}
}
