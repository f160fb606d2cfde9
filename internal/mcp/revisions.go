package mcp

import (
	"strings"

	"github.com/postern-mcp/postern/internal/jsonrpc"
)

// revision is what one protocol revision changes in the answers: every
// difference between revisions is a column here, read where it matters, so
// that no code compares version strings.
type revision struct {
	Version string
	Modern  bool // 2026-07-28: stateless, _meta on every request and result, cache hints, input_required rounds
	Batches bool // JSON arrays of messages are accepted
	// StructuredContent: tools/call results carry structuredContent beside the text.
	StructuredContent bool
	// Titles: serverInfo and tools carry a title, and tools their outputSchema.
	Titles bool
	// Annotations: tools carry annotations (readOnlyHint and the rest).
	Annotations bool
	// Elicitation: the server may ask the person through the client (elicitation/create
	// on a legacy connection, an input_required round in 2026-07-28).
	Elicitation bool
	// ResourceLinks: tools/call results carry resource_link content items after the text.
	ResourceLinks bool
	// ResourceNotFound is the error code of resources/read for an unknown URI.
	ResourceNotFound int
}

// revisions is every revision served, newest first.
var revisions = []revision{
	{Version: Modern, Modern: true, StructuredContent: true, Titles: true, Annotations: true, Elicitation: true, ResourceLinks: true, ResourceNotFound: jsonrpc.CodeInvalidParams},
	{Version: "2025-11-25", StructuredContent: true, Titles: true, Annotations: true, Elicitation: true, ResourceLinks: true, ResourceNotFound: CodeResourceNotFound},
	{Version: "2025-06-18", StructuredContent: true, Titles: true, Annotations: true, Elicitation: true, ResourceLinks: true, ResourceNotFound: CodeResourceNotFound},
	{Version: "2025-03-26", Batches: true, Annotations: true, ResourceNotFound: CodeResourceNotFound},
	{Version: "2024-11-05", ResourceNotFound: CodeResourceNotFound},
}

// Protocol revisions.
const (
	Modern       = "2026-07-28"
	LatestLegacy = "2025-11-25"
)

// LegacyVersions are the initialize-era revisions served, oldest first.
var LegacyVersions = func() (out []string) {
	for i := len(revisions) - 1; i >= 0; i-- {
		if !revisions[i].Modern {
			out = append(out, revisions[i].Version)
		}
	}
	return out
}()

// Supported is every revision served, newest first.
var Supported = func() (out []string) {
	for _, r := range revisions {
		out = append(out, r.Version)
	}
	return out
}()

// noRevision is a legacy connection before initialize: nothing negotiated.
var noRevision = &revision{ResourceNotFound: CodeResourceNotFound}

// lookupRevision returns the revision named v, or nil.
func lookupRevision(v string) *revision {
	for i := range revisions {
		if revisions[i].Version == v {
			return &revisions[i]
		}
	}
	return nil
}

// legacyRevision returns the initialize-era revision named v, or nil.
func legacyRevision(v string) *revision {
	if r := lookupRevision(v); r != nil && !r.Modern {
		return r
	}
	return nil
}

// batchVersions names the revisions that accept batches, for the refusal.
var batchVersions = func() string {
	var out []string
	for _, r := range revisions {
		if r.Batches {
			out = append(out, r.Version)
		}
	}
	return strings.Join(out, ", ")
}()
