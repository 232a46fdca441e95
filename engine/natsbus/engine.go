package natsbus

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/dispatchsim/dispatchsim/engine"
)

// SchedulerQueue is the queue the scheduler replicas share.
const SchedulerQueue = "scheduler"

// EngineSubscriptions are a replica's consumers: submit, result and cancel
// shared by every replica in SchedulerQueue, heartbeats to each replica (every
// replica keeps its own view of worker load).
func EngineSubscriptions(e *engine.Engine) []Subscription {
	return []Subscription{
		{Subject: engine.SubjectSubmit, Queue: SchedulerQueue, Handler: JSON(e.HandleJobRequest)},
		{Subject: engine.SubjectResult, Queue: SchedulerQueue, Handler: JSON(e.HandleJobResult)},
		{Subject: engine.SubjectCancel, Queue: SchedulerQueue, Handler: JSON(e.HandleCancel)},
		{Subject: engine.SubjectHeartbeat, Handler: JSON(e.HandleHeartbeat)},
	}
}

// SubscribeAll subscribes every one of subs, stopping at the first failure.
func (b *Bus) SubscribeAll(ctx context.Context, subs []Subscription) error {
	for _, s := range subs {
		if err := b.Subscribe(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// JSON adapts a typed handler: a message that does not decode as T is
// terminated with the decode error.
func JSON[T any](handle func(context.Context, T) error) Handler {
	return func(ctx context.Context, data []byte) error {
		var v T
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("decode %T: %w", v, err)
		}
		return handle(ctx, v)
	}
}
