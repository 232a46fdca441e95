package outbox

import (
	"context"
	"time"

	"github.com/dispatchsim/dispatchsim/sut"
	"github.com/dispatchsim/dispatchsim/systems/outbox/dispatch"
)

// clock gives a sut.Clock the dispatcher's Clock type.
type clock struct{ c sut.Clock }

func (c clock) Now() time.Time                                   { return c.c.Now() }
func (c clock) Sleep(ctx context.Context, d time.Duration) error { return c.c.Sleep(ctx, d) }
func (c clock) AfterFunc(d time.Duration, f func(context.Context)) dispatch.Timer {
	return c.c.AfterFunc(d, f)
}

// bus gives a sut.Bus the dispatcher's Bus type.
type bus struct{ b sut.Bus }

func (b bus) Publish(ctx context.Context, subject string, m dispatch.Message) error {
	return b.b.Publish(ctx, subject, sut.Message{ID: m.ID, Data: m.Data})
}
