package harness

import (
	"net"
	"strconv"
	"testing"
)

// The address is one a process can listen on, on a port the kernel gives
// no outgoing connection (below its ephemeral range).
func TestFreeAddrIsBelowTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	for range 20 {
		addr, err := FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := strconv.Atoi(port); p >= low {
			t.Errorf("FreeAddr() = %s: port in the ephemeral range (from %d), where an outgoing connection can take it", addr, low)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listening on FreeAddr()'s %s: %v", addr, err)
		}
		l.Close()
	}
}
