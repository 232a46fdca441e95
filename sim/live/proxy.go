package live

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// Proxy forwards TCP connections to a server and holds what passes, each
// way, for a fixed latency: a slow network between the system and its
// store or broker, applied from outside the servers. It keeps the order of
// the bytes and never reorders connections' data; it listens on loopback.
type Proxy struct {
	ln      net.Listener
	target  string
	latency time.Duration

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
}

// proxyChunk is what one read took off a connection, and when.
type proxyChunk struct {
	data []byte
	at   time.Time
}

// proxyQueue bounds the chunks in flight one way on one connection; a full
// queue stops the reads, as a full network buffer would.
const proxyQueue = 256

// NewProxy listens on a free loopback port and forwards each connection to
// target (host:port) with latency added each way.
func NewProxy(target string, latency time.Duration) (*Proxy, error) {
	if latency < 0 {
		return nil, fmt.Errorf("proxy: latency %s is negative", latency)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	p := &Proxy{ln: ln, target: target, latency: latency, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept() // determinism-ok: live mode only
	return p, nil
}

// Addr is the host:port to connect to instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops accepting and cuts every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.wg.Add(1)
		go p.connect(client) // determinism-ok: live mode only; a dial to a server that is down takes a while
	}
}

// connect dials the target for a client and pipes both ways.
func (p *Proxy) connect(client net.Conn) {
	defer p.wg.Done()
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = client.Close() // the server is down: the client sees its connection end
		return
	}
	if !p.track(client, server) {
		return
	}
	p.wg.Add(2)
	go p.pipe(server, client) // determinism-ok: live mode only
	go p.pipe(client, server) // determinism-ok: live mode only
}

// track registers a connection pair, or closes it if the proxy closed.
func (p *Proxy) track(a, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_, _ = a.Close(), b.Close()
		return false
	}
	p.conns[a], p.conns[b] = true, true
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

// pipe copies from src to dst, each chunk written latency after it was
// read. When src ends, dst is closed once what was read has been written:
// a server that went away takes the client's connection with it.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	queue := make(chan proxyChunk, proxyQueue)
	done := make(chan struct{})
	go func() { // determinism-ok: live mode only
		defer close(done)
		for c := range queue {
			if d := time.Until(c.at.Add(p.latency)); d > 0 { // determinism-ok: live mode only
				time.Sleep(d) // determinism-ok: live mode only
			}
			if _, err := dst.Write(c.data); err != nil {
				_ = src.Close() // the other end is gone: end the reader too
				for range queue {
				}
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			queue <- proxyChunk{data: append([]byte(nil), buf[:n]...), at: time.Now()} // determinism-ok: live mode only
		}
		if err != nil {
			break // EOF, a reset or a close: the end either way
		}
	}
	close(queue)
	<-done
	p.untrack(dst)
	p.untrack(src)
}
