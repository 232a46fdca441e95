package sut

import "strings"

// Holds reports whether the stream holds subject.
func (s Stream) Holds(subject string) bool {
	for _, p := range s.Subjects {
		if SubjectMatches(p, subject) {
			return true
		}
	}
	return false
}

// SubjectMatches reports whether subject matches a NATS subject pattern:
// tokens split on '.', '*' matching one token and a final '>' one or more.
func SubjectMatches(pattern, subject string) bool {
	if pattern == subject {
		return true
	}
	for {
		ptok, prest, pmore := strings.Cut(pattern, ".")
		stok, srest, smore := strings.Cut(subject, ".")
		switch {
		case ptok == ">" && !pmore:
			return stok != ""
		case ptok != "*" && ptok != stok:
			return false
		case !pmore || !smore:
			return !pmore && !smore
		}
		pattern, subject = prest, srest
	}
}
