package cordum

import (
	"context"
	"encoding/json"
	"time"

	"github.com/dispatchsim/dispatchsim/engine"
	"github.com/dispatchsim/dispatchsim/sut"
)

// clock gives a sut.Clock the engine's Clock type.
type clock struct{ c sut.Clock }

func (c clock) Now() time.Time                                   { return c.c.Now() }
func (c clock) Sleep(ctx context.Context, d time.Duration) error { return c.c.Sleep(ctx, d) }
func (c clock) AfterFunc(d time.Duration, f func(context.Context)) engine.Timer {
	return c.c.AfterFunc(d, f)
}

// bus gives a sut.Bus the engine's Bus type.
type bus struct{ b sut.Bus }

func (b bus) Publish(ctx context.Context, subject string, m engine.Message) error {
	return b.b.Publish(ctx, subject, sut.Message{ID: m.ID, Data: m.Data})
}

func jsonBytes(v any) ([]byte, error) { return json.Marshal(v) }
