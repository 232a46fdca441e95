package queue

import (
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Every write to a job is one of these scripts, each passing its own name as
// ARGV[1] (for the store's slow log and MONITOR). A script checks before its first write,
// so a refusal writes nothing. Every time a script reads or writes (due
// times, leases, the grace) is the store's clock, NOW: the replicas' clocks
// disagree, and a lease judged on a clock ahead of its claimer's ends early.
const prelude = `
local JOB, DLQ = %q, %q
local T = redis.call('TIME')
local NOW = tonumber(T[1]) * 1000 + math.floor(tonumber(T[2]) / 1000)
local TERMINAL = {SUCCEEDED=true, FAILED=true, TIMED_OUT=true, CANCELLED=true}
local function move(jk, to, now)
  redis.call('HINCRBY', jk, 'version', 1)
  redis.call('HSET', jk, 'state', to, 'updated_at', now)
end
local function dead(jk, id, status, code, reason, last, exhausted)
  redis.call('HSET', DLQ .. id, 'job_id', id, 'status', status, 'reason_code', code, 'reason', reason,
    'last_state', last, 'attempts', redis.call('HGET', jk, 'attempts') or '0', 'retries_exhausted', exhausted)
end
`

// submit: KEYS job, ready; ARGV op, id, topic, tenant. A job without a
// topic is stored FAILED with its dead letter and never queued.
const luaSubmit = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
redis.call('HSET', KEYS[1], 'id', ARGV[2], 'topic', ARGV[3], 'tenant', ARGV[4], 'created_at', NOW,
  'attempts', 0, 'gen', 0, 'version', 0)
if ARGV[3] == '' then
  move(KEYS[1], 'FAILED', NOW)
  redis.call('HSET', KEYS[1], 'error_code', 'invalid_request')
  dead(KEYS[1], ARGV[2], 'FAILED', 'invalid_request', 'submitted without a topic', '', 'false')
  return 'FAILED'
end
move(KEYS[1], 'QUEUED', NOW)
redis.call('ZADD', KEYS[2], NOW, ARGV[2])
return 'QUEUED'
`

// cancel: KEYS job, ready, dispatched; ARGV op, id. A cancel of a job
// not stored yet leaves a CANCELLED record, which its submit then finds. A
// DISPATCHED job's dispatch may not be published yet, and a publish after
// CANCELLED would run a cancelled job: the cancel is only recorded, and the
// job is CANCELLED when its dispatch ends without a final result (a
// retryable failure, the lease running out). A final result still lands.
const luaCancel = `
local st = redis.call('HGET', KEYS[1], 'state')
if st and TERMINAL[st] then return st end
if st == 'DISPATCHED' then
  redis.call('HSET', KEYS[1], 'cancel_requested', 1)
  return 'requested'
end
if not st then
  redis.call('HSET', KEYS[1], 'id', ARGV[2], 'created_at', NOW, 'attempts', 0, 'gen', 0, 'version', 0)
end
move(KEYS[1], 'CANCELLED', NOW)
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[2])
return 'CANCELLED'
`

// due: KEYS a sorted set; ARGV op, limit. Its members scored NOW or earlier.
const luaDue = `
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', NOW, 'LIMIT', 0, tonumber(ARGV[2]))
`

// claim: KEYS ready, dispatched; ARGV op, batch, max attempts, grace ms,
// retry ms, then (topic, "ok" or the reason no worker can take it, lease ms)
// for each routed topic. Claims every due QUEUED job of a placeable topic:
// DISPATCHED under a new generation, leased until NOW + its topic's lease.
// An unplaceable job waits; once it has waited the grace since it first
// found no worker it is returned as expired (the poller fails it).
const luaClaim = `
local now = NOW
local topics = {}
for i = 6, #ARGV, 3 do topics[ARGV[i]] = {ARGV[i+1], tonumber(ARGV[i+2])} end
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))) do
  local jk = JOB .. id
  local j = redis.call('HMGET', jk, 'state', 'topic', 'waiting_since', 'attempts')
  local t = topics[j[2]]
  local full = tonumber(j[4] or '0') >= tonumber(ARGV[3])
  if j[1] ~= 'QUEUED' then
    redis.call('ZREM', KEYS[1], id)
  elseif t and t[1] == 'ok' and not full then
    local gen = redis.call('HINCRBY', jk, 'gen', 1)
    local attempt = redis.call('HINCRBY', jk, 'attempts', 1)
    move(jk, 'DISPATCHED', now)
    redis.call('HSET', jk, 'dispatch_id', id .. '#' .. gen, 'dispatched_at', now)
    redis.call('HDEL', jk, 'waiting_since')
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZADD', KEYS[2], now + t[2], id)
    table.insert(out, {id, 'claimed', j[2], gen, attempt})
  else
    local reason = 'no_pool_mapping_topic'
    if full then reason = 'max_attempts' elseif t then reason = t[1] end
    if not j[3] then redis.call('HSET', jk, 'waiting_since', now) end
    if full or now - tonumber(j[3] or now) >= tonumber(ARGV[4]) then
      table.insert(out, {id, 'expired', reason})
    else
      redis.call('ZADD', KEYS[1], now + tonumber(ARGV[5]), id)
    end
  end
end
return out
`

// fail: KEYS job, ready; ARGV op, id, reason code. Fails a QUEUED job no
// worker could take; the retry cap records no cause of its own.
const luaFail = `
if redis.call('HGET', KEYS[1], 'state') ~= 'QUEUED' then return 'moved' end
move(KEYS[1], 'FAILED', NOW)
if ARGV[3] ~= 'max_attempts' then redis.call('HSET', KEYS[1], 'error_code', ARGV[3]) end
dead(KEYS[1], ARGV[2], 'FAILED', ARGV[3], 'no worker could take it', 'QUEUED', tostring(ARGV[3] == 'max_attempts'))
redis.call('ZREM', KEYS[2], ARGV[2])
return 'FAILED'
`

// result: KEYS job, ready, dispatched; ARGV op, id, gen, outcome, result
// pointer, backoff ms, max attempts. Applies a worker's result only to
// the dispatch that produced it: the job DISPATCHED under that generation.
const luaResult = `
local j = redis.call('HMGET', KEYS[1], 'state', 'gen', 'attempts', 'cancel_requested')
if not j[1] then return 'unknown_job' end
if TERMINAL[j[1]] then return 'terminal' end -- guard:terminal
if j[1] ~= 'DISPATCHED' then return 'not_dispatched' end -- guard:state
if tonumber(j[2]) ~= tonumber(ARGV[3]) then return 'stale' end -- guard:gen
local now = NOW
redis.call('ZREM', KEYS[3], ARGV[2])
if ARGV[4] == 'succeeded' then
  move(KEYS[1], 'SUCCEEDED', now)
  redis.call('HSET', KEYS[1], 'result_ptr', ARGV[5])
elseif ARGV[4] == 'failed_retryable' and j[4] then
  move(KEYS[1], 'CANCELLED', now)
elseif ARGV[4] == 'failed_retryable' and tonumber(j[3]) < tonumber(ARGV[7]) then
  move(KEYS[1], 'QUEUED', now)
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[6]), ARGV[2])
elseif ARGV[4] == 'failed_retryable' then
  move(KEYS[1], 'FAILED', now)
  dead(KEYS[1], ARGV[2], 'FAILED', 'max_attempts', 'retryable failure on the last attempt', j[1], 'true')
else
  move(KEYS[1], 'FAILED', now)
  redis.call('HSET', KEYS[1], 'result_ptr', ARGV[5], 'error_code', 'worker_failed')
  dead(KEYS[1], ARGV[2], 'FAILED', 'worker_failed', 'the worker reported a failure', j[1], 'false')
end
return redis.call('HGET', KEYS[1], 'state')
`

// expire: KEYS job, ready, dispatched; ARGV op, id, max attempts. A
// dispatch whose lease ran out is put back, or timed out at the cap, or
// ends its job CANCELLED when a cancel waits for it.
const luaExpire = `
local deadline = redis.call('ZSCORE', KEYS[3], ARGV[2])
if not deadline or tonumber(deadline) > NOW then return 'not_due' end
redis.call('ZREM', KEYS[3], ARGV[2])
local j = redis.call('HMGET', KEYS[1], 'state', 'attempts', 'cancel_requested')
if j[1] ~= 'DISPATCHED' then return 'moved' end
if j[3] then
  move(KEYS[1], 'CANCELLED', NOW)
  return 'CANCELLED'
end
if tonumber(j[2]) < tonumber(ARGV[3]) then
  move(KEYS[1], 'QUEUED', NOW)
  redis.call('ZADD', KEYS[2], NOW, ARGV[2])
  return 'QUEUED'
end
move(KEYS[1], 'TIMED_OUT', NOW)
redis.call('HSET', KEYS[1], 'error_code', 'dispatch_timeout')
dead(KEYS[1], ARGV[2], 'TIMED_OUT', 'dispatch_timeout', 'no result within the lease', 'DISPATCHED', 'true')
return 'TIMED_OUT'
`

type scripts struct{ due, submit, cancel, claim, fail, result, expire *redis.Script }

// newScripts renders the scripts; a planted defect removes a guard.
func newScripts(d Defect) scripts {
	result := luaResult
	switch d {
	case TerminalOverwrite: // only a QUEUED job refuses a result
		result = strings.Replace(result, "if TERMINAL[j[1]] then return 'terminal' end -- guard:terminal\n", "", 1)
		result = strings.Replace(result, "j[1] ~= 'DISPATCHED'", "j[1] == 'QUEUED'", 1)
	case StaleResultApplied:
		result = strings.Replace(result, "if tonumber(j[2]) ~= tonumber(ARGV[3]) then return 'stale' end -- guard:gen\n", "", 1)
	}
	mk := func(body string) *redis.Script {
		return redis.NewScript(fmt.Sprintf(prelude, JobPrefix, DLQPrefix) + body)
	}
	ending := mk // the scripts that end jobs: result, fail, expire
	if d == TerminalRecordExpires {
		expiring := strings.Replace(prelude, "  redis.call('HSET', jk, 'state', to, 'updated_at', now)\n",
			"  redis.call('HSET', jk, 'state', to, 'updated_at', now)\n  if TERMINAL[to] then redis.call('PEXPIRE', jk, 60000) end\n", 1)
		ending = func(body string) *redis.Script {
			return redis.NewScript(fmt.Sprintf(expiring, JobPrefix, DLQPrefix) + body)
		}
	}
	return scripts{due: mk(luaDue), submit: mk(luaSubmit), cancel: mk(luaCancel), claim: mk(luaClaim), fail: ending(luaFail),
		result: ending(result), expire: ending(luaExpire)}
}

// ScriptHashes names each script by the SHA1 EVALSHA sends for it, for an
// observer that tells the queue's writes apart; a planted defect changes
// the scripts it plants itself in, so their hashes too.
func ScriptHashes(d Defect) map[string]string {
	s := newScripts(d)
	return map[string]string{"due": s.due.Hash(), "submit": s.submit.Hash(), "cancel": s.cancel.Hash(),
		"claim": s.claim.Hash(), "fail": s.fail.Hash(), "result": s.result.Hash(), "expire": s.expire.Hash()}
}
