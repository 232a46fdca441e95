package sut

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Clock is a process's view of time. Work that runs later is started through
// AfterFunc so the simulator schedules it.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
	AfterFunc(d time.Duration, f func(ctx context.Context)) Timer
}

// Timer is a pending AfterFunc.
type Timer interface{ Stop() bool }

// Message is what a system publishes. ID lets the broker drop duplicates
// inside its de-duplication window.
type Message struct {
	ID   string
	Data []byte
}

// Bus publishes messages; delivery is the simulator's job (Subscription).
type Bus interface {
	Publish(ctx context.Context, subject string, msg Message) error
}

// Random is a process's only source of randomness.
type Random interface{ Uint64() uint64 }

// Spawn starts concurrent work (a ticker, a relay loop) as an actor the
// simulator schedules. name is unique within the process.
type Spawn func(name string, run func(ctx context.Context))

// Ports are what one process of a system runs on.
type Ports struct {
	Redis      redis.UniversalClient
	Bus        Bus
	Clock      Clock
	Random     Random
	Registerer prometheus.Registerer
	Spawn      Spawn
}
