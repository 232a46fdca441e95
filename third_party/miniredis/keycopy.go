package miniredis

import (
	"bytes"
	"time"
)

// KeyCopy is one key as it was when CopyKey took it: its type, its whole
// value and its TTL. A stream keeps its consumer groups, their last delivered
// IDs, pending entries (consumer, delivery count, last delivery) and
// consumers; a hash keeps its field TTLs; a HyperLogLog its registers. It
// shares nothing with the server, so later writes leave it as it was.
type KeyCopy struct {
	db  RedisDB // holds the one key
	key string
}

// CopyKey copies key k of the selected DB. ok is false when there is no such
// key.
func (m *Miniredis) CopyKey(k string) (c KeyCopy, ok bool) {
	m.Lock()
	defer m.Unlock()
	db := m.db(m.selectedDB)
	if _, ok := db.keys[k]; !ok {
		return KeyCopy{}, false
	}
	c = KeyCopy{db: newRedisDB(-1, nil), key: k}
	copyKeyInto(db, k, &c.db, k)
	return c, true
}

// RestoreKey makes key k of the selected DB a copy of c, with c's TTL,
// replacing whatever k held (the zero KeyCopy: k is deleted). c stays as it
// is: it can be restored again.
func (m *Miniredis) RestoreKey(k string, c KeyCopy) {
	m.Lock()
	defer m.Unlock()
	db := m.db(m.selectedDB)
	db.del(k, true)
	if c.key == "" {
		return
	}
	copyKeyInto(&c.db, c.key, db, k)
	db.incr(k)
	m.signal.Broadcast()
}

// Type is the copied key's type, as TYPE names it.
func (c KeyCopy) Type() string { return c.db.keys[c.key] }

// TTL is the copied key's TTL; 0 when it had none.
func (c KeyCopy) TTL() time.Duration { return c.db.ttl[c.key] }

// Equal reports whether c and o hold the same type and value (their TTLs
// and key names aside).
func (c KeyCopy) Equal(o KeyCopy) bool {
	t := c.Type()
	if t != o.Type() {
		return false
	}
	a, b := &c.db, &o.db
	ka, kb := c.key, o.key
	switch t {
	case keyTypeString:
		return a.stringKeys[ka] == b.stringKeys[kb]
	case keyTypeHash:
		return equalHashes(a.hashKeys[ka], b.hashKeys[kb]) && equalFieldTTLs(a.hashTTLs[ka], b.hashTTLs[kb])
	case keyTypeList:
		return equalSlices(a.listKeys[ka], b.listKeys[kb])
	case keyTypeSet:
		return equalSets(a.setKeys[ka], b.setKeys[kb])
	case keyTypeSortedSet:
		return equalSortedSets(a.sortedsetKeys[ka], b.sortedsetKeys[kb])
	case keyTypeStream:
		return a.streamKeys[ka].equal(b.streamKeys[kb])
	case keyTypeHll:
		return bytes.Equal(a.hllKeys[ka].Bytes(), b.hllKeys[kb].Bytes())
	}
	return t == ""
}

// copyKeyInto copies key src of one DB, value and TTL, deeply to key dst of
// another (which must not exist).
func copyKeyInto(from *RedisDB, src string, to *RedisDB, dst string) {
	t := from.keys[src]
	switch t {
	case keyTypeString:
		to.stringKeys[dst] = from.stringKeys[src]
	case keyTypeHash:
		to.hashKeys[dst] = copyHashKey(from.hashKeys[src])
		if ttls, ok := from.hashTTLs[src]; ok {
			cpy := make(map[string]time.Duration, len(ttls))
			for f, d := range ttls {
				cpy[f] = d
			}
			to.hashTTLs[dst] = cpy
		}
	case keyTypeList:
		to.listKeys[dst] = copyListKey(from.listKeys[src])
	case keyTypeSet:
		to.setKeys[dst] = copySetKey(from.setKeys[src])
	case keyTypeSortedSet:
		to.sortedsetKeys[dst] = copySortedSet(from.sortedsetKeys[src])
	case keyTypeStream:
		to.streamKeys[dst] = from.streamKeys[src].copy()
	case keyTypeHll:
		to.hllKeys[dst] = from.hllKeys[src].copy()
	default:
		panic("unhandled key type")
	}
	to.keys[dst] = t
	if v, ok := from.ttl[src]; ok {
		to.ttl[dst] = v
	}
}

// equal compares two streams: entries, last allocated ID, and every group
// with its last delivered ID, pending entries and consumers.
func (s *streamKey) equal(o *streamKey) bool {
	if s.lastAllocatedID != o.lastAllocatedID || len(s.entries) != len(o.entries) || len(s.groups) != len(o.groups) ||
		s.tailNode != o.tailNode || s.tailAppended != o.tailAppended {
		return false
	}
	for i, n := range s.nodes {
		if n != o.nodes[i] {
			return false
		}
	}
	for i, e := range s.entries {
		if e.ID != o.entries[i].ID || !equalSlices(e.Values, o.entries[i].Values) {
			return false
		}
	}
	for name, g := range s.groups {
		og, ok := o.groups[name]
		if !ok || g.lastID != og.lastID || len(g.pending) != len(og.pending) || len(g.consumers) != len(og.consumers) {
			return false
		}
		for i, p := range g.pending {
			q := og.pending[i]
			if p.id != q.id || p.consumer != q.consumer || p.deliveryCount != q.deliveryCount || !p.lastDelivery.Equal(q.lastDelivery) {
				return false
			}
		}
		for name, c := range g.consumers {
			oc, ok := og.consumers[name]
			if !ok || c.numPendingEntries != oc.numPendingEntries || !c.lastSeen.Equal(oc.lastSeen) || !c.lastSuccess.Equal(oc.lastSuccess) {
				return false
			}
		}
	}
	return true
}

func equalHashes(a, b hashKey) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func equalFieldTTLs(a, b map[string]time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func equalSets(a, b setKey) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

func equalSortedSets(a, b sortedSet) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func equalSlices(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
