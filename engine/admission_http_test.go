package engine

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// admPost sends POST /workflows/{wf}/runs; headers maps a header to its values
// (several values send the header several times).
func admPost(t *testing.T, h http.Handler, wf, body string, headers map[string][]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/workflows/"+wf+"/runs", strings.NewReader(body))
	for name, values := range headers {
		for _, v := range values {
			req.Header.Add(name, v)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// admReply decodes a reply strictly: exactly the fields of one reply shape.
func admReply(t *testing.T, rec *httptest.ResponseRecorder) map[string]string {
	t.Helper()
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var m map[string]string
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &m), rec.Body.String())
	return m
}

func orgKey(org, key string) map[string][]string {
	h := map[string][]string{}
	if org != "" {
		h["X-Org-ID"] = []string{org}
	}
	if key != "" {
		h["Idempotency-Key"] = []string{key}
	}
	return h
}

func TestAdmissionHTTPStartRun(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env)
		h := ta.Routes()

		rec := admPost(t, h, admWF, `{ "prompt": "hi",  "n": 1 }`, orgKey(admOrg, "k1"))
		require.Equal(t, http.StatusOK, rec.Code)
		reply := admReply(t, rec)
		require.Len(t, reply, 1, "200 carries only run_id: %v", reply)
		runID := reply["run_id"]
		require.True(t, isRunID(runID), runID)
		require.Empty(t, rec.Header().Get("Idempotent-Replayed"))
		run := ta.run(t, runID)
		require.Equal(t, `{"prompt":"hi","n":1}`, run["payload"], "stored compact")
		require.Equal(t, payloadFingerprint([]byte(`{"prompt":"hi","n":1}`)), run["fingerprint"])

		// Whitespace is not part of the request's identity.
		rec = admPost(t, h, admWF, "{\"prompt\":\"hi\",\n\t\"n\":1}", orgKey(admOrg, "k1"))
		require.Equal(t, http.StatusOK, rec.Code)
		require.Equal(t, runID, admReply(t, rec)["run_id"])
		require.Equal(t, "true", rec.Header().Get("Idempotent-Replayed"))

		// A change of value is.
		rec = admPost(t, h, admWF, `{"prompt":"hi","n":2}`, orgKey(admOrg, "k1"))
		require.Equal(t, http.StatusConflict, rec.Code)
		require.Equal(t, map[string]string{"error": "idempotency key reused with a different payload"}, admReply(t, rec))

		require.Equal(t, []string{runID}, ta.active(t))
	})
}

func TestAdmissionHTTPRejections(t *testing.T) {
	long := strings.Repeat("k", 256)
	cases := []struct {
		name    string
		method  string
		wf      string
		body    string
		headers map[string][]string
		setup   func(t *testing.T, ta *testAdmission)
		want    int
		wantMsg string
	}{
		{name: "missing org", body: "{}", headers: orgKey("", "k"), want: http.StatusBadRequest,
			wantMsg: "X-Org-ID header required"},
		{name: "empty key", body: "{}", headers: map[string][]string{"X-Org-ID": {admOrg}, "Idempotency-Key": {""}},
			want: http.StatusBadRequest, wantMsg: "Idempotency-Key header is empty"},
		{name: "256-byte key", body: "{}", headers: orgKey(admOrg, long), want: http.StatusBadRequest,
			wantMsg: "idempotency key longer than 255 bytes"},
		{name: "two keys", body: "{}", headers: map[string][]string{"X-Org-ID": {admOrg}, "Idempotency-Key": {"a", "b"}},
			want: http.StatusBadRequest},
		{name: "malformed JSON", body: `{"a":`, headers: orgKey(admOrg, "k"), want: http.StatusBadRequest,
			wantMsg: "request body must be a JSON object"},
		{name: "JSON array", body: `[1]`, headers: orgKey(admOrg, "k"), want: http.StatusBadRequest},
		{name: "two JSON values", body: `{} {}`, headers: orgKey(admOrg, "k"), want: http.StatusBadRequest},
		{name: "empty body", body: ``, headers: orgKey(admOrg, "k"), want: http.StatusBadRequest},
		{name: "body too large", body: `{"a":"` + strings.Repeat("x", 2<<20) + `"}`, headers: orgKey(admOrg, "k"),
			want: http.StatusRequestEntityTooLarge},
		{name: "unknown workflow", wf: "nope", body: "{}", headers: orgKey(admOrg, "k"), want: http.StatusNotFound,
			wantMsg: "workflow not found"},
		{name: "key in flight", body: "{}", headers: orgKey(admOrg, "k"), want: http.StatusConflict,
			wantMsg: "idempotency key in flight", setup: func(t *testing.T, ta *testAdmission) {
				ta.crashAfterReserve(t, "k", "{}")
			}},
		{name: "limit reached", body: "{}", headers: orgKey(admOrg, "k"), want: http.StatusTooManyRequests,
			wantMsg: "max concurrent runs reached", setup: func(t *testing.T, ta *testAdmission) {
				ta.setLimit(t, 1)
				ta.mustStart(t, "", "{}")
			}},
		{name: "GET is not allowed", method: http.MethodGet, body: "{}", headers: orgKey(admOrg, ""),
			want: http.StatusMethodNotAllowed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, env *testEnv) {
				ta := newTestAdmission(t, env)
				if tc.setup != nil {
					tc.setup(t, ta)
				}
				runsBefore := ta.runCount(t)
				wf := tc.wf
				if wf == "" {
					wf = admWF
				}
				method := tc.method
				if method == "" {
					method = http.MethodPost
				}
				req := httptest.NewRequest(method, "/workflows/"+wf+"/runs", strings.NewReader(tc.body))
				for name, values := range tc.headers {
					for _, v := range values {
						req.Header.Add(name, v)
					}
				}
				rec := httptest.NewRecorder()

				ta.Routes().ServeHTTP(rec, req)

				require.Equal(t, tc.want, rec.Code, rec.Body.String())
				require.Equal(t, runsBefore, ta.runCount(t), "no run created")
				if tc.want == http.StatusMethodNotAllowed {
					return // the mux's own reply
				}
				reply := admReply(t, rec)
				require.NotEmpty(t, reply["error"])
				require.NotContains(t, reply, "run_id")
				if tc.wantMsg != "" {
					require.Equal(t, tc.wantMsg, reply["error"])
				}
				if tc.want == http.StatusTooManyRequests {
					require.Equal(t, "1", rec.Header().Get("Retry-After"))
				}
				require.Equal(t, 1.0, ta.admissions(tc.want), "counted by code")
				if tc.want != http.StatusConflict {
					require.Empty(t, ta.reservation(t, "k"), "the key stays free")
				}
			})
		})
	}
}

func TestAdmissionHTTPReplyAfterCrashTakeover(t *testing.T) {
	forEachBackend(t, func(t *testing.T, env *testEnv) {
		ta := newTestAdmission(t, env)
		crashed := ta.crashAfterReserve(t, "k", `{"a":1}`)
		env.clock.Advance(ta.cfg.StaleReservationAfter)

		rec := admPost(t, ta.Routes(), admWF, `{"a": 1}`, orgKey(admOrg, "k"))

		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		runID := admReply(t, rec)["run_id"]
		require.NotEqual(t, crashed.value, ta.reservation(t, "k"))
		require.Equal(t, runID, ta.reservedRunID(t, "k"))
		require.NoError(t, ta.CompleteRun(context.Background(), admOrg, runID, RunSucceeded))
	})
}
