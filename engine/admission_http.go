package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Routes serves the run admission API:
//
//	POST /workflows/{id}/runs   headers X-Org-ID (required), Idempotency-Key (optional)
//	                            body: a JSON object, the run's input
//
// Replies are JSON: 200 {"run_id": "..."}, otherwise {"error": "..."}.
func (a *Admission) Routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /workflows/{id}/runs", a.handleStartRun)
	return mux
}

type startRunReply struct {
	RunID string `json:"run_id"`
}

type errorReply struct {
	Error string `json:"error"`
}

func (a *Admission) handleStartRun(w http.ResponseWriter, r *http.Request) {
	res := a.startRunHTTP(w, r)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if res.Replayed {
		h.Set("Idempotent-Replayed", "true")
	}
	if res.Status == http.StatusTooManyRequests || res.Status == http.StatusServiceUnavailable {
		h.Set("Retry-After", "1")
	}
	w.WriteHeader(res.Status)
	var body any = errorReply{Error: res.Message}
	if res.Status == http.StatusOK {
		body = startRunReply{RunID: res.RunID}
	}
	if err := json.NewEncoder(w).Encode(body); err != nil {
		a.log.Debug("write run admission reply", "err", err)
	}
}

// startRunHTTP checks what only HTTP carries (headers, body) and hands the rest to
// StartRun.
func (a *Admission) startRunHTTP(w http.ResponseWriter, r *http.Request) AdmissionResult {
	badRequest := func(msg string) AdmissionResult {
		return a.record(rejected(http.StatusBadRequest, msg,
			fmt.Errorf("decode run request: %w: %s", ErrInvalidRunRequest, msg)))
	}
	org := r.Header.Get("X-Org-ID")
	if org == "" {
		return badRequest("X-Org-ID header required")
	}
	var key string
	switch keys := r.Header.Values("Idempotency-Key"); len(keys) {
	case 0:
	case 1:
		// A present but empty key is a client bug, not a request without a key.
		if keys[0] == "" {
			return badRequest("Idempotency-Key header is empty")
		}
		if len(keys[0]) > MaxIdempotencyKeyBytes {
			return badRequest(fmt.Sprintf("idempotency key longer than %d bytes", MaxIdempotencyKeyBytes))
		}
		key = keys[0]
	default:
		return badRequest("more than one Idempotency-Key header")
	}

	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.cfg.MaxRequestBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return a.record(rejected(http.StatusRequestEntityTooLarge, "request body too large",
				fmt.Errorf("read run request: %w", err)))
		}
		return badRequest("request body unreadable")
	}
	// The fingerprint is over the compact form, so a retry that only changes
	// whitespace is still the same request. Key order still matters.
	var body bytes.Buffer
	if err := json.Compact(&body, raw); err != nil || body.Len() == 0 || body.Bytes()[0] != '{' {
		return badRequest("request body must be a JSON object")
	}
	return a.StartRun(r.Context(), org, r.PathValue("id"), key, body.Bytes())
}
