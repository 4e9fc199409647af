package serving

import (
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rxReader reads a TCP connection with recvmsg and returns, with the bytes, the
// kernel's software receive timestamp of the last segment they came from
// (SO_TIMESTAMPNS: the moment the packet entered the receiving host's network stack,
// CLOCK_REALTIME), delivered as an SCM_TIMESTAMPNS control message.
type rxReader struct {
	raw syscall.RawConn
	oob []byte
}

// rxStampSource names the truth an rxReader gives, for the test's log.
const rxStampSource = "kernel receive timestamp (SO_TIMESTAMPNS)"

// enableRxStamps turns on receive timestamps on c; nil when c is not TCP or the
// kernel refuses (the caller then stamps its own reads).
func enableRxStamps(c net.Conn) stampReader {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil
	}
	return &rxReader{raw: raw, oob: make([]byte, 128)}
}

// enableListenerRxStamps turns receive timestamps on for the listening socket, so a
// connection has them from its first segment: accepted sockets inherit the flag,
// and bytes that arrive before Accept returns are stamped too. The kernel switches
// stamping on for the host asynchronously when the first socket asks for it, so this
// waits until a probe connection's reads carry stamps. l is returned as is.
func enableListenerRxStamps(l net.Listener) net.Listener {
	if tl, ok := l.(*net.TCPListener); ok {
		if raw, err := tl.SyscallConn(); err == nil {
			raw.Control(func(fd uintptr) {
				unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
			})
			waitRxStamps()
		}
	}
	return l
}

// waitRxStamps sends a byte a millisecond over a private loopback connection until
// a read of it carries the kernel's receive timestamp, for at most 200 ms.
func waitRxStamps() bool {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return false
	}
	defer ln.Close()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return false
	}
	defer cl.Close()
	sv, err := ln.Accept()
	if err != nil {
		return false
	}
	defer sv.Close()
	rx := enableRxStamps(sv)
	if rx == nil {
		return false
	}
	b := make([]byte, 1)
	for range 200 {
		if _, err := cl.Write(b); err != nil {
			return false
		}
		if n, at, err := rx.readStamp(b); err != nil {
			return false
		} else if n > 0 && !at.IsZero() {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// readStamp is Read, plus the kernel receive time of the bytes read (zero when the
// kernel sent no timestamp), mapped onto the monotonic clock: time.Now() at the
// return, less how long before it (on the realtime clock) the kernel stamped them.
func (r *rxReader) readStamp(p []byte) (int, time.Time, error) {
	var n, oobn int
	var rerr error
	err := r.raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), p, r.oob, 0)
		return rerr != unix.EAGAIN && rerr != unix.EINTR
	})
	now := time.Now()
	if err != nil {
		return 0, time.Time{}, err // a deadline (net.Error with Timeout) or a closed conn
	}
	if rerr != nil {
		return 0, time.Time{}, &net.OpError{Op: "read", Net: "tcp", Err: fmt.Errorf("recvmsg: %w", rerr)}
	}
	if n == 0 && len(p) > 0 {
		return 0, time.Time{}, io.EOF
	}
	return n, kernelStamp(r.oob[:oobn], now), nil
}

// kernelStamp finds SCM_TIMESTAMPNS in oob and maps it onto now's clock (zero when
// absent). A stamp after now (a realtime step) reads as now.
func kernelStamp(oob []byte, now time.Time) time.Time {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}
	}
	for _, m := range msgs {
		if m.Header.Level != unix.SOL_SOCKET || m.Header.Type != unix.SCM_TIMESTAMPNS || len(m.Data) < int(unsafe.Sizeof(unix.Timespec{})) {
			continue
		}
		ts := (*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
		age := now.Sub(time.Unix(int64(ts.Sec), int64(ts.Nsec))) // wall clocks: time.Unix has no monotonic reading
		if age < 0 {
			age = 0
		}
		return now.Add(-age) // keeps now's monotonic reading
	}
	return time.Time{}
}

// TestKernelRxStamps: on a loopback TCP connection accepted from a listener with
// receive timestamps on, every read that returns bytes carries the kernel's stamp, and it lies between the
// client's write and the read's return (the mapping onto the monotonic clock is
// causal).
func TestKernelRxStamps(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln = enableListenerRxStamps(ln) // on from the connection's first segment
	defer ln.Close()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	rx := enableRxStamps(sv)
	if rx == nil {
		t.Fatal("SO_TIMESTAMPNS refused on a TCP connection")
	}
	buf := make([]byte, 64)
	for i := range 5 {
		sent := time.Now()
		if _, err := cl.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // the stamp is the arrival, not this read
		n, at, err := rx.readStamp(buf)
		back := time.Now()
		if err != nil || n != 4 {
			t.Fatalf("read %d, %v", n, err)
		}
		if at.IsZero() {
			t.Fatal("no SCM_TIMESTAMPNS on a TCP read")
		}
		t.Logf("read %d: kernel stamp %+.3f ms after the write, %.3f ms before the read returned", i, msDur(at.Sub(sent)), msDur(back.Sub(at)))
		if at.Before(sent.Add(-100*time.Microsecond)) || at.After(back) {
			t.Errorf("stamp %v outside write %v .. read %v", at, sent, back)
		}
	}
	cl.Close()
	if n, _, err := rx.readStamp(buf); n != 0 || err != io.EOF {
		t.Errorf("after close: %d, %v; want EOF", n, err)
	}
}
