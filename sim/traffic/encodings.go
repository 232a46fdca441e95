package traffic

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
)

// bodyForms are the ways real clients write one JSON object: the compact
// form, spaces after separators, an indented body with a final newline, the
// fields in another order, and a character of a string escaped. Each is the
// same request; a system that tells them apart refuses a retry of an intent
// it already holds.
var bodyForms = []func(fields []field) string{
	func(f []field) string { return renderObject(f, ":", ",", "{", "}") },
	func(f []field) string { return renderObject(f, ": ", ", ", "{ ", " }") },
	func(f []field) string { return renderObject(f, ": ", ",\n  ", "{\n  ", "\n}\n") },
	func(f []field) string { return renderObject(reversed(f), ":", ",", "{", "}") },
	func(f []field) string { return renderObject(escapedOnce(f), ":", ",", "{", "}") },
}

// field is one member of a JSON object, its value as written.
type field struct {
	name  string
	value json.RawMessage
}

// reencode writes body, a JSON object, in a form drawn from rng. A body that
// is not a flat JSON object (the workload's invalid requests) is sent as it
// is.
func reencode(body []byte, rng *rand.Rand) []byte {
	fields, ok := objectFields(body)
	if !ok {
		return body
	}
	return []byte(bodyForms[rng.IntN(len(bodyForms))](fields))
}

// objectFields reads an object's members in the order they were written.
func objectFields(body []byte) ([]field, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		name, isName := tok.(string)
		if err != nil || !isName {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, field{name, v})
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') || dec.More() {
		return nil, false
	}
	return out, true
}

func renderObject(fields []field, colon, comma, open, close string) string {
	var b strings.Builder
	b.WriteString(open)
	for i, f := range fields {
		if i > 0 {
			b.WriteString(comma)
		}
		name, _ := json.Marshal(f.name)
		b.Write(name)
		b.WriteString(colon)
		b.Write(f.value)
	}
	b.WriteString(close)
	return b.String()
}

func reversed(fields []field) []field {
	out := make([]field, len(fields))
	for i, f := range fields {
		out[len(fields)-1-i] = f
	}
	return out
}

// escapedOnce writes the first '-' of a string value as \u002d, as an
// encoder that escapes more than it must would.
func escapedOnce(fields []field) []field {
	out := make([]field, len(fields))
	copy(out, fields)
	for i, f := range out {
		if len(f.value) > 0 && f.value[0] == '"' && bytes.IndexByte(f.value, '-') > 0 {
			out[i].value = bytes.Replace(f.value, []byte("-"), []byte(`\u002d`), 1)
			break
		}
	}
	return out
}
