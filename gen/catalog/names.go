package catalog

import "strings"

// initialisms are written in capitals in Go names (Go's own convention).
var initialisms = map[string]string{
	"id": "ID", "ids": "IDs", "url": "URL", "uri": "URI", "imap": "IMAP", "smtp": "SMTP",
	"json": "JSON", "html": "HTML", "tls": "TLS", "mcp": "MCP", "ttl": "TTL", "utc": "UTC",
}

// GoName turns a snake_case catalog name into an exported Go name: mail_search → MailSearch.
func GoName(snake string) string {
	var b strings.Builder
	for _, part := range strings.Split(snake, "_") {
		if part == "" {
			continue
		}
		if up, ok := initialisms[part]; ok {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// ReservedTypeSuffixes and names the generated package uses for itself.
var reservedTypeNames = map[string]bool{"Handlers": true, "Action": true, "PendingCommit": true}

func reservedTypeName(name string) bool {
	return reservedTypeNames[name] || strings.HasSuffix(name, "Handlers") || strings.HasSuffix(name, "Spec") || strings.HasSuffix(name, "Args") || strings.HasSuffix(name, SchemaFileSuffix)
}

// SchemaFileSuffix ends the name of the generated constant that holds the path
// of a schema_file type's JSON Schema inside generated.Files: RuleSchemaFile.
const SchemaFileSuffix = "SchemaFile"
