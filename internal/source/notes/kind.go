package notes

import "github.com/postern-mcp/postern/internal/source"

// KindName is the name of the notes row of the table of kinds, and of the configuration's
// section that lists the notes folders ([notes]).
const KindName = "notes"

// Kind is the row of the table of kinds for the notes folders. No account has it: the [notes]
// section lists the folders, which Refresh indexes.
var Kind = source.Kind{
	Name:    KindName,
	Noun:    "the notes folders",
	Caps:    source.Notes,
	Section: KindName,
}
