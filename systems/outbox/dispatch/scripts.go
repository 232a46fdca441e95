package dispatch

import (
	"fmt"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The scripts are the only writers of job state and outbox entries. Each
// checks everything before its first write: Redis does not roll a script back
// on error, so "refused" must mean "nothing written".
var (
	transitionScript = redis.NewScript(luaPrelude() + luaTransition)
	dispatchScript   = redis.NewScript(luaPrelude() + luaDispatch)
	claimScript      = redis.NewScript(luaPrelude() + luaClaim)
	markSentScript   = redis.NewScript(luaPrelude() + luaMarkSent)
	enqueueScript    = redis.NewScript(luaPrelude() + luaEnqueue)
)

// luaPrelude renders the Go transition table and the shared functions: the
// table cannot disagree with the scripts, and the scripts cannot disagree
// with each other.
func luaPrelude() string {
	// The dispatch script writes SCHEDULED then DISPATCHED; it checks only the
	// first step, so the second must always be allowed.
	if !TransitionAllowed(StateScheduled, StateDispatched) {
		panic("dispatch: the transition table must allow SCHEDULED -> DISPATCHED")
	}
	var allowed strings.Builder
	froms := make([]string, 0, len(allowedTransitions))
	for from := range allowedTransitions {
		froms = append(froms, string(from))
	}
	sort.Strings(froms)
	for _, from := range froms {
		fmt.Fprintf(&allowed, "  [%q] = {", from)
		for _, to := range allowedTransitions[JobState(from)] {
			fmt.Fprintf(&allowed, "[%q]=true, ", to)
		}
		allowed.WriteString("},\n")
	}
	var terminal strings.Builder
	for _, s := range AllStates {
		if s.Terminal() {
			fmt.Fprintf(&terminal, "[%q]=true, ", s)
		}
	}
	return fmt.Sprintf(`
-- Every time a script writes is the store's: a replica stamps what another
-- judges (a state's age, a claim's lease), and their clocks may disagree.
local T = redis.call('TIME')
local NOW = tonumber(T[1]) * 1000 + math.floor(tonumber(T[2]) / 1000)
local allowed = {
%s}
local terminal = {%s}
local JOB, EVENTS, INDEX, ENTRY = %q, %q, %q, %q

-- transition moves job id from 'from' (at version want, 0: any) to 'to', or
-- refuses without writing. Returns status, current state, new version.
local function transition(jk, ek, id, from, want, to, reason)
  local cur = redis.call('HGET', jk, 'state') or ''
  local version = tonumber(redis.call('HGET', jk, 'version') or '0')
  if terminal[cur] then return 'terminal', cur, version end
  if cur ~= from then return 'stale', cur, version end
  if want > 0 and version ~= want then return 'stale', cur, version end
  if not (allowed[cur] and allowed[cur][to]) then return 'forbidden', cur, version end
  version = version + 1
  redis.call('HSET', jk, 'state', to, 'updated_at', NOW, 'version', version)
  if cur == '' then
    redis.call('HSET', jk, 'id', id, 'created_at', NOW, 'attempts', 0, 'dispatch_gen', 0)
  end
  -- Every scheduling pass counts an attempt.
  if to == 'SCHEDULED' then redis.call('HINCRBY', jk, 'attempts', 1) end
  -- A retryable failure earns one re-dispatch under a new message id.
  if to == 'RETRYING' then redis.call('HINCRBY', jk, 'dispatch_gen', 1) end
  if cur ~= '' then redis.call('ZREM', INDEX .. cur, id) end
  redis.call('ZADD', INDEX .. to, NOW, id)
  redis.call('RPUSH', ek, NOW .. '|' .. cur .. '|' .. to .. '|' .. reason)
  redis.call('LTRIM', ek, -%d, -1)
  return 'ok', cur, version
end

-- enqueue writes one outbox entry, claimable at once.
local function enqueue(entryKey, pendingKey, entryID, kind, jobID, subject, msgID, data)
  redis.call('HSET', entryKey, 'kind', kind, 'job_id', jobID, 'subject', subject,
    'msg_id', msgID, 'data', data, 'created_at', NOW, 'claims', 0)
  redis.call('ZADD', pendingKey, NOW, entryID)
end
`, allowed.String(), terminal.String(), jobKeyPrefix, jobEventsPrefix, jobIndexPrefix, entryKeyPrefix, maxJobEvents)
}

// luaTransition is a compare-and-transition; a DLQ entry, when given, is
// stored and queued for announcement in the same step.
// KEYS: 1 job, 2 events, 3 DLQ entry, 4 DLQ outbox entry, 5 pending set
// ARGV: 1 job id, 2 from, 3 version (0: any), 4 to, 5 reason,
//
//	6 DLQ JSON ("": none), 7 DLQ outbox entry id, 8 DLQ message id, 9.. field/value pairs
var luaTransition = fmt.Sprintf(`
local st, cur, version = transition(KEYS[1], KEYS[2], ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5])
if st ~= 'ok' then return {st, cur} end
for i = 9, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i+1]) end
if ARGV[6] ~= '' then
  redis.call('SET', KEYS[3], ARGV[6])
  redis.call('ZADD', %q, NOW, ARGV[1])
  enqueue(KEYS[4], KEYS[5], ARGV[7], 'dlq', ARGV[1], %q, ARGV[8], ARGV[6])
end
return {'ok', cur, version, redis.call('HGET', KEYS[1], 'attempts'), redis.call('HGET', KEYS[1], 'dispatch_gen')}
`, dlqIndexKey, SubjectDLQ)

// luaDispatch is the request handler's one write: a scheduling pass
// (SCHEDULED, counting the attempt), DISPATCHED with its dispatch id, and the
// outbox entry carrying the packet, all or nothing.
// KEYS: 1 job, 2 events, 3 outbox entry, 4 pending set
// ARGV: 1 job id, 2 from, 3 version, 4 dispatch id, 5 worker,
//
//	6 subject, 7 message id, 8 packet
const luaDispatch = `
local st, cur, version = transition(KEYS[1], KEYS[2], ARGV[1], ARGV[2], tonumber(ARGV[3]), 'SCHEDULED', 'schedule')
if st ~= 'ok' then return {st, cur} end
-- Cannot be refused: the job is SCHEDULED at this version and the table allows it.
st, cur, version = transition(KEYS[1], KEYS[2], ARGV[1], 'SCHEDULED', version, 'DISPATCHED', 'dispatch ' .. ARGV[5])
redis.call('HSET', KEYS[1], 'dispatch_id', ARGV[4], 'worker', ARGV[5], 'last_error_code', '', 'last_error', '', 'pick_fail_since', '')
enqueue(KEYS[3], KEYS[4], ARGV[4], 'dispatch', ARGV[1], ARGV[6], ARGV[7], ARGV[8])
return {'ok', cur, version, redis.call('HGET', KEYS[1], 'attempts'), redis.call('HGET', KEYS[1], 'dispatch_gen')}
`

// luaClaim leases up to a batch of due entries to one relay. An entry whose
// dispatch no longer matters (the job is terminal, or was re-dispatched under
// another id) is dropped instead of published.
// KEYS: 1 pending set
// ARGV: 1 lease ms, 2 batch, 3 relay id, 4 retention ms
const luaClaim = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', NOW, 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, eid in ipairs(due) do
  local ek = ENTRY .. eid
  local e = redis.call('HMGET', ek, 'kind', 'job_id', 'subject', 'msg_id', 'data')
  local drop = false
  if not e[1] then
    drop = 'missing'
  elseif e[1] == 'dispatch' then
    local j = redis.call('HMGET', JOB .. e[2], 'state', 'dispatch_id')
    if j[2] ~= eid then drop = 'superseded' elseif terminal[j[1]] then drop = 'terminal' end
  end
  if drop then
    redis.call('ZREM', KEYS[1], eid)
    if e[1] then
      redis.call('HSET', ek, 'dropped', drop, 'done_at', NOW)
      redis.call('PEXPIRE', ek, ARGV[4])
    end
    table.insert(out, {eid, 'drop', drop})
  else
    redis.call('ZADD', KEYS[1], NOW + tonumber(ARGV[1]), eid)
    local claims = redis.call('HINCRBY', ek, 'claims', 1)
    redis.call('HSET', ek, 'claimed_by', ARGV[3])
    table.insert(out, {eid, 'claim', e[1], e[2], e[3], e[4], e[5], claims})
  end
end
return out
`

// luaMarkSent records a published entry and, for a dispatch that is still the
// job's current one, moves the job DISPATCHED -> RUNNING. A result that landed
// first, a cancel or a timeout make that transition a no-op.
// KEYS: 1 outbox entry, 2 pending set
// ARGV: 1 entry id, 2 retention ms
const luaMarkSent = `
local e = redis.call('HMGET', KEYS[1], 'kind', 'job_id', 'sent_at')
if not e[1] then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return {'missing'}
end
if e[3] then return {'already'} end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[1], 'sent_at', NOW)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if e[1] == 'dispatch' then
  local jk = JOB .. e[2]
  if redis.call('HGET', jk, 'dispatch_id') == ARGV[1] then
    local st = transition(jk, EVENTS .. e[2], e[2], 'DISPATCHED', 0, 'RUNNING', 'published')
    return {'ok', st}
  end
end
return {'ok', 'none'}
`

// luaEnqueue queues a message that belongs to no job's state change (the DLQ
// announcement of a request without a job id).
// KEYS: 1 outbox entry, 2 pending set
// ARGV: 1 entry id, 2 kind, 3 job id, 4 subject, 5 message id, 6 data
const luaEnqueue = `
enqueue(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
return 'ok'
`

// Script names, by which an observer tells the dispatcher's writes apart.
const (
	ScriptTransition = "transition"
	ScriptDispatch   = "dispatch"
	ScriptClaim      = "claim"
	ScriptMarkSent   = "mark-sent"
	ScriptEnqueue    = "enqueue"
	ScriptAccept     = "accept"
)

// ScriptHashes maps each script's name to the SHA1 EVALSHA sends for it.
func ScriptHashes() map[string]string {
	return map[string]string{ScriptTransition: transitionScript.Hash(), ScriptDispatch: dispatchScript.Hash(),
		ScriptClaim: claimScript.Hash(), ScriptMarkSent: markSentScript.Hash(), ScriptEnqueue: enqueueScript.Hash(),
		ScriptAccept: acceptCurrentScript.Hash()}
}
