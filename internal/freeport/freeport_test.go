package freeport

import (
	"net"
	"testing"
)

// The port is one a process can listen on, and one the kernel gives no
// outgoing connection: outside its ephemeral range, below or above it,
// whichever the machine's range leaves room for.
func TestPortIsOutsideTheEphemeralRange(t *testing.T) {
	for _, r := range [][2]int{
		{32768, 60999}, // Linux's default
		{1024, 60999},
		{40000, 65535},
	} {
		for range 20 {
			port, err := portOutside(r[0], r[1])
			if err != nil {
				t.Fatal(err)
			}
			if port < lowestPort || (port >= r[0] && port <= r[1]) {
				t.Errorf("portOutside(%d, %d) = %d: below %d or in the ephemeral range, where an outgoing connection can take it", r[0], r[1], port, lowestPort)
			}
			if err := listenable(port); err != nil {
				t.Fatalf("listening on portOutside(%d, %d)'s %d: %v", r[0], r[1], port, err)
			}
		}
	}
}

// The e2e suite's cluster runs beside suites that take ports here: none
// comes from the band where kwokctl takes the cluster's.
func TestPortIsNotKwokctls(t *testing.T) {
	// Below 40000 lie the band's 100 ports among 30,000: were the band not
	// left out, 3,000 ports would hold one of its ports in all but about
	// one run in 20,000.
	for range 3000 {
		port, err := portOutside(40000, 65535)
		if err != nil {
			t.Fatal(err)
		}
		if kwokctls(port) {
			t.Fatalf("portOutside gave %d, in [%d, %d] where kwokctl takes the simulated cluster's ports", port, kwokctlLowest, kwokctlHighest)
		}
	}
}

// Callers take several ports before any is bound (a controller's webhook,
// probe and metrics ports): no port comes twice, even where the range
// leaves only a few outside it.
func TestPortNeverComesTwice(t *testing.T) {
	seen := map[int]bool{}
	// 10 ports outside [lowestPort, 65525], then the kernel's.
	for range 20 {
		port, err := portOutside(lowestPort, 65525)
		if err != nil {
			t.Fatal(err)
		}
		if seen[port] {
			t.Fatalf("portOutside gave %d twice", port)
		}
		seen[port] = true
	}
}

// This machine's range may leave no room (then the port is one the kernel
// gave); the address is one a process can listen on.
func TestAddr(t *testing.T) {
	addr, err := Addr()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening on Addr()'s %s: %v", addr, err)
	}
	l.Close()
}
