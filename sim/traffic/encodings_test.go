package traffic

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every form a client draws is the same JSON object in other bytes, and
// the draws reach every form; a body that is not an object goes as it is.
func TestReencodedBodiesMeanTheSame(t *testing.T) {
	body := []byte(`{"input":"key-7","priority":2}`)
	var want any
	require.NoError(t, json.Unmarshal(body, &want))
	rng := rand.New(rand.NewPCG(1, 2))
	forms := map[string]bool{}
	for range 200 {
		got := reencode(body, rng)
		var v any
		require.NoError(t, json.Unmarshal(got, &v), "%s", got)
		require.Equal(t, want, v, "%s", got)
		forms[string(got)] = true
	}
	require.Len(t, forms, len(bodyForms), "every form is drawn and each is its own bytes")
	for _, bad := range []string{`["not","an","object"]`, `{"a":1} trailing`, `{"input":`} {
		require.Equal(t, bad, string(reencode([]byte(bad), rng)))
	}
}
