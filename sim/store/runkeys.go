package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
	"github.com/dispatchsim/dispatchsim/sut"
)

// runKeyOp is the recorded kind of a write the observer says may change an
// idempotency key's value, "" for any other command.
func (h *storeHook) runKeyOp(name string, args []any) (op history.RunKeyOp, runKey string) {
	if readOnly[name] || handshake[name] {
		return "", ""
	}
	f := h.s.obs.Command(h.s.command(name, args))
	switch {
	case f.RunKey == "":
		return "", ""
	case f.Reserve:
		return history.RunKeyReserve, f.RunKey
	case f.Release:
		return history.RunKeyRelease, f.RunKey
	case f.Sweep:
		return history.RunKeySweep, f.RunKey
	}
	return history.RunKeyWrite, f.RunKey
}

// recordRunKey puts a run admission command on an idempotency key into the
// history with the key's value before it (the value the store held after
// the last such command) and after it (read from the store). It runs
// deferred, so a caller that dies at the command after it applied (a crash)
// is recorded too, with returned false. Every write that names an
// idempotency key is one of these, so the value before is exact; a store that
// forgets writes (StoreLosesAckedWrites) makes it stale for the keys it
// changed, whose findings go to the environment.
func (h *storeHook) recordRunKey(ctx context.Context, cmd redis.Cmder, sent time.Duration, err error, returned bool) {
	name := strings.ToLower(cmd.Name())
	args := cmd.Args()
	s := h.s
	if s.k.HoldsBaton(ctx) == nil {
		return // unwound by the kernel's teardown, off the schedule
	}
	if org := h.runsOf(name, args); org != "" {
		h.countRuns(ctx, org)
	}
	op, runKey := h.runKeyOp(name, args)
	if op == "" {
		return
	}
	if s.runKeys == nil {
		s.runKeys = map[string]string{}
	}
	after, _ := s.Get(firstKey(name, args))
	before := s.runKeys[runKey]
	if !returned && after == before {
		return // died before the command changed anything
	}
	if returned && redis.HasErrorPrefix(err, "NOSCRIPT") {
		return // go-redis runs the script again with EVAL at once
	}
	rec := history.RunKeyCommand{Step: s.k.Step(), Time: s.k.Now(), Sent: sent, Key: runKey, Op: op,
		Before: before, After: after, Returned: returned, Failed: returned && err != nil && !errors.Is(err, redis.Nil)}
	rec.Actor = kernel.ActorOf(ctx).Name()
	s.runKeys[runKey] = after
	s.hist.RunKeys = append(s.hist.RunKeys, rec)
}

// runsOf is the org whose runs a write may create or finish, "" for none.
func (h *storeHook) runsOf(name string, args []any) string {
	if !sut.IsScriptCommand(name) {
		return ""
	}
	return h.s.obs.Command(h.s.command(name, args)).RunsOf
}

// countRuns records org's active runs when a command changed their number.
func (h *storeHook) countRuns(ctx context.Context, org string) {
	s := h.s
	active := len(s.obs.DueRuns(s, org, kernel.Epoch.AddDate(100, 0, 0), 0))
	if s.activeRuns == nil {
		s.activeRuns = map[string]int{}
	}
	if prev, ok := s.activeRuns[org]; ok && prev == active {
		return
	}
	s.activeRuns[org] = active
	s.hist.RunCounts = append(s.hist.RunCounts, history.RunCount{Step: s.k.Step(), Time: s.k.Now(),
		Actor: kernel.ActorOf(ctx).Name(), Org: org, Active: active})
}
