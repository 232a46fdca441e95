package simrun

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A verbose run prints the tenant caps with the system's options and the
// workload's tenants and malformed requests, before the seed runs.
func TestVerboseRunPrintsTenantCapsAndRequests(t *testing.T) {
	r := simrun(t, simrunBin, "run", "--scenario", "tenants", "--seed", "3400", "-j", "1", "-v")
	require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	out := r.stdout + r.stderr
	require.Contains(t, out, "tenant_max_active=tenant-1:1,tenant-2:2")
	require.Contains(t, out, "requests:       tenants=3 invalid_rate=0.10")
}
