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

// JobMessage reads a JSON message that names its job as "job_id", its
// dispatch generation as "dispatch_gen" and, for a result, where the result
// is as "result_ptr"; ok is false for anything else. The caller says whether
// the message is a dispatch or a heartbeat.
func JobMessage(data []byte) (fact MessageFact, ok bool) {
	var m struct {
		JobID       string `json:"job_id"`
		DispatchGen int    `json:"dispatch_gen"`
		ResultPtr   string `json:"result_ptr"`
	}
	if json.Unmarshal(data, &m) != nil {
		return MessageFact{}, false
	}
	return MessageFact{JobID: m.JobID, Gen: m.DispatchGen, ResultPtr: m.ResultPtr}, true
}
