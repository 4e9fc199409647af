//go:build !linux

package serving

import "net"

// rxStampSource names the truth when the kernel gives none: the server's own read.
const rxStampSource = "server read time (no kernel receive timestamps on this OS)"

// enableRxStamps: receive timestamps are read only on Linux; elsewhere the server
// stamps its own reads.
func enableRxStamps(net.Conn) stampReader { return nil }

// enableListenerRxStamps returns l: no kernel receive timestamps here.
func enableListenerRxStamps(l net.Listener) net.Listener { return l }
