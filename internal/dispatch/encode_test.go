package dispatch

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

// extraShapes are result shapes the catalog does not use yet, so that the
// encoder is checked on them too: nested lists, pointers, omitempty of each kind.
type extraShapes struct {
	Lists  [][]string       `json:"lists"`
	Rows   []*extraRow      `json:"rows,omitempty"`
	Ptr    *string          `json:"ptr"`
	PtrRow *extraRow        `json:"ptr_row,omitempty"`
	N      int64            `json:"n,omitempty"`
	U      uint32           `json:"u"`
	OK     bool             `json:"ok,omitempty"`
	Mixed  []extraRow       `json:"mixed"`
	Deep   [][]extraRow     `json:"deep,omitempty"`
	Self   *extraShapes     `json:"self,omitempty"`
	Skip   string           `json:"-"`
	hidden string           //nolint:unused // unexported: never encoded
	Named  extraNamedString `json:"named"`
	Nums   []int            `json:"nums"`
}

// extraWithMap holds a kind the plans leave to encoding/json.
type extraWithMap struct {
	Map map[string]string `json:"map,omitempty"`
	Row extraRow          `json:"row"`
}

type extraRow struct {
	A string   `json:"a"`
	B []string `json:"b,omitempty"`
	C *int     `json:"c"`
}

type extraNamedString string

// resultTypes are the types every tool returns, read from the Handlers interface.
func resultTypes() []reflect.Type {
	var out []reflect.Type
	seen := map[reflect.Type]bool{}
	for _, spec := range generated.Tools {
		if t := reflect.TypeOf(spec.NewResult()); !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return append(out, reflect.TypeFor[*extraShapes](), reflect.TypeFor[*extraRow](), reflect.TypeFor[*extraWithMap]())
}

var tricky = []string{"", "plain", "two\nlines\n", "  spaced \t out  ", "<b>&amp;</b>", "quote \" back \\",
	"caf\u00e9 \u65e5\u672c", "\u2028sep", "tab\there", "\n", "trailing\n\n", "x: y; z", "(paren)", "a, b"}

// fill sets v to random contents drawn from r, to depth levels of nesting.
func fill(v reflect.Value, r *rand.Rand, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(tricky[r.IntN(len(tricky))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(r.IntN(5)) - 1)
	case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(r.IntN(3)))
	case reflect.Pointer:
		if depth > 0 && r.IntN(3) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem(), r, depth-1)
		}
	case reflect.Slice:
		switch r.IntN(4) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			if depth > 0 {
				n := 1 + r.IntN(3)
				v.Set(reflect.MakeSlice(v.Type(), n, n))
				for i := 0; i < n; i++ {
					fill(v.Index(i), r, depth-1)
				}
			}
		}
	case reflect.Map:
		if r.IntN(2) == 0 {
			v.Set(reflect.ValueOf(map[string]string{"k": tricky[r.IntN(len(tricky))]}).Convert(v.Type()))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).CanSet() {
				fill(v.Field(i), r, depth)
			}
		}
	}
}

// FuzzEncodeSameAsMarshalRender: for every tool's result type, random values
// encode to exactly what json.Marshal writes, with exactly the text Render
// makes of that JSON.
func FuzzEncodeSameAsMarshalRender(f *testing.F) {
	for i := range 40 {
		f.Add(uint64(i), uint8(i))
	}
	types := resultTypes()
	f.Fuzz(func(t *testing.T, seed uint64, which uint8) {
		typ := types[int(which)%len(types)]
		r := rand.New(rand.NewPCG(seed, uint64(which)))
		v := reflect.New(typ.Elem())
		fill(v.Elem(), r, 3)
		want, err := json.Marshal(v.Interface())
		if err != nil {
			t.Fatal(err)
		}
		got, text, err := encode(v.Interface())
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("%v:\n got %s\nwant %s", typ, got, want)
		}
		if wantText := Render(want); text != wantText {
			t.Fatalf("%v %s:\n got %q\nwant %q", typ, want, text, wantText)
		}
	})
}

// TestEncodePlans: every tool's result type is encoded by a plan, not by the
// encoding/json fallback (which would be correct, and slow).
func TestEncodePlans(t *testing.T) {
	for _, typ := range resultTypes() {
		if typ == reflect.TypeFor[*extraWithMap]() {
			if !planOf(typ).fallback {
				t.Errorf("%v holds a map and should fall back to encoding/json", typ)
			}
			continue
		}
		if planOf(typ).fallback {
			t.Errorf("%v falls back to encoding/json; teach the encoder its kind", typ)
		}
	}
}
