package serving

import (
	"context"
	"fmt"
	"time"

	"llmbench/workloads/metrics"
)

// WaitReady sends req until the server answers it successfully, as vllm bench serve's
// endpoint ready check (--ready-check-timeout-sec) does before a run: one try every
// interval until timeout. It returns the successful try's record, or an error with the
// last try's failure reason. The tries are not part of any result.
func WaitReady(ctx context.Context, c Client, req *Request, timeout, interval time.Duration) (metrics.Record, error) {
	start := time.Now()
	now := func() time.Duration { return time.Since(start) }
	deadline := start.Add(timeout)
	tries, last := 0, ""
	for {
		var rec metrics.Record
		tctx, cancel := context.WithDeadline(ctx, deadline)
		c.Do(tctx, req, &rec, now)
		cut := tctx.Err() != nil
		cancel()
		tries++
		if rec.Success {
			return rec, nil
		}
		if !cut || last == "" {
			last = rec.Error // a try cut short by the deadline says less than the one before
		}
		if ctx.Err() != nil {
			return rec, ctx.Err()
		}
		wait := min(interval, time.Until(deadline))
		if wait <= 0 {
			return rec, fmt.Errorf("endpoint not ready after %v (%d tries; last: %s)", timeout.Round(time.Millisecond), tries, last)
		}
		select {
		case <-ctx.Done():
			return rec, ctx.Err()
		case <-time.After(wait):
		}
	}
}
