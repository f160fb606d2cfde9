package catalog

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// PagesDir is the folder, inside the catalog folder, of the docs pages
// written in Markdown: NAME.md, whose first line is "# Title".
const PagesDir = "pages"

// Page is a docs page written in Markdown (catalog/pages/NAME.md): the
// generator writes it into generated/docs and the docs tool serves it after
// the fixed pages.
type Page struct {
	Name  string
	Title string
	// Text is the whole file, its title line included.
	Text string
	Pos  Pos
}

var pageNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// loadPages reads dir/pages/*.md, sorted by name.
func loadPages(dir string) ([]*Page, Problems) {
	names, err := filepath.Glob(filepath.Join(dir, PagesDir, "*.md"))
	if err != nil {
		return nil, nil
	}
	sort.Strings(names)
	var pages []*Page
	var ps Problems
	for _, path := range names {
		base := filepath.Base(path)
		pos := Pos{filepath.ToSlash(filepath.Join(filepath.Base(dir), PagesDir, base)), 1}
		name := strings.TrimSuffix(base, ".md")
		b, err := os.ReadFile(path)
		if err != nil {
			ps = append(ps, Problem{pos, err.Error()})
			continue
		}
		if !pageNameRE.MatchString(name) {
			ps = append(ps, Problem{pos, "page name " + name + " must be lower-case letters, digits, - and _, starting with a letter"})
			continue
		}
		text := strings.ReplaceAll(string(b), "\r\n", "\n")
		first, _, _ := strings.Cut(text, "\n")
		title := strings.TrimSpace(strings.TrimPrefix(first, "# "))
		if !strings.HasPrefix(first, "# ") || title == "" {
			ps = append(ps, Problem{pos, "page " + name + ": the first line must be its title, as \"# Title\""})
			continue
		}
		pages = append(pages, &Page{Name: name, Title: title, Text: text, Pos: pos})
	}
	return pages, ps
}

// docsPageRE finds a description's pointer to a docs page: "docs page NAME"
// (the name may stand in backquotes).
var docsPageRE = regexp.MustCompile("docs page `?([A-Za-z0-9_-]+)`?")

// PageNames is every docs page the docs tool serves, in its order: the fixed
// pages, the Markdown pages, the pages of types.
func (c *Catalog) PageNames() []string {
	var out []string
	for _, w := range FixedDocPages {
		out = append(out, w.Name)
	}
	for _, p := range c.Pages {
		out = append(out, p.Name)
	}
	sorted := append([]*Type(nil), c.Types...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, t := range sorted {
		if t.DocPage != nil {
			out = append(out, t.DocPage.Name)
		}
	}
	return out
}

// lintPageRefs refuses a description that points to a docs page that does not exist.
func lintPageRefs(c *Catalog, add func(Pos, string, ...any)) {
	pages := map[string]bool{}
	for _, n := range c.PageNames() {
		pages[n] = true
	}
	check := func(pos Pos, where, text string) {
		for _, m := range docsPageRE.FindAllStringSubmatch(text, -1) {
			if !pages[m[1]] {
				add(pos, "%s points to docs page %s, which does not exist; the pages are %s", where, m[1], strings.Join(c.PageNames(), ", "))
			}
		}
	}
	for _, t := range c.Tools {
		check(t.Pos, "tool "+t.Name+": the description", t.Description)
		for _, p := range t.Input {
			check(p.Pos, "tool "+t.Name+", argument "+p.Name+": the description", p.Description)
		}
	}
	for _, t := range c.Types {
		check(t.Pos, "type "+t.Name+": the description", t.Description)
		for _, f := range t.Fields {
			if f.From == t.Name {
				check(f.Pos, "type "+t.Name+", field "+f.Name+": the description", f.Description)
			}
		}
	}
}
