package imap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/source"
)

// SetFlags adds the flags add and removes the flags remove on the messages uids of folder,
// after checking its UIDVALIDITY. Flags are IMAP flags: the system flags \Seen, \Answered,
// \Flagged and \Draft, or keywords such as $Junk and $NotJunk; \Deleted is refused (only
// Expunge and Move set it, on exactly the messages they remove).
//
// With unchangedSince > 0 on a server with CONDSTORE, a message whose modseq is above it (it
// changed on the server after the caller looked) is left alone and reported in Changed. The
// others get their whole new flag list in one STORE (UNCHANGEDSINCE unchangedSince) per
// distinct list, so that a change another client makes meanwhile is refused by the server,
// not overwritten; a message whose flags afterwards are not exactly what was asked is
// reported in Changed too. Otherwise it sends +FLAGS and -FLAGS, which leave other flags
// alone, and a message is done when it carries every flag of add and none of remove.
//
// Before holds each found message's state read just before the change, After its state
// read after it (for each message done); uids the folder no longer holds are in Gone.
func SetFlags(ctx context.Context, c *imapclient.Client, folder string, uidValidity uint32, uids []uint32, add, remove []string, unchangedSince uint64) (source.Flagged, error) {
	var res source.Flagged
	addF, err := parseFlags(add)
	if err != nil {
		return res, err
	}
	remF, err := parseFlags(remove)
	if err != nil {
		return res, err
	}
	if len(addF) == 0 && len(remF) == 0 {
		return res, errors.New("no flag to add or remove was given")
	}
	for _, f := range addF {
		if containsFlag(remF, f) {
			return res, fmt.Errorf("the flag %s is both to add and to remove; ask for one", f)
		}
	}
	defer closeOnCancel(ctx, c)()
	sel, err := openFolder(ctx, c, folder, uidValidity, false)
	if err != nil {
		return res, err
	}
	if sel.PermanentFlags != nil && !containsFlag(sel.PermanentFlags, imap.FlagWildcard) {
		for _, f := range addF {
			if !containsFlag(sel.PermanentFlags, f) {
				return res, fmt.Errorf("the server does not keep the flag %s on messages in %q, so nothing was changed", f, folder)
			}
		}
	}
	res.Before, err = fetchStates(ctx, c, folder, uidSet(uids))
	if err != nil {
		return res, err
	}
	res.Gone = gone(uids, res.Before)
	res.After = map[uint32]source.MessageState{}
	if len(res.Before) == 0 {
		return res, nil
	}

	guarded := unchangedSince > 0 && c.Caps().Has(imap.CapCondStore)
	var found imap.UIDSet
	expect := map[uint32][]string{} // guarded: the exact flags each message should end with
	groups := map[string]imap.UIDSet{}
	for _, uid := range sortedKeys(res.Before) {
		st := res.Before[uid]
		if guarded && st.ModSeq > unchangedSince {
			res.Changed = append(res.Changed, uid)
			continue
		}
		found.AddNum(imap.UID(uid))
		if guarded {
			want := applyFlags(st.Flags, addF, remF)
			expect[uid] = want
			if !sameFlags(want, st.Flags) {
				key := strings.Join(want, " ")
				set := groups[key]
				set.AddNum(imap.UID(uid))
				groups[key] = set
			}
		}
	}
	if len(found) == 0 {
		return res, nil
	}
	if guarded {
		for _, key := range sortedKeys(groups) {
			var list []imap.Flag
			if key != "" {
				for _, f := range strings.Split(key, " ") {
					list = append(list, imap.Flag(f))
				}
			}
			st := &imap.StoreFlags{Op: imap.StoreFlagsSet, Silent: true, Flags: list}
			if err := c.Store(groups[key], st, &imap.StoreOptions{UnchangedSince: unchangedSince}).Close(); err != nil {
				return res, imapFailed(ctx, fmt.Sprintf("changing the flags of messages in %q", folder), err)
			}
		}
	} else {
		for _, op := range []struct {
			op    imap.StoreFlagsOp
			flags []imap.Flag
		}{{imap.StoreFlagsAdd, addF}, {imap.StoreFlagsDel, remF}} {
			if len(op.flags) == 0 {
				continue
			}
			st := &imap.StoreFlags{Op: op.op, Silent: true, Flags: op.flags}
			if err := c.Store(found, st, nil).Close(); err != nil {
				return res, imapFailed(ctx, fmt.Sprintf("changing the flags of messages in %q", folder), err)
			}
		}
	}

	after, err := fetchStates(ctx, c, folder, found)
	if err != nil {
		return res, err
	}
	for _, uid := range sortedKeys(res.Before) {
		if !found.Contains(imap.UID(uid)) {
			continue
		}
		st, ok := after[uid]
		switch {
		case !ok:
			res.Gone = append(res.Gone, uid) // expunged by another client meanwhile
		case guarded && !sameFlags(st.Flags, expect[uid]), !guarded && !satisfies(st.Flags, addF, remF):
			res.Changed = append(res.Changed, uid)
		default:
			res.After[uid] = st
		}
	}
	slices.Sort(res.Gone)
	slices.Sort(res.Changed)
	return res, nil
}

// systemFlags are the system flags SetFlags sets, as IMAP spells them.
var systemFlags = []imap.Flag{imap.FlagSeen, imap.FlagAnswered, imap.FlagFlagged, imap.FlagDraft}

// parseFlags checks and spells flags: the system flags of systemFlags (in any case), or
// keywords (an IMAP atom without a backslash), without repeats.
func parseFlags(flags []string) ([]imap.Flag, error) {
	var out []imap.Flag
	for _, s := range flags {
		var f imap.Flag
		switch {
		case strings.EqualFold(s, string(imap.FlagDeleted)):
			return nil, errors.New(`the flag \Deleted is not set on its own: delete messages with the delete action, which moves them to Trash`)
		case strings.HasPrefix(s, `\`):
			for _, sf := range systemFlags {
				if strings.EqualFold(s, string(sf)) {
					f = sf
				}
			}
			if f == "" {
				return nil, fmt.Errorf(`%q is not a flag that can be set; use \Seen, \Answered, \Flagged, \Draft or a keyword such as $Junk`, s)
			}
		default:
			if !isAtom(s) {
				return nil, fmt.Errorf("%q is not an IMAP keyword (letters, digits and $-_. without spaces, brackets or quotes)", s)
			}
			f = imap.Flag(s)
		}
		if !containsFlag(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// isAtom reports whether s is an IMAP atom (RFC 3501): printable ASCII without
// atom-specials, and of a sensible length.
func isAtom(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b <= ' ' || b >= 0x7f || strings.IndexByte(`(){%*"\]`, b) >= 0 {
			return false
		}
	}
	return true
}

// applyFlags is have with add added and remove taken away, sorted.
func applyFlags(have []string, add, remove []imap.Flag) []string {
	var out []string
	for _, f := range have {
		if !containsFlag(remove, imap.Flag(f)) && !containsFlag(add, imap.Flag(f)) {
			out = append(out, f)
		}
	}
	for _, f := range add {
		out = append(out, string(f))
	}
	slices.Sort(out)
	return out
}

// satisfies reports whether have holds every flag of add and none of remove.
func satisfies(have []string, add, remove []imap.Flag) bool {
	hf := make([]imap.Flag, len(have))
	for i, f := range have {
		hf[i] = imap.Flag(f)
	}
	for _, f := range add {
		if !containsFlag(hf, f) {
			return false
		}
	}
	for _, f := range remove {
		if containsFlag(hf, f) {
			return false
		}
	}
	return true
}

// sameFlags reports whether a and b hold the same flags, without regard to case or order.
func sameFlags(a, b []string) bool {
	norm := func(fs []string) []string {
		out := make([]string, len(fs))
		for i, f := range fs {
			out[i] = strings.ToLower(f)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	return slices.Equal(norm(a), norm(b))
}

func sortedKeys[K uint32 | string, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// containsFlag reports whether fs holds f, without regard to case (IMAP flags ignore it).
func containsFlag(fs []imap.Flag, f imap.Flag) bool {
	for _, x := range fs {
		if strings.EqualFold(string(x), string(f)) {
			return true
		}
	}
	return false
}
