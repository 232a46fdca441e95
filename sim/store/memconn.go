package store

import (
	"io"
	"net"
	"sync"
	"time"
)

// memConn is one end of an in-memory connection whose writes never wait for
// the reader. net.Pipe, which miniredis.Dial uses, hands each write over
// synchronously, so a store command and its reply cost twice the goroutine
// switches. Ordering is unchanged: the caller still blocks until the reply
// arrives, and miniredis serves the connection only while it waits.
type memConn struct {
	in, out *memBuffer
}

// memBuffer is one direction of a memConn.
type memBuffer struct {
	mu     sync.Mutex
	ready  sync.Cond
	data   []byte
	closed bool
}

func newMemBuffer() *memBuffer {
	b := &memBuffer{}
	b.ready.L = &b.mu
	return b
}

// newMemConn returns the two ends of a connection.
func newMemConn() (client, server *memConn) {
	up, down := newMemBuffer(), newMemBuffer()
	return &memConn{in: down, out: up}, &memConn{in: up, out: down}
}

func (c *memConn) Read(p []byte) (int, error) {
	b := c.in
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.data) == 0 && !b.closed {
		b.ready.Wait()
	}
	if len(b.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.data)
	b.data = b.data[:copy(b.data, b.data[n:])]
	return n, nil
}

func (c *memConn) Write(p []byte) (int, error) {
	b := c.out
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, io.ErrClosedPipe
	}
	b.data = append(b.data, p...)
	b.ready.Signal()
	return len(p), nil
}

// Close ends both directions: a reader on either end gets io.EOF once the
// data already written is read.
func (c *memConn) Close() error {
	for _, b := range []*memBuffer{c.in, c.out} {
		b.mu.Lock()
		b.closed = true
		b.ready.Broadcast()
		b.mu.Unlock()
	}
	return nil
}

func (c *memConn) LocalAddr() net.Addr  { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr { return memAddr{} }

// Deadlines are never set: the simulation's clients run without timeouts.
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "miniredis" }
