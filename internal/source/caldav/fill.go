package caldav

import (
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

// Fill sets o's UID, Kind and query columns from o.Data (an iCalendar object or a vCard), or
// says why it cannot be read: source.FillObject, which a folder of .ics files reads its
// objects with too.
func Fill(o *store.Object) error { return source.FillObject(o) }
