package sut

import (
	"strings"
	"testing"
)

// A world's tenant caps are printed with its other options, sorted; a world
// without caps prints what it printed before they existed.
func TestOptionsPrintTenantCaps(t *testing.T) {
	o := Options{TenantMaxActive: map[string]int{"tenant-2": 3, "tenant-1": 1}}
	if got := o.String(); !strings.HasSuffix(got, " tenant_max_active=tenant-1:1,tenant-2:3") {
		t.Fatalf("caps not printed: %s", got)
	}
	if got := (Options{}).String(); strings.Contains(got, "tenant") {
		t.Fatalf("no caps, yet: %s", got)
	}
}
