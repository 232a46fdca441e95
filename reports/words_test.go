package reports

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBreakableBreaksBetweenWords(t *testing.T) {
	require.Equal(t, `<span class="w">Ack<wbr>Lost</span> <span class="w">Worker<wbr>Retryable<wbr>After<wbr>Success<wbr>(p=<wbr>0.<wbr>2)</span>`,
		string(breakable("AckLost WorkerRetryableAfterSuccess(p=0.2)")), "a long word gets its marks; a short one too")
	require.Equal(t, `<span class="w">ack_<wbr>lost</span> 3`, string(breakable("ack_lost 3")))
	require.Equal(t, `<span class="w">&lt;script&gt;alert<wbr>(1)</span>`, string(breakable("<script>alert(1)")), "escaped, then marked")
	require.Equal(t, "", string(breakable("")))
	require.Equal(t, "PENDING x", string(breakable("PENDING x")), "no break inside an upper-case word")
}
