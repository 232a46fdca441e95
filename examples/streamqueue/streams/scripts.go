package streams

import (
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Every write to a job is one of these scripts, each passing its own name as
// ARGV[1]. A script checks before its first write, so a refusal writes
// nothing. Time is the store's clock, NOW: the replicas' clocks disagree.
const prelude = `
local JOB, DLQ, SUBMIT = %q, %q, %q
local T = redis.call('TIME')
local NOW = tonumber(T[1]) * 1000 + math.floor(tonumber(T[2]) / 1000)
local TERMINAL = {SUCCEEDED=true, FAILED=true, TIMED_OUT=true, CANCELLED=true}
local function move(jk, to)
  redis.call('HINCRBY', jk, 'version', 1)
  redis.call('HSET', jk, 'state', to, 'updated_at', NOW)
end
local function dead(jk, id, status, code, reason, last, exhausted)
  redis.call('HSET', DLQ .. id, 'job_id', id, 'status', status, 'reason_code', code, 'reason', reason,
    'last_state', last, 'attempts', redis.call('HGET', jk, 'attempts') or '0', 'retries_exhausted', exhausted)
end
local function enqueue(jk, id)
  move(jk, 'QUEUED')
  local e = redis.call('XADD', SUBMIT, '*', 'job', id)
  redis.call('HSET', jk, 'entry', e)
end
`

// submit: KEYS job; ARGV op, id, topic, tenant. A job id already stored is
// left as it is; a job without a topic is stored FAILED with its dead
// letter and never queued.
const luaSubmit = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
redis.call('HSET', KEYS[1], 'id', ARGV[2], 'topic', ARGV[3], 'tenant', ARGV[4], 'created_at', NOW,
  'attempts', 0, 'gen', 0, 'version', 0)
if ARGV[3] == '' then
  move(KEYS[1], 'FAILED')
  redis.call('HSET', KEYS[1], 'error_code', 'invalid_request')
  dead(KEYS[1], ARGV[2], 'FAILED', 'invalid_request', 'submitted without a topic', '', 'false')
  return 'FAILED'
end
enqueue(KEYS[1], ARGV[2])
return 'QUEUED'
`

// cancel: KEYS job; ARGV op, id. A cancel of a job not stored yet leaves a
// CANCELLED record its submit then finds. A DISPATCHED job may be running:
// the cancel is recorded, and the job is CANCELLED when its dispatch ends
// without a final result. A final result still lands.
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
move(KEYS[1], 'CANCELLED')
return 'CANCELLED'
`

// route: KEYS job, work stream, pools; ARGV op, id, submit entry, status
// ("ok" or why no worker can take it), pool, grace ms. Routes the QUEUED
// job the entry is current for: DISPATCHED under a new generation, its
// work entry added to the pool's stream, the submit entry acknowledged. A
// job no pool can take leaves its entry pending (a router claims it again
// later) until it has waited the grace since it first found none, then
// fails with the reason. A stale entry is acknowledged and nothing else.
const luaRoute = `
local function done() redis.call('XACK', SUBMIT, 'routers', ARGV[3]) end
local j = redis.call('HMGET', KEYS[1], 'state', 'entry', 'waiting_since')
if j[1] ~= 'QUEUED' or j[2] ~= ARGV[3] then done() return 'stale' end
if ARGV[4] == 'ok' then
  local gen = redis.call('HINCRBY', KEYS[1], 'gen', 1)
  redis.call('HINCRBY', KEYS[1], 'attempts', 1)
  move(KEYS[1], 'DISPATCHED')
  if redis.call('EXISTS', KEYS[2]) == 0 then redis.call('XGROUP', 'CREATE', KEYS[2], 'workers', '0', 'MKSTREAM') end
  local dispatch = ARGV[2] .. '#' .. gen
  local w = redis.call('XADD', KEYS[2], '*', 'job', ARGV[2], 'gen', gen, 'dispatch_id', dispatch)
  redis.call('HSET', KEYS[1], 'dispatch_id', dispatch, 'pool', ARGV[5], 'work_entry', w, 'dispatched_at', NOW)
  redis.call('HDEL', KEYS[1], 'waiting_since')
  redis.call('SADD', KEYS[3], ARGV[5])
  done()
  return 'DISPATCHED'
end
local since = tonumber(j[3] or NOW)
if not j[3] then redis.call('HSET', KEYS[1], 'waiting_since', NOW) end
if NOW - since < tonumber(ARGV[6]) then return 'wait' end
move(KEYS[1], 'FAILED')
redis.call('HSET', KEYS[1], 'error_code', ARGV[4])
dead(KEYS[1], ARGV[2], 'FAILED', ARGV[4], 'no worker could take it', 'QUEUED', 'false')
done()
return 'FAILED'
`

// reap: KEYS work stream; ARGV op, lease ms, max attempts, batch. The
// work entries added a lease ago or earlier (an entry's ID is its dispatch
// time on the store's clock), read or not, each name a job: one still
// DISPATCHED under the entry's generation is put back, or timed out at the
// cap, or CANCELLED when a cancel waits for it. Each entry is acknowledged
// and returned, for the reaper to delete once this script has landed.
const luaReap = `
local out = {}
for _, e in ipairs(redis.call('XRANGE', KEYS[1], '-', NOW - tonumber(ARGV[2]), 'COUNT', tonumber(ARGV[4]))) do
  redis.call('XACK', KEYS[1], 'workers', e[1])
  table.insert(out, e[1])
  local id, gen
  local f = e[2]
  for i = 1, #f, 2 do
    if f[i] == 'job' then id = f[i+1] elseif f[i] == 'gen' then gen = f[i+1] end
  end
  local jk = JOB .. (id or '')
  local j = redis.call('HMGET', jk, 'state', 'gen', 'attempts', 'cancel_requested')
  if id and j[1] == 'DISPATCHED' and tonumber(j[2]) == tonumber(gen) then
    if j[4] then
      move(jk, 'CANCELLED')
    elseif tonumber(j[3]) < tonumber(ARGV[3]) then
      enqueue(jk, id)
    else
      move(jk, 'TIMED_OUT')
      redis.call('HSET', jk, 'error_code', 'dispatch_timeout')
      dead(jk, id, 'TIMED_OUT', 'dispatch_timeout', 'no result within the lease', 'DISPATCHED', 'true')
    end
  end
end
return out
`

// result: KEYS job; ARGV op, id, gen, outcome, result pointer, max
// attempts. Applies a worker's result only to the dispatch that produced
// it: the job DISPATCHED under that generation, or put back QUEUED from it
// (its lease ran out while it ran) and not routed again yet, where only a
// success lands: the work is done, and a failure is already being retried.
const luaResult = `
local j = redis.call('HMGET', KEYS[1], 'state', 'gen', 'attempts', 'cancel_requested')
if not j[1] then return 'unknown_job' end
if TERMINAL[j[1]] then return 'terminal' end -- guard:terminal
if tonumber(j[2]) ~= tonumber(ARGV[3]) then return 'stale' end -- guard:gen
if j[1] == 'QUEUED' and ARGV[4] ~= 'succeeded' then return 'not_dispatched' end -- guard:state
if ARGV[4] == 'succeeded' then
  move(KEYS[1], 'SUCCEEDED')
  redis.call('HSET', KEYS[1], 'result_ptr', ARGV[5])
elseif ARGV[4] == 'failed_retryable' and j[4] then
  move(KEYS[1], 'CANCELLED')
elseif ARGV[4] == 'failed_retryable' and tonumber(j[3]) < tonumber(ARGV[6]) then
  enqueue(KEYS[1], ARGV[2])
elseif ARGV[4] == 'failed_retryable' then
  move(KEYS[1], 'FAILED')
  dead(KEYS[1], ARGV[2], 'FAILED', 'max_attempts', 'retryable failure on the last attempt', j[1], 'true')
else
  move(KEYS[1], 'FAILED')
  redis.call('HSET', KEYS[1], 'result_ptr', ARGV[5], 'error_code', 'worker_failed')
  dead(KEYS[1], ARGV[2], 'FAILED', 'worker_failed', 'the worker reported a failure', j[1], 'false')
end
return redis.call('HGET', KEYS[1], 'state')
`

type scripts struct{ submit, cancel, route, reap, result *redis.Script }

// newScripts renders the scripts; a planted defect edits the one it lives in.
func newScripts(d Defect) scripts {
	route, result := luaRoute, luaResult
	switch d {
	case TerminalOverwrite: // an ended job takes a result, of any generation
		result = strings.Replace(result, "if TERMINAL[j[1]] then return 'terminal' end -- guard:terminal\n", "", 1)
		result = strings.Replace(result, "if tonumber(j[2]) ~= tonumber(ARGV[3]) then return 'stale' end -- guard:gen\n", "", 1)
	case DeadLetterHidesCause: // the job keeps its cause, its dead letter files the retry cap
		route = strings.Replace(route, "'FAILED', ARGV[4], 'no worker could take it', 'QUEUED', 'false'",
			"'FAILED', 'max_attempts', 'no worker could take it', 'QUEUED', 'true'", 1)
	}
	mk := func(body string) *redis.Script {
		return redis.NewScript(fmt.Sprintf(prelude, JobPrefix, DLQPrefix, SubmitStream) + body)
	}
	return scripts{submit: mk(luaSubmit), cancel: mk(luaCancel), route: mk(route), reap: mk(luaReap), result: mk(result)}
}

// ScriptHashes names each script by the SHA1 EVALSHA sends for it; a
// planted defect changes the hash of the script it lives in.
func ScriptHashes(d Defect) map[string]string {
	s := newScripts(d)
	return map[string]string{"submit": s.submit.Hash(), "cancel": s.cancel.Hash(), "route": s.route.Hash(),
		"reap": s.reap.Hash(), "result": s.result.Hash()}
}
