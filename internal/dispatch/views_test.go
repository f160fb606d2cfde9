package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

type viewKey struct{}

// viewed is a Status handler that says whether its call carries a view, and counts views.
type viewed struct {
	generated.Handlers
	opened *int
}

func (v viewed) OpenView(ctx context.Context) context.Context {
	*v.opened++
	return context.WithValue(ctx, viewKey{}, *v.opened)
}

func (viewed) Status(ctx context.Context, _ *generated.StatusArgs) (*generated.StatusResult, error) {
	n, ok := ctx.Value(viewKey{}).(int)
	if !ok {
		return nil, errors.New("no view")
	}
	return &generated.StatusResult{Version: string(rune('0' + n))}, nil
}

// TestOneViewPerCall: handlers that open views get one, opened once for each call that runs,
// and none for a call refused before its handler (an ungranted scope, invalid arguments).
func TestOneViewPerCall(t *testing.T) {
	opened := 0
	r, err := New(viewed{opened: &opened})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		res, _ := r.Call(context.Background(), generated.ToolStatus, json.RawMessage(`{}`), grantAll())
		if res.IsError || opened != i {
			t.Fatalf("call %d: %+v, %d views opened", i, res, opened)
		}
		var out generated.StatusResult
		if err := json.Unmarshal(res.Structured, &out); err != nil || out.Version != string(rune('0'+i)) {
			t.Fatalf("call %d ran with view %q: %v", i, out.Version, err)
		}
	}
	if res, _ := r.Call(context.Background(), generated.ToolStatus, json.RawMessage(`{"x":1}`), grantAll()); !res.IsError || opened != 2 {
		t.Errorf("an invalid call opened a view (%d) or ran: %+v", opened, res)
	}
	if res, _ := r.Call(context.Background(), generated.ToolStatus, json.RawMessage(`{}`), Grant{}); !res.IsError || opened != 2 {
		t.Errorf("an ungranted call opened a view (%d) or ran: %+v", opened, res)
	}
}
