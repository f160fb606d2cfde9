package source

import "context"

// ScriptStore is an account's server-side filter scripts (Sieve over ManageSieve, RFC 5804),
// for a kind whose server offers them. Its errors are sentences a person can act on; a script
// the server refuses comes back with the server's reason (where the script is wrong).
// Nothing in it deletes, renames or deactivates a script.
type ScriptStore interface {
	// Scripts lists the scripts on the server and names the active one ("" when none is).
	Scripts(ctx context.Context) (scripts []Script, active string, err error)
	// Get returns a script's text.
	Get(ctx context.Context, name string) (string, error)
	// Put stores text as the script name, replacing one of that name (an active one stays
	// active). The server checks it first and refuses a script with errors.
	Put(ctx context.Context, name, text string) error
	// Activate makes name the active script (the one the server runs on delivery).
	Activate(ctx context.Context, name string) error
	// Check asks the server whether text compiles, storing nothing.
	Check(ctx context.Context, text string) error
	// Extensions are the Sieve extensions the server's scripts may require ("fileinto",
	// "imap4flags", "body", …), as it announced them.
	Extensions() []string
	// Close logs out.
	Close()
}

// Script is one script on the server.
type Script struct {
	Name   string
	Active bool
}
