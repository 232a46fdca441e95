package sut

import (
	"encoding/json"
	"strconv"
)

// HashJob names the fields of a job stored as one Redis hash, the layout
// Redis dispatchers commonly use; an observer reads such a job with Read.
type HashJob struct {
	State, Version, Attempts, Gen, DispatchID, ResultPtr, Cause string
}

// Read is the job at key as its hash says; a missing or malformed number
// reads as 0.
func (h HashJob) Read(v View, key string) JobFact {
	version, _ := strconv.ParseInt(v.Field(key, h.Version), 10, 64)
	attempts, _ := strconv.Atoi(v.Field(key, h.Attempts))
	gen, _ := strconv.Atoi(v.Field(key, h.Gen))
	return JobFact{State: v.Field(key, h.State), Version: version, Attempts: attempts, Gen: gen,
		DispatchID: v.Field(key, h.DispatchID), ResultPtr: v.Field(key, h.ResultPtr), Cause: v.Field(key, h.Cause)}
}

// JobMessage reads a JSON message that names its job as "job_id" and its
// dispatch generation as "dispatch_gen"; ok is false for anything else.
func JobMessage(data []byte) (jobID string, gen int, ok bool) {
	var m struct {
		JobID       string `json:"job_id"`
		DispatchGen int    `json:"dispatch_gen"`
	}
	if json.Unmarshal(data, &m) != nil {
		return "", 0, false
	}
	return m.JobID, m.DispatchGen, true
}
