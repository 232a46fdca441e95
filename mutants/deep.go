package mutants

// Deep are defects that only show when two rare events happen in a row: each
// names the two. They are kept apart from All, the release gate's catalog,
// because the release suite is not expected to kill them within its budget;
// they measure what branching exploration and the scheduling strategies buy
// (docs/mutation-score.md, "Deep defects"). The format is All's.
var Deep = []Mutant{
	{
		Name:   "stale-result-after-redispatch",
		Origin: "deep: (1) a retryable failure re-dispatches the job, (2) the earlier dispatch's result arrives late",
		Description: "results are not checked against the job's dispatch generation: a late result of the first " +
			"dispatch completes the re-dispatched job with the wrong result",
		Edits: []Edit{{File: "engine/results.go",
			From: "\t\tcase res.DispatchGen != job.DispatchGen:\n\t\t\te.metrics.resultIgnored.WithLabelValues(\"stale_dispatch\").Inc()\n\t\t\treturn nil\n",
			To:   ""}},
		Scenario: "swarm",
		Catches:  []string{"result_of_current_dispatch", "record_matches_result", "exactly_once_execution"},
	},
	{
		Name:   "redispatch-publish-failure-not-rolled-back",
		Origin: "deep: (1) a retryable failure re-dispatches the job, (2) the re-dispatch's publish fails",
		Description: "the rollback after a failed publish is skipped for a re-dispatch (generation above 0): the job " +
			"stays DISPATCHED unpublished and the redelivery gate skips its retry",
		Edits: []Edit{{File: "engine/scheduler.go",
			From: "\tif err := e.bus.Publish(ctx, WorkerSubject(workerID), msg); err != nil {\n\t\treturn e.rollbackDispatch(ctx, job, res.Version, lock, err)\n",
			To: "\tif err := e.bus.Publish(ctx, WorkerSubject(workerID), msg); err != nil {\n" +
				"\t\tif job.DispatchGen > 0 {\n\t\t\treturn e.retry(PhasePublish, e.backoff(job.Attempts), err)\n\t\t}\n" +
				"\t\treturn e.rollbackDispatch(ctx, job, res.Version, lock, err)\n"}},
		Scenario: "swarm",
		Catches:  []string{"dispatch_timeout", "job_terminal", "job_succeeded", "metrics"},
	},
	{
		Name:   "rollback-unfenced",
		Origin: "deep: (1) the publish fails, (2) the replica lost the job's lock before its rollback write (a pause, a slow store)",
		Description: "the rollback to SCHEDULED is written without the lock token: after the lock expired it lands " +
			"under another holder",
		Edits: []Edit{{File: "engine/scheduler.go",
			From: "\t\tTo: StateScheduled, Reason: \"rollback: \" + pubErr.Error(), Fence: lock,\n",
			To:   "\t\tTo: StateScheduled, Reason: \"rollback: \" + pubErr.Error(),\n"}},
		Scenario: "swarm",
		Catches:  []string{"fenced_write", "lock_exclusive", "exactly_once_publish", "exactly_once_execution"},
	},
	{
		Name:   "cancel-between-attempts-dropped",
		Origin: "deep: (1) a retryable failure puts the job in RETRYING, (2) a cancel arrives before its re-dispatch",
		Description: "a cancel of a job between attempts (RETRYING) is acknowledged and dropped, as if the job " +
			"were already over; the job runs again",
		Edits: []Edit{{File: "engine/results.go",
			From: "\t\tcase job.State.Terminal():\n\t\t\treturn nil\n\t\tdefault:\n",
			To:   "\t\tcase job.State.Terminal() || job.State == StateRetrying:\n\t\t\treturn nil\n\t\tdefault:\n"}},
		Scenario: "swarm",
		Catches:  []string{"cancel_applied", "job_lifecycle"},
	},
	{
		Name:   "late-result-revives-timeout",
		Origin: "deep: (1) the job times out (a crash or pause outlasts the dispatch timeout), (2) its result arrives after",
		Description: "TIMEOUT is treated as soft: a result that comes after the timeout is applied, in the handler " +
			"and in the store script",
		Edits: []Edit{
			{File: "engine/results.go",
				From: "\t\tcase job.State.Terminal():\n\t\t\te.metrics.resultIgnored.WithLabelValues(\"terminal\").Inc()\n\t\t\treturn nil\n",
				To:   "\t\tcase job.State.Terminal() && job.State != StateTimeout:\n\t\t\te.metrics.resultIgnored.WithLabelValues(\"terminal\").Inc()\n\t\t\treturn nil\n"},
			{File: "engine/results.go",
				From: "\t\tcase job.State != StateScheduled && job.State != StateDispatched && job.State != StateRunning:\n",
				To:   "\t\tcase job.State != StateScheduled && job.State != StateDispatched && job.State != StateRunning && job.State != StateTimeout:\n"},
			{File: "engine/store.go",
				From: "if terminal[cur] then return {'terminal', cur} end\n",
				To:   "if terminal[cur] and cur ~= 'TIMEOUT' then return {'terminal', cur} end\n"},
			{File: "engine/store.go",
				From: "if not (allowed[cur] and allowed[cur][to]) then return {'forbidden', cur} end\n",
				To:   "if cur ~= 'TIMEOUT' and not (allowed[cur] and allowed[cur][to]) then return {'forbidden', cur} end\n"},
		},
		Scenario: "swarm",
		Catches:  []string{"no_resurrection", "transition_graph", "job_lifecycle"},
	},
}
