// Package freeport picks a local TCP port for a child process to listen
// on (a controller's webhook, probe and metrics servers, the simulated
// cluster's JobSet controller and Kueue), for the test suites, the load
// harness and the simulated cluster alike.
package freeport

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Addr returns a free TCP address of 127.0.0.1 for a process to listen on.
//
// The port is outside the kernel's ephemeral range: a port the kernel
// hands out for ":0" is also what it gives outgoing connections, and
// between this call and the process's bind (a controller compiles its wasm
// modules first, tens of seconds) a client connection of the API server
// or of the test could take it ("bind: address already in use"). Outside
// the range only another listener can. The range differs between machines
// (Linux's default is 32768–60999; some start it at 1024), so the ports
// below it and those above it are both used. A port is never returned
// twice by one process: the callers take several before any is bound.
func Addr() (string, error) {
	port, err := Port()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
}

// Port is Addr's port.
func Port() (int, error) { return portOutside(ephemeralRange()) }

// lowestPort is the lowest port Addr returns: the ones below are the
// well-known and registered services' a machine may run.
const lowestPort = 10000

// kwokctlLowest to kwokctlHighest is the band where kwokctl takes the
// ports of a simulated cluster (its etcd, kube-apiserver, controller
// manager, scheduler and kwok): it walks down from 32767 to the first it
// can listen on. make test runs the e2e suite beside the fault and
// integration suites, whose controllers take ports here: a port of this
// band handed out just before kwokctl's process bound it would be taken
// twice. A cluster takes under ten; the band leaves room for ten clusters.
const kwokctlLowest, kwokctlHighest = 32668, 32767

// kwokctls says whether port is in kwokctl's band.
func kwokctls(port int) bool { return port >= kwokctlLowest && port <= kwokctlHighest }

// given holds the ports this process has returned.
var given = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// portOutside is Port with the ephemeral range [low, high].
func portOutside(low, high int) (int, error) {
	given.Lock()
	defer given.Unlock()
	// The ports outside the range: [lowestPort, low) and (high, 65535].
	below := max(min(low, 65536)-lowestPort, 0)
	aboveFrom := max(high+1, lowestPort)
	above := max(65536-aboveFrom, 0)
	for i := 0; i < 1000 && below+above > 0; i++ {
		port := lowestPort + rand.IntN(below+above)
		if port >= lowestPort+below {
			port += aboveFrom - (lowestPort + below)
		}
		if !kwokctls(port) && !given.ports[port] && listenable(port) == nil {
			given.ports[port] = true
			return port, nil
		}
	}
	// The range leaves no port outside it (or each one tried was taken):
	// one the kernel gives, which is better than none.
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !kwokctls(port) && !given.ports[port] {
			given.ports[port] = true
			return port, nil
		}
	}
	return 0, errNoPort
}

// listenable says whether a listener can take port of 127.0.0.1 now.
func listenable(port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	return l.Close()
}

var errNoPort = errors.New("no free TCP port on 127.0.0.1: every one tried is taken or was handed out already; stop the processes that hold them")

// ephemeralRange is the kernel's ephemeral port range (Linux's default
// 32768–60999 when it cannot be read).
func ephemeralRange() (low, high int) {
	low, high = 32768, 60999
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return low, high
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return low, high
	}
	l, errL := strconv.Atoi(fields[0])
	h, errH := strconv.Atoi(fields[1])
	if errL != nil || errH != nil || l > h {
		return low, high
	}
	return l, h
}
