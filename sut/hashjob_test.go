package sut

import (
	"testing"
	"time"
)

// mapView is a View over one hash.
type mapView map[string]map[string]string

func (m mapView) Keys() []string                          { return nil }
func (m mapView) Get(string) (string, bool)               { return "", false }
func (m mapView) Hash(k string) (map[string]string, bool) { h, ok := m[k]; return h, ok }
func (m mapView) Field(k, f string) string                { return m[k][f] }
func (m mapView) Members(string) []string                 { return nil }
func (m mapView) ZScores(string) map[string]float64       { return nil }
func (m mapView) TTL(string) time.Duration                { return 0 }

func TestHashJobReadsTheNamedFields(t *testing.T) {
	v := mapView{"job:1": {"st": "RUNNING", "ver": "7", "att": "3", "gen": "2", "did": "d", "res": "r", "err": "no_workers"}}
	h := HashJob{State: "st", Version: "ver", Attempts: "att", Gen: "gen", DispatchID: "did", ResultPtr: "res", Cause: "err"}
	got := h.Read(v, "job:1")
	want := JobFact{State: "RUNNING", Version: 7, Attempts: 3, Gen: 2, DispatchID: "d", ResultPtr: "r", Cause: "no_workers"}
	if got != want {
		t.Fatalf("Read = %+v, want %+v", got, want)
	}
	if got := h.Read(v, "job:none"); got != (JobFact{}) {
		t.Fatalf("a missing job reads as %+v", got)
	}
}

func TestJobMessage(t *testing.T) {
	got, ok := JobMessage([]byte(`{"job_id":"j-1","dispatch_gen":3,"result_ptr":"mem://r"}`))
	if want := (MessageFact{JobID: "j-1", Gen: 3, ResultPtr: "mem://r"}); !ok || got != want {
		t.Fatalf("got %+v %v, want %+v", got, ok, want)
	}
	if _, ok := JobMessage([]byte(`not json`)); ok {
		t.Fatal("garbage is no job message")
	}
}
