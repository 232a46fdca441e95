package store

import (
	"fmt"
	"maps"
	"slices"
	"time"

	miniredis "github.com/dispatchsim/dispatchsim/third_party/miniredis"

	"github.com/dispatchsim/dispatchsim/history"
	"github.com/dispatchsim/dispatchsim/sim/kernel"
)

// Snapshot is the whole keyspace at one moment: what a replica that stopped
// receiving writes then still holds. Restoring it is a failover to that
// replica, which forgets every write acknowledged since.
type Snapshot struct {
	At   time.Duration
	keys map[string]value
	dump map[string]string // the same keyspace by a second path (checkRestore)
}

// value is one key's type, whole content and time to live: miniredis's own
// detached copy of it (KeyCopy), so every type it stores goes back whole: a
// stream with its consumer groups, last delivered IDs, pending entries
// (consumer, delivery count, last delivery) and consumers; a hash with its
// field TTLs; a HyperLogLog; geo sets as the sorted sets they are. The
// key's TTL goes back shortened by the time since (Restore); a hash field's
// own TTL (HEXPIRE) goes back as it was, not shortened: no system here sets
// one.
type value struct {
	copy miniredis.KeyCopy
	ttl  time.Duration
}

func (v value) equal(o value) bool { return v.copy.Equal(o.copy) }

// Snapshot copies every key, of every type the store holds.
func (s *Store) Snapshot() (Snapshot, error) {
	snap := Snapshot{At: s.k.Now(), keys: map[string]value{}}
	for _, key := range s.Keys() {
		v, err := s.read(key)
		if err != nil {
			return Snapshot{}, err
		}
		snap.keys[key] = v
	}
	snap.dump = s.keyspaceDump(0)
	return snap, nil
}

func (s *Store) read(key string) (value, error) {
	c, ok := s.mr.CopyKey(key)
	if !ok {
		return value{}, fmt.Errorf("snapshot key %s: listed but gone", key)
	}
	return value{copy: c, ttl: s.mr.TTL(key)}, nil
}

// Restore puts the snapshot back: every key as it was then, each time to live
// shortened by the time since (a key that expired meanwhile stays gone). It
// returns the keys it changed, sorted: content, existence or expiry (a lock
// renewed since the snapshot expires earlier again).
func (s *Store) Restore(snap Snapshot) ([]string, error) {
	elapsed := s.k.Now() - snap.At
	var changed []string
	now := map[string]value{}
	for _, key := range s.Keys() {
		v, err := s.read(key)
		if err != nil {
			return nil, err
		}
		now[key] = v
	}
	for key, cur := range now {
		old, ok := snap.keys[key]
		if !ok || !old.equal(cur) || (old.ttl > 0) != (cur.ttl > 0) || old.ttl > 0 && old.ttl-elapsed != cur.ttl {
			changed = append(changed, key)
		}
		s.mr.Del(key)
	}
	for key, old := range snap.keys {
		if old.ttl > 0 && old.ttl <= elapsed {
			continue // expired since the snapshot: gone either way
		}
		if _, ok := now[key]; !ok {
			changed = append(changed, key)
		}
		s.write(key, old)
		if old.ttl > 0 {
			s.mr.SetTTL(key, old.ttl-elapsed)
		}
	}
	slices.Sort(changed)
	return slices.Compact(changed), nil
}

func (s *Store) write(key string, v value) { s.mr.RestoreKey(key, v.copy) }

// Lose is a failover to a copy of the store as it was at snap: every write
// acknowledged since is forgotten. It records the loss, and every job whose
// state went back as a state change by actor, so the checkers see the store
// move the job, not the system. It returns the loss as recorded.
func (s *Store) Lose(snap Snapshot, actor string) (history.StoreLoss, error) {
	before := s.obs.Admission(s, kernel.Epoch)
	keys, err := s.Restore(snap)
	if err != nil {
		return history.StoreLoss{}, err
	}
	after := s.obs.Admission(s, kernel.Epoch)
	loss := history.StoreLoss{Step: s.k.Step(), Time: s.k.Now(), Since: snap.At, Keys: len(keys),
		Inconsistent: s.checkRestore(snap, s.k.Now()-snap.At)}
	jobs := map[string]bool{}
	for _, key := range keys {
		if id, ok := s.obs.JobKey(key); ok {
			jobs[id] = true
		}
	}
	for job, key := range s.lockKeys {
		if slices.Contains(keys, key) {
			jobs[job] = true
		}
	}
	loss.Jobs = slices.Sorted(maps.Keys(jobs))
	for _, k := range slices.Sorted(maps.Keys(before.Keys)) {
		if after.Keys[k] != before.Keys[k] {
			loss.RunKeys = append(loss.RunKeys, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(after.Keys)) {
		if _, had := before.Keys[k]; !had {
			loss.RunKeys = append(loss.RunKeys, k)
		}
	}
	for _, key := range keys {
		id, ok := s.obs.JobKey(key)
		if !ok {
			continue
		}
		job := s.obs.Job(s, key)
		prev := s.states[id]
		if job.State == prev.state && job.Version == prev.version {
			continue
		}
		s.states[id] = observed{state: job.State, version: job.Version}
		s.hist.States = append(s.hist.States, history.StateChange{Step: s.k.Step(), Time: s.k.Now(), Actor: actor,
			JobID: id, From: prev.state, To: job.State, Version: job.Version, Sent: s.k.Now(),
			Gen: job.Gen, DispatchID: job.DispatchID, ResultPtr: job.ResultPtr})
		s.k.Tracef(actor, "state %s %s -> %s v%d (store lost writes)", id, history.StateOrNone(prev.state),
			history.StateOrNone(job.State), job.Version)
		if job.State == "" {
			delete(s.states, id)
			s.ExpectJob(id)
		} else {
			s.noteState(id, job.State)
		}
	}
	s.hist.StoreLosses = append(s.hist.StoreLosses, loss)
	s.k.Tracef(actor, "store lost the writes of the last %s: %d keys, jobs %v", s.k.Now()-snap.At, len(keys), loss.Jobs)
	return loss, nil
}
