package search

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// MaxNearest is how many names an error offers as the nearest ones.
const MaxNearest = 3

// Nearest returns the candidates nearest to name, best first, at most
// MaxNearest of them; none when no candidate is near. Case is ignored. A
// candidate is near when it is a few edits away (Damerau–Levenshtein, an
// adjacent swap counting as one edit; one edit for names of up to four
// characters, two up to eight, three beyond) or when it starts with name and
// name has at least three characters (News → Newsletters). Of equally near ones, the shorter and then the alphabetically
// first comes first. Duplicates are listed once.
//
// Folders, operators and accounts use it (internal/store, internal/tools),
// and so can the command line for a mistyped command.
func Nearest(name string, candidates []string) []string {
	type hit struct {
		c    string
		dist int
	}
	n := strings.ToLower(name)
	limit := 3
	switch l := utf8.RuneCountInString(n); {
	case l <= 4:
		limit = 1
	case l <= 8:
		limit = 2
	}
	seen := map[string]bool{}
	var hits []hit
	for _, c := range candidates {
		if seen[c] {
			continue
		}
		seen[c] = true
		lc := strings.ToLower(c)
		d := distance(n, lc)
		if d > limit && utf8.RuneCountInString(n) >= 3 && strings.HasPrefix(lc, n) {
			d = limit // a prefix counts as the farthest near name
		}
		if d <= limit {
			hits = append(hits, hit{c, d})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].dist != hits[j].dist {
			return hits[i].dist < hits[j].dist
		}
		if len(hits[i].c) != len(hits[j].c) {
			return len(hits[i].c) < len(hits[j].c)
		}
		return hits[i].c < hits[j].c
	})
	out := make([]string, 0, min(len(hits), MaxNearest))
	for _, h := range hits[:min(len(hits), MaxNearest)] {
		out = append(out, h.c)
	}
	return out
}

// Closest returns the candidate least distant from name, case ignored (the
// first of equals), however far it is; "" when there is none. Nearest is for
// names a person may have meant; Closest for a short fixed list, such as the
// operators, where naming one is always a help.
func Closest(name string, candidates []string) string {
	best, bestD := "", -1
	n := strings.ToLower(name)
	for _, c := range candidates {
		if d := distance(n, strings.ToLower(c)); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the optimal string alignment distance between a and b, in
// runes: insertions, deletions, substitutions and swaps of two adjacent
// characters each count one.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		// Names this long are not typed by hand; compare them whole.
		if a == b {
			return 0
		}
		return max(len(ra), len(rb))
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
