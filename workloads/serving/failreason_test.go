package serving

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"llmbench/workloads/metrics"
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
		want     metrics.Reason
	}{
		{"run cancelled", cancelled, cancelled, context.Canceled, metrics.ReasonInterrupted},
		{"run past its deadline", expired, expired, context.DeadlineExceeded, metrics.ReasonInterrupted},
		{"request timeout", live, reqExpired, context.DeadlineExceeded, metrics.ReasonTimeout},
		{"connection reset", live, live, fmt.Errorf("read: %w", syscall.ECONNRESET), metrics.ReasonStreamClosed},
		{"unexpected EOF", live, live, io.ErrUnexpectedEOF, metrics.ReasonStreamClosed},
		{"malformed", live, live, &malformedError{line: "x"}, metrics.ReasonMalformed},
		{"server error", live, live, &serverError{msg: "boom"}, metrics.ReasonServerError},
		{"refused", live, live, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, metrics.ReasonConnection},
		{"other", live, live, errors.New("odd"), metrics.ReasonOther},
	}
	for _, c := range cases {
		got, detail := failReason(c.run, c.req, c.err, 5*time.Second)
		if got != c.want || detail == "" || strings.Contains(detail, "\n") {
			t.Errorf("%s: %v %q, want %v and a one-line detail", c.name, got, detail, c.want)
		}
	}
}
