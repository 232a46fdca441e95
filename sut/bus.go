package sut

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Settle is what a handler tells the broker about one delivery.
type Settle struct {
	// NakDelay > 0 asks for redelivery after that delay.
	NakDelay time.Duration
	// Dropped is set when the message was acked without being handled (a
	// decode error, a permanent failure); it only feeds the trace.
	Dropped error
}

// Ack settles a delivery as handled.
func Ack() Settle { return Settle{} }

// NakAfter asks the broker to redeliver after d.
func NakAfter(d time.Duration) Settle { return Settle{NakDelay: d} }

// Drop acks a delivery that could not be handled, saying why.
func Drop(err error) Settle { return Settle{Dropped: err} }

// Handler consumes one subject's messages. Decode turns the bytes into a
// value (the simulator decodes a message once and shares the value between
// its deliveries, so Handle must not change it); Handle settles the delivery.
type Handler interface {
	Decode(data []byte) (any, error)
	Handle(ctx context.Context, v any) Settle
}

// Subscription is a consumer a process registers: one delivery of each
// message per queue, to one of the queue's members (a durable consumer that
// keeps what arrives while no member is there). Queue "" subscribes the
// process alone to every message from now on (fan-out): a process that
// restarts starts afresh, as a JetStream consumer with deliver policy new.
type Subscription struct {
	Subject string // a NATS subject pattern: '*' one token, a final '>' the rest
	Queue   string
	Handler Handler
}

// Stream is a set of subjects a deployment's broker keeps together: they
// share one duplicate window (a message id is dropped as a copy only on the
// stream it was first stored on), and a subject no stream holds cannot be
// published to.
type Stream struct {
	Name     string
	Subjects []string // NATS subject patterns
}

// JSON adapts a typed handler: messages decoded as JSON into T, or dropped
// with a decode error.
func JSON[T any](what string, handle func(ctx context.Context, v T) Settle) Handler {
	return jsonHandler[T]{what: what, handle: handle}
}

type jsonHandler[T any] struct {
	what   string
	handle func(context.Context, T) Settle
}

func (j jsonHandler[T]) Decode(data []byte) (any, error) {
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", j.what, err)
	}
	return v, nil
}

func (j jsonHandler[T]) Handle(ctx context.Context, v any) Settle { return j.handle(ctx, v.(T)) }
