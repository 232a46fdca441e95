package miniredis

import (
	"testing"
	"time"

	"github.com/dispatchsim/dispatchsim/third_party/miniredis/proto"
)

// XCLAIM and XAUTOCLAIM as Redis 7 does them: min-idle-time honoured, JUSTID
// no delivery, deleted entries leave the PEL.
func TestStreamClaimRedis7(t *testing.T) {
	s, c := runWithClient(t)
	now := time.Now()
	s.SetTime(now)

	mustOK(t, c, "XGROUP", "CREATE", "jobs", "g", "$", "MKSTREAM")
	mustDo(t, c, "XADD", "jobs", "1-0", "job", "a", proto.String("1-0"))
	mustDo(t, c, "XADD", "jobs", "2-0", "job", "b", proto.String("2-0"))
	mustDo(t, c, "XADD", "jobs", "3-0", "job", "c", proto.String("3-0"))
	mustContain(t, c, "XREADGROUP", "GROUP", "g", "alice", "STREAMS", "jobs", ">", "3-0")

	s.SetTime(now.Add(time.Second))
	// idle 1s, less than 5s: nothing claimed, nothing changed
	mustDo(t, c, "XCLAIM", "jobs", "g", "bob", "5000", "1-0", "JUSTID", proto.Strings())
	mustDo(t, c, "XPENDING", "jobs", "g", "-", "+", "1",
		proto.Array(proto.Array(proto.String("1-0"), proto.String("alice"), proto.Int(1000), proto.Int(1))))

	// JUSTID: claimed, idle reset, the delivery count stays
	mustDo(t, c, "XCLAIM", "jobs", "g", "bob", "500", "1-0", "JUSTID", proto.Strings("1-0"))
	mustDo(t, c, "XPENDING", "jobs", "g", "-", "+", "1",
		proto.Array(proto.Array(proto.String("1-0"), proto.String("bob"), proto.Int(0), proto.Int(1))))
	// without JUSTID it counts as a delivery
	mustDo(t, c, "XCLAIM", "jobs", "g", "carol", "0", "1-0", "JUSTID", proto.Strings("1-0"))
	mustContain(t, c, "XCLAIM", "jobs", "g", "carol", "0", "1-0", "job")
	mustDo(t, c, "XPENDING", "jobs", "g", "-", "+", "1",
		proto.Array(proto.Array(proto.String("1-0"), proto.String("carol"), proto.Int(0), proto.Int(2))))

	// XPENDING's IDLE filter
	mustDo(t, c, "XPENDING", "jobs", "g", "IDLE", "500", "-", "+", "10",
		proto.Array(
			proto.Array(proto.String("2-0"), proto.String("alice"), proto.Int(1000), proto.Int(1)),
			proto.Array(proto.String("3-0"), proto.String("alice"), proto.Int(1000), proto.Int(1)),
		))

	// XAUTOCLAIM: the cursor, and a deleted entry reported and dropped
	mustDo(t, c, "XDEL", "jobs", "2-0", proto.Int(1))
	mustDo(t, c, "XPENDING", "jobs", "g", proto.Array(
		proto.Int(3), proto.String("1-0"), proto.String("3-0"),
		proto.Array(
			proto.Array(proto.String("alice"), proto.String("2")),
			proto.Array(proto.String("carol"), proto.String("1")),
		)))
	mustDo(t, c, "XAUTOCLAIM", "jobs", "g", "dave", "500", "0", "COUNT", "1", "JUSTID",
		proto.Array(proto.String("3-0"), proto.Strings(), proto.Strings("2-0")))
	mustDo(t, c, "XAUTOCLAIM", "jobs", "g", "dave", "500", "3-0", "JUSTID",
		proto.Array(proto.String("0-0"), proto.Strings("3-0"), proto.Strings()))
	mustDo(t, c, "XPENDING", "jobs", "g", "-", "+", "10",
		proto.Array(
			proto.Array(proto.String("1-0"), proto.String("carol"), proto.Int(0), proto.Int(2)),
			proto.Array(proto.String("3-0"), proto.String("dave"), proto.Int(0), proto.Int(1)),
		))
	mustDo(t, c, "XAUTOCLAIM", "jobs", "g", "dave", "0", "0", "COUNT", "0",
		proto.Error("ERR COUNT must be > 0"))
}

// TIME, XINFO and the other commands without Redis's write flag run in
// read-only scripts; writes do not.
func TestEvalRoReads(t *testing.T) {
	_, c := runWithClient(t)
	mustDo(t, c, "XADD", "jobs", "1-0", "job", "a", proto.String("1-0"))
	mustContain(t, c, "EVAL_RO", "return #redis.call('TIME')", "0", ":2")
	mustDo(t, c, "EVAL_RO", "return redis.call('PING')", "0", proto.Inline("PONG"))
	mustContain(t, c, "EVAL_RO", "return redis.call('XINFO', 'STREAM', KEYS[1])", "1", "jobs", "length")
	mustContain(t, c, "EVAL_RO", "return redis.call('PFCOUNT', 'h')", "0", "Write commands are not allowed from read-only scripts.")
	mustContain(t, c, "EVAL_RO", "return redis.call('XGROUP', 'CREATE', KEYS[1], 'g', '0')", "1", "jobs", "Write commands are not allowed from read-only scripts.")
}

// A KeyCopy is the whole key, and stays as it was.
func TestKeyCopy(t *testing.T) {
	s, c := runWithClient(t)
	s.SetTime(time.Now())
	mustOK(t, c, "XGROUP", "CREATE", "jobs", "g", "$", "MKSTREAM")
	mustDo(t, c, "XADD", "jobs", "1-0", "job", "a", proto.String("1-0"))
	mustDo(t, c, "XADD", "jobs", "2-0", "job", "b", proto.String("2-0"))
	mustContain(t, c, "XREADGROUP", "GROUP", "g", "alice", "STREAMS", "jobs", ">", "2-0")
	mustDo(t, c, "PFADD", "h", "a", "b", proto.Int(1))
	before := s.Dump()

	stream, ok := s.CopyKey("jobs")
	if !ok || stream.Type() != "stream" {
		t.Fatalf("CopyKey: %v %q", ok, stream.Type())
	}
	hll, _ := s.CopyKey("h")
	mustDo(t, c, "XDEL", "jobs", "1-0", proto.Int(1))
	mustDo(t, c, "XACK", "jobs", "g", "2-0", proto.Int(1))
	mustDo(t, c, "XADD", "jobs", "3-0", "job", "c", proto.String("3-0"))
	mustDo(t, c, "PFADD", "h", "c", proto.Int(1))
	now, _ := s.CopyKey("jobs")
	if now.Equal(stream) {
		t.Fatal("a changed stream is Equal to its copy")
	}

	s.RestoreKey("jobs", stream)
	s.RestoreKey("h", hll)
	equals(t, before, s.Dump())
	again, _ := s.CopyKey("jobs")
	if !again.Equal(stream) {
		t.Fatal("a restored stream is not Equal to its copy")
	}
	mustDo(t, c, "XPENDING", "jobs", "g", "-", "+", "10",
		proto.Array(
			proto.Array(proto.String("1-0"), proto.String("alice"), proto.Int(0), proto.Int(1)),
			proto.Array(proto.String("2-0"), proto.String("alice"), proto.Int(0), proto.Int(1)),
		))
	// XADD after a restore allocates past the copy's last ID, not before it
	mustDo(t, c, "XADD", "jobs", "2-*", "job", "d", proto.String("2-1"))
}
