package engine

// Script names, by which an observer tells the engine's store writes apart
// without reading their wire layout.
const (
	ScriptTransition     = "transition"
	ScriptSetFields      = "set-fields"
	ScriptLockRelease    = "lock-release"
	ScriptLockRenew      = "lock-renew"
	ScriptRunKeyReserve  = "run-key-reserve"
	ScriptRunKeyTakeOver = "run-key-take-over"
	ScriptRunKeyRelease  = "run-key-release"
	ScriptRunKeySweep    = "run-key-sweep"
	ScriptRunCreate      = "run-create"
	ScriptRunComplete    = "run-complete"
)

// ScriptHashes maps each script's name to the SHA1 EVALSHA sends for it.
func ScriptHashes() map[string]string {
	return map[string]string{
		ScriptTransition:     transitionScript.Hash(),
		ScriptSetFields:      setFieldsScript.Hash(),
		ScriptLockRelease:    releaseLockScript.Hash(),
		ScriptLockRenew:      renewLockScript.Hash(),
		ScriptRunKeyReserve:  reserveRunKeyScript.Hash(),
		ScriptRunKeyTakeOver: takeOverRunKeyScript.Hash(),
		ScriptRunKeyRelease:  releaseRunKeyScript.Hash(),
		ScriptRunKeySweep:    sweepRunKeyScript.Hash(),
		ScriptRunCreate:      createRunScript.Hash(),
		ScriptRunComplete:    completeRunScript.Hash(),
	}
}
