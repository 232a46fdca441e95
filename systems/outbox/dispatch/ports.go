package dispatch

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"time"
)

// Clock is the replica's own time, for what this replica alone measures
// (the heartbeats it heard, sleeps, ticks); a time another replica may judge
// is the store's (JobStore.Now and the scripts' TIME). Work that runs later
// (relay, reconciler and replayer ticks) is started through AfterFunc, never
// with a go statement, so a simulator can schedule it.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done, whichever comes first.
	Sleep(ctx context.Context, d time.Duration) error
	// AfterFunc runs f once after d. The context handed to f belongs to the new
	// activity (a simulator uses it to identify the actor making store calls).
	AfterFunc(d time.Duration, f func(ctx context.Context)) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the function from running; it reports whether it did so.
	Stop() bool
}

// Message is what the relay hands to the bus. ID lets a broker drop duplicates
// inside its de-duplication window (JetStream's Nats-Msg-Id); the relay sends
// the same ID every time it publishes one outbox entry.
type Message struct {
	ID   string
	Data []byte
}

// Bus publishes messages. Delivery to the handlers is the adapter's job: a
// handler returning nil means ack, a *RetryAfterError means NAK with that
// delay, any other error means ack and drop.
type Bus interface {
	Publish(ctx context.Context, subject string, msg Message) error
}

// Random is the package's only source of randomness: dispatch ids, relay ids
// and backoff jitter.
type Random interface {
	Uint64() uint64
}

// RealClock is the production Clock.
type RealClock struct{}

// Now returns the wall-clock time.
func (RealClock) Now() time.Time { return time.Now() } // determinism-ok: production clock

// Sleep blocks for d of wall time or until ctx is done.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d) // determinism-ok: production clock
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// AfterFunc runs f on its own goroutine after d of wall time.
func (RealClock) AfterFunc(d time.Duration, f func(ctx context.Context)) Timer {
	return time.AfterFunc(d, func() { f(context.Background()) }) // determinism-ok: production clock
}

// CryptoRandom is the production Random, backed by crypto/rand.
type CryptoRandom struct{}

// Uint64 returns a uniformly random 64-bit value.
func (CryptoRandom) Uint64() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand.Read never fails on supported platforms (Go 1.24+ crashes instead).
		panic("crypto/rand: " + err.Error())
	}
	return binary.LittleEndian.Uint64(b[:])
}
