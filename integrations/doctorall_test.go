package integrations

import (
	"context"
	"errors"
	"testing"
)

// Without hosts named every host is checked; each target is prepared before its check, and a
// preparation that fails stops doctor with its error.
func TestDoctorAll(t *testing.T) {
	e := testEnv(t)
	base := testOptions(e, "/nonexistent/postern")
	targets := func(h *Host) []Target { return Targets(nil, h, e.Project, Select{}, base) }
	prepared := 0
	prepare := func(Target) error { prepared++; return nil }
	reports, _, err := DoctorAll(context.Background(), nil, e, base.Config, targets, prepare)
	if err != nil || len(reports) != len(Hosts()) || prepared != len(reports) {
		t.Fatalf("every host: %d reports, %d prepared, %v", len(reports), prepared, err)
	}
	h := mustHost(t, "cursor")
	reports, ok, err := DoctorAll(context.Background(), []*Host{h}, e, base.Config, targets, prepare)
	if err != nil || len(reports) != 1 || reports[0].Host != h.ID || ok != reports[0].OK {
		t.Fatalf("one host named: %+v %v %v", reports, ok, err)
	}
	boom := errors.New("no token")
	if _, _, err := DoctorAll(context.Background(), []*Host{h}, e, base.Config, targets, func(Target) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("a failed preparation: %v", err)
	}
}
