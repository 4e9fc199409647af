package metrics

import (
	"fmt"
	"strings"
)

// Reason is why a serving request did not succeed, as a closed set so that no code
// compares failure messages; Record.Error keeps the one-line detail beside it.
type Reason uint8

// The failure reasons. ReasonNone is a success (or an old record that predates
// Reason: see Record.FailureKind).
const (
	ReasonNone Reason = iota
	// ReasonTimeout: no complete response within --request-timeout (a failure).
	ReasonTimeout
	// ReasonInterrupted: cut short because the run itself stopped (Ctrl-C, esc);
	// neither a success nor a failure, counted apart.
	ReasonInterrupted
	// ReasonHTTP: the server answered with a status other than 200 (Record.Status).
	ReasonHTTP
	// ReasonMalformed: the stream was not server-sent events or JSON, or a line
	// passed the reader's cap.
	ReasonMalformed
	// ReasonStreamClosed: the connection closed before the stream's end.
	ReasonStreamClosed
	// ReasonConnection: no connection (refused, reset before a response, DNS).
	ReasonConnection
	// ReasonServerError: the stream carried an error object.
	ReasonServerError
	// ReasonIncomplete: the stream ended cleanly without its final event, or with no
	// tokens at all.
	ReasonIncomplete
	// ReasonRequest: the request could not be built or was refused by the engine.
	ReasonRequest
	// ReasonOther: anything else.
	ReasonOther
)

var reasonNames = [...]string{
	ReasonNone: "", ReasonTimeout: "timeout", ReasonInterrupted: "interrupted", ReasonHTTP: "http",
	ReasonMalformed: "malformed", ReasonStreamClosed: "stream_closed", ReasonConnection: "connection",
	ReasonServerError: "server_error", ReasonIncomplete: "incomplete", ReasonRequest: "request", ReasonOther: "error",
}

// String returns the reason's name as results store it ("timeout", "http", …).
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// MarshalText implements encoding.TextMarshaler: a reason is stored by name.
func (r Reason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; an unknown name reads as
// ReasonOther so a newer result still loads.
func (r *Reason) UnmarshalText(b []byte) error {
	for i, n := range reasonNames {
		if n == string(b) {
			*r = Reason(i)
			return nil
		}
	}
	*r = ReasonOther
	return nil
}

// Fail marks rec failed with reason and a one-line detail.
func (rec *Record) Fail(reason Reason, detail string) {
	rec.Success, rec.Reason = false, reason
	rec.Error = strings.ReplaceAll(detail, "\n", " ")
}

// Interrupted reports whether the request was cut short by the end of the run.
func (rec *Record) Interrupted() bool { return !rec.Success && rec.Reason == ReasonInterrupted }

// FailureKind is the key a failed record is counted under in Serving.Failures: the
// reason's name, with the status for HTTP ("http 500"). Records saved before Reason
// existed fall back to the part of their message before the first ": ".
func (rec *Record) FailureKind() string {
	switch {
	case rec.Reason == ReasonHTTP && rec.Status > 0:
		return fmt.Sprintf("http %d", rec.Status)
	case rec.Reason != ReasonNone:
		return rec.Reason.String()
	}
	if i := strings.Index(rec.Error, ": "); i > 0 {
		return rec.Error[:i]
	}
	return rec.Error
}
