package source

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestSessionIsItsParts: Session is made of the small interfaces and keeps every action its
// callers use, so that a kind can implement only the parts its capabilities say while the
// callers of a Session compile unchanged.
func TestSessionIsItsParts(t *testing.T) {
	names := func(iface any) []string {
		typ := reflect.TypeOf(iface).Elem()
		var out []string
		for i := 0; i < typ.NumMethod(); i++ {
			out = append(out, typ.Method(i).Name)
		}
		return out
	}
	session := names((*Session)(nil))
	want := "Append Close Expunge Fetch FindRole Move Remove RoleFolder SetFlags State"
	if got := strings.Join(session, " "); got != want {
		t.Errorf("Session's actions: %s; want %s", got, want)
	}
	var parts []string
	for _, p := range []any{(*Roles)(nil), (*Messages)(nil), (*Flagger)(nil), (*Mover)(nil)} {
		parts = append(parts, names(p)...)
	}
	parts = append(parts, "Close")
	sort.Strings(parts)
	if got := strings.Join(parts, " "); got != want {
		t.Errorf("the parts' actions and Close: %s; want Session's, %s", got, want)
	}
}
