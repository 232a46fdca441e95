package store

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/dispatchsim/dispatchsim/third_party/miniredis/server"
)

// memConn is a client connection that miniredis serves on the reader's own
// goroutine: a Read with no reply waiting dispatches the commands written so
// far, then returns their replies. Served by goroutines (miniredis.Dial's
// net.Pipe, or a buffered pipe), each store command cost four goroutine
// switches; here it costs none, and the order is the same, since the caller
// waited for the reply anyway. Connection state (MULTI, SELECT) lives in the
// connection's own Peer, as with ServeConn.
type memConn struct {
	srv  *server.Server
	peer *server.Peer
	in   []byte     // written commands not yet served
	out  replyBuf   // replies not yet read
	mu   sync.Mutex // Close may come from the watchdog's goroutine
	// closed: Close was called, or a command (QUIT) closed the peer.
	closed bool
}

// replyBuf is the peer's write side: replies wait in it for Read.
type replyBuf struct{ data []byte }

func (b *replyBuf) Write(p []byte) (int, error) {
	b.data = append(b.data, p...)
	return len(p), nil
}

func newMemConn(srv *server.Server) *memConn {
	c := &memConn{srv: srv}
	c.peer = server.NewPeer(bufio.NewWriter(&c.out))
	return c
}

var errProtocol = errors.New("sim: malformed command on the in-memory connection")

func (c *memConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.out.data) == 0 && !c.closed {
		if err := c.serve(); err != nil {
			return 0, err
		}
	}
	if len(c.out.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.out.data)
	c.out.data = c.out.data[:copy(c.out.data, c.out.data[n:])]
	return n, nil
}

// serve dispatches every whole command in c.in, as miniredis's servePeer
// does: one Dispatch and one Flush each. The arguments are substrings of one
// copy of the input.
func (c *memConn) serve() error {
	in := string(c.in)
	c.in = c.in[:0]
	for len(in) > 0 && !c.closed {
		args, rest, ok := parseCommand(in)
		if !ok {
			c.closed = true
			return errProtocol
		}
		in = rest
		if len(args) == 0 {
			continue
		}
		c.srv.Dispatch(c.peer, args)
		c.peer.Flush()
		if c.peer.Closed() {
			c.closed = true
		}
	}
	if cap(c.in) > 64<<10 {
		c.in = nil // a large pipeline's buffer is not kept for the connection's life
	}
	return nil
}

// parseCommand takes one RESP array of bulk strings (all go-redis writes)
// off b.
func parseCommand(b string) (args []string, rest string, ok bool) {
	n, b, ok := parseHeader(b, '*')
	if !ok {
		return nil, "", false
	}
	args = make([]string, 0, max(n, 0))
	for range n {
		var l int
		if l, b, ok = parseHeader(b, '$'); !ok || l < 0 || len(b) < l+2 {
			return nil, "", false
		}
		args = append(args, b[:l])
		b = b[l+2:]
	}
	return args, b, true
}

// parseHeader reads "<kind><int>\r\n".
func parseHeader(b string, kind byte) (int, string, bool) {
	if len(b) < 3 || b[0] != kind {
		return 0, "", false
	}
	for i := 1; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			n, err := strconv.Atoi(b[1:i])
			return n, b[i+2:], err == nil
		}
	}
	return 0, "", false
}

func (c *memConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, io.ErrClosedPipe
	}
	c.in = append(c.in, p...)
	return len(p), nil
}

// Close ends the connection: a later Read gets io.EOF once the replies
// already served are read.
func (c *memConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
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
