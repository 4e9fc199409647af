package serving

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestWaitReady: the ready check retries until the server answers a request, and
// gives up after its timeout with the last failure's reason.
func TestWaitReady(t *testing.T) {
	var n atomic.Int64
	good := &scripted{instant: true}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			http.Error(w, "loading model", http.StatusServiceUnavailable)
			return
		}
		good.ServeHTTP(w, r)
	}))
	defer hs.Close()
	c := httpClient("openai", hs.URL, 1, 5*time.Second)
	req := &Request{Prompt: "hello", PromptLen: 1, OutputLen: 3}
	rec, err := WaitReady(context.Background(), c, req, 5*time.Second, 10*time.Millisecond)
	if err != nil || !rec.Success || n.Load() != 3 {
		t.Fatalf("ready check: %v, success %v after %d tries", err, rec.Success, n.Load())
	}

	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "loading model", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	c = httpClient("openai", down.URL, 1, 5*time.Second)
	t0 := time.Now()
	_, err = WaitReady(context.Background(), c, req, 150*time.Millisecond, 40*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "HTTP 503: loading model") || time.Since(t0) > 2*time.Second {
		t.Fatalf("down server: %v after %v", err, time.Since(t0))
	}
}
