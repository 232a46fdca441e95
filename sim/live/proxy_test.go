package live

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer answers every connection with what it sends.
func echoServer(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
		}
	}()
	return ln
}

// TestProxyHoldsEachWay: a round trip through the proxy takes at least
// twice its latency, and a megabyte comes back whole and in order.
func TestProxyHoldsEachWay(t *testing.T) {
	const latency = 40 * time.Millisecond
	srv := echoServer(t)
	p, err := NewProxy(srv.Addr().String(), latency)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	start := time.Now()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if rt := time.Since(start); rt < 2*latency {
		t.Fatalf("round trip %s through a proxy of %s each way", rt, latency)
	}

	want := make([]byte, 1<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	go func() { _, _ = c.Write(want) }()
	back := make([]byte, len(want))
	if _, err := io.ReadFull(c, back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, want) {
		t.Fatal("a megabyte through the proxy came back changed")
	}
}

// TestProxyCloseCutsConnections: a closed proxy ends its clients'
// connections, as a network that went away.
func TestProxyCloseCutsConnections(t *testing.T) {
	srv := echoServer(t)
	p, err := NewProxy(srv.Addr().String(), 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("a connection through a closed proxy still reads")
	}
}

// TestProxyRefusesNegativeLatency: bad input is an error.
func TestProxyRefusesNegativeLatency(t *testing.T) {
	if _, err := NewProxy("127.0.0.1:1", -time.Millisecond); err == nil {
		t.Fatal("a negative latency was accepted")
	}
}
