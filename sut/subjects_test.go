package sut

import "testing"

func TestSubjectMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, subject string
		want             bool
	}{
		{"a.b", "a.b", true},
		{"a.b", "a.c", false},
		{"a.*", "a.b", true},
		{"a.*", "a.b.c", false},
		{"a.*", "a", false},
		{"a.>", "a.b.c", true},
		{"a.>", "a", false},
		{">", "a", true},
		{"worker.*.jobs", "worker.w1.jobs", true},
		{"worker.*.jobs", "worker.w1.other", false},
		{"a.b.c", "a.b", false},
	} {
		if got := SubjectMatches(c.pattern, c.subject); got != c.want {
			t.Errorf("SubjectMatches(%q, %q) = %t, want %t", c.pattern, c.subject, got, c.want)
		}
	}
}
