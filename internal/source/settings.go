package source

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/postern-mcp/postern/internal/config"
)

// A kind's settings are a struct of its own (imap.Settings, maildir.Settings) whose fields
// carry the toml keys of the configuration's account fields the kind reads; the kind's
// SettingsOf fills one from a configured account with Settle, which copies those fields; a field
// that belongs to another kind is ignored and warned of (Strays). The configuration file keeps one [[accounts]]
// table for every kind: config.Account is how the file is read, a kind's settings how the kind
// reads it.

// Common are the keys every account may have whatever its kind: its name and kind, and who the
// person is on it (the From of what they write, their other addresses), which mail and
// calendar invitations alike read.
var Common = []string{"name", "kind", "address", "display_name", "aliases"}

// owners is, for each key, the nouns of the kinds whose settings have it, in the order of the
// table (Own).
var owners struct {
	sync.Mutex
	m map[string][]string
}

// Own records that the kind noun ("an IMAP account") reads the keys of settings (a value of
// its settings struct), so that a sentence about a key in an account of another kind can say
// whose it is. The table of kinds calls it for each row when it is loaded.
func Own(noun string, settings any) {
	owners.Lock()
	defer owners.Unlock()
	if owners.m == nil {
		owners.m = map[string][]string{}
	}
	for _, k := range Keys(settings) {
		if !contains(owners.m[k], noun) {
			owners.m[k] = append(owners.m[k], noun)
		}
	}
}

// Keys is the toml keys of the fields of settings, a struct or a pointer to one.
func Keys(settings any) []string {
	t := reflect.TypeOf(settings)
	if t == nil {
		return nil
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if k := key(t.Field(i)); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// key is the toml key of a struct field, "" when it has none.
func key(f reflect.StructField) string {
	k, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if k == "-" {
		return ""
	}
	return k
}

// Settle copies into *settings (a pointer to a kind's settings struct) the fields of a whose
// toml keys its fields carry. A field of a that the kind does not read is not refused: a file
// that loaded before must still load (account add writes some fields for an account of any
// kind, and a person may keep a field after changing an account's kind); Strays warns of each.
// The error is for a kind whose settings cannot be made; none can fail today.
func Settle(a config.Account, noun string, settings any) error {
	fill(a, settings)
	return nil
}

// Strays are the warnings, one sentence each without the account's name, of the keys a holds
// a value for that the kind noun, whose settings is a value of its settings struct, does not
// read (and that not every account has, Common): postern ignores them, and postern config
// check and postern status say so.
func Strays(a config.Account, noun string, settings any) []string {
	dst := reflect.New(reflect.TypeOf(settings))
	var out []string
	for _, k := range fill(a, dst.Interface()) {
		if o := ownersOf(k); o != "" {
			out = append(out, fmt.Sprintf("%s is a setting of %s only, not of %s, so postern ignores it; remove it from the account", k, o, noun))
		} else {
			out = append(out, fmt.Sprintf("%s has no setting %s, so postern ignores it; remove it from the account", noun, k))
		}
	}
	return out
}

// ownersOf names the kinds whose setting key is ("an IMAP account or a CalDAV/CardDAV
// account"), "" when no kind of the table reads it.
func ownersOf(k string) string {
	owners.Lock()
	nouns := append([]string(nil), owners.m[k]...)
	owners.Unlock()
	if len(nouns) < 2 {
		return strings.Join(nouns, "")
	}
	return strings.Join(nouns[:len(nouns)-1], ", ") + " or " + nouns[len(nouns)-1]
}

// fill copies into *settings the fields of a whose keys its fields carry, and returns the keys
// a holds a value for that settings lacks and that are not Common, in the order of the file's
// fields.
func fill(a config.Account, settings any) (stray []string) {
	dst := reflect.ValueOf(settings).Elem()
	own := map[string]int{}
	for i := 0; i < dst.NumField(); i++ {
		if k := key(dst.Type().Field(i)); k != "" {
			own[k] = i
		}
	}
	src := reflect.ValueOf(a)
	for i := 0; i < src.NumField(); i++ {
		k := key(src.Type().Field(i))
		if k == "" {
			continue
		}
		if j, ok := own[k]; ok {
			v := src.Field(i)
			if v.Kind() == reflect.Slice && !v.IsNil() {
				v = reflect.AppendSlice(reflect.MakeSlice(v.Type(), 0, v.Len()), v) // not a's array
			}
			dst.Field(j).Set(v)
			continue
		}
		if !src.Field(i).IsZero() && !contains(Common, k) {
			stray = append(stray, k)
		}
	}
	return stray
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
