// Package schema is the store's database layout as data: the statements that make a new store
// and, by schema version, those that bring an older one up to date. The store runs them, with
// the steps that need Go (filling new columns from what is stored), when it opens a database.
package schema

import "github.com/postern-mcp/postern/internal/store/notestore"

// Version is the schema a store is brought to on open.
const Version = 18

// Upgrades[v] are the statements that bring a store of schema v to v+1; the store runs its
// Go steps for v (goUpgrades) after them, in the same transaction.
var Upgrades = map[int][]string{
	1: {
		`ALTER TABLE messages ADD COLUMN forged INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE messages ADD COLUMN withheld TEXT NOT NULL DEFAULT ''`,
	},
	// Fewer, larger index merges while mail is added in bulk (FTS5 defaults: 4 and 16).
	2: {
		`INSERT INTO meta_fts(meta_fts, rank) VALUES('automerge', 16)`,
		`INSERT INTO body_fts(body_fts, rank) VALUES('automerge', 16)`,
		`INSERT INTO meta_fts(meta_fts, rank) VALUES('crisismerge', 64)`,
		`INSERT INTO body_fts(body_fts, rank) VALUES('crisismerge', 64)`,
	},
	// The search indexes without prefix indexes (prefix='2 3' tripled the
	// work of every insert for the rare query of a 2- or 3-letter prefix):
	// made anew and filled again by rebuildIndexes.
	3: {
		`DROP TABLE meta_fts`,
		`DROP TABLE body_fts`,
		MetaFTS,
		BodyFTS,
		`INSERT INTO meta_fts(meta_fts, rank) VALUES('automerge', 16)`,
		`INSERT INTO body_fts(body_fts, rank) VALUES('automerge', 16)`,
		`INSERT INTO meta_fts(meta_fts, rank) VALUES('crisismerge', 64)`,
		`INSERT INTO body_fts(body_fts, rank) VALUES('crisismerge', 64)`,
	},
	// The indexes' words in order, read to turn a prefix into the few words
	// it starts (see expandPrefixes); these tables store nothing.
	4: {
		`CREATE VIRTUAL TABLE IF NOT EXISTS meta_terms USING fts5vocab(meta_fts, instance)`,
		`CREATE VIRTUAL TABLE IF NOT EXISTS body_terms USING fts5vocab(body_fts, instance)`,
	},
	// A thread's id is the id of its oldest message (ids are date keys, so the least); a store
	// written before took the first message synced. Each thread is renumbered to its least id,
	// read from a table made first, so that no row reads a thread already renumbered.
	5: {
		`CREATE TEMP TABLE thread_least AS SELECT thread_id AS t, min(id) AS least FROM messages WHERE thread_id <> 0 GROUP BY thread_id`,
		`UPDATE messages SET thread_id = (SELECT least FROM thread_least WHERE t = messages.thread_id)
			WHERE thread_id IN (SELECT t FROM thread_least WHERE least <> t)`,
		`DROP TABLE thread_least`,
	},
	// The action log and the backups of deleted mail (actionlog). They name accounts and
	// folders by name, not by row, so that they outlive a store rebuilt by sync.
	6: {
		`CREATE TABLE IF NOT EXISTS actions(
			id INTEGER PRIMARY KEY,
			at INTEGER NOT NULL,
			tool TEXT NOT NULL,
			what TEXT NOT NULL,
			client TEXT NOT NULL DEFAULT '',
			accounts TEXT NOT NULL DEFAULT '',
			count INTEGER NOT NULL DEFAULT 0,
			undoes INTEGER NOT NULL DEFAULT 0,
			undone_by INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE TABLE IF NOT EXISTS action_items(
			action INTEGER NOT NULL REFERENCES actions(id) ON DELETE CASCADE,
			message INTEGER NOT NULL,
			account TEXT NOT NULL,
			message_id TEXT NOT NULL DEFAULT '',
			subject TEXT NOT NULL DEFAULT '',
			from_folder TEXT NOT NULL,
			from_uidvalidity INTEGER NOT NULL DEFAULT 0,
			from_uid INTEGER NOT NULL DEFAULT 0,
			to_folder TEXT NOT NULL,
			to_uidvalidity INTEGER NOT NULL DEFAULT 0,
			to_uid INTEGER NOT NULL DEFAULT 0,
			flags_before TEXT NOT NULL DEFAULT '',
			flags_after TEXT NOT NULL DEFAULT '',
			backup INTEGER NOT NULL DEFAULT 0
		)`,
		`CREATE INDEX IF NOT EXISTS action_items_action ON action_items(action)`,
		`CREATE TABLE IF NOT EXISTS backups(
			id INTEGER PRIMARY KEY,
			account TEXT NOT NULL,
			folder TEXT NOT NULL,
			message_id TEXT NOT NULL DEFAULT '',
			subject TEXT NOT NULL DEFAULT '',
			from_addr TEXT NOT NULL DEFAULT '',
			date INTEGER NOT NULL DEFAULT 0,
			saved INTEGER NOT NULL,
			size INTEGER NOT NULL DEFAULT 0,
			file TEXT NOT NULL,
			flags TEXT NOT NULL DEFAULT ''
		)`,
	},
	// How far the rules have looked at each folder's new mail (rulestate.go).
	8: {
		`CREATE TABLE IF NOT EXISTS rules_progress(
			folder_id INTEGER PRIMARY KEY REFERENCES folders(id) ON DELETE CASCADE,
			uid INTEGER NOT NULL
		)`,
	},
	// Calendars, task lists and address books, and their objects (davstore).
	9: {
		`CREATE TABLE IF NOT EXISTS collections(
			id INTEGER PRIMARY KEY,
			account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
			url TEXT NOT NULL,
			kind TEXT NOT NULL,
			name TEXT NOT NULL DEFAULT '',
			color TEXT NOT NULL DEFAULT '',
			timezone TEXT NOT NULL DEFAULT '',
			writable INTEGER NOT NULL DEFAULT 0,
			sync_token TEXT NOT NULL DEFAULT '',
			ctag TEXT NOT NULL DEFAULT '',
			UNIQUE(account_id, url)
		)`,
		`CREATE TABLE IF NOT EXISTS dav_objects(
			id INTEGER PRIMARY KEY,
			collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
			href TEXT NOT NULL,
			etag TEXT NOT NULL DEFAULT '',
			uid TEXT NOT NULL DEFAULT '',
			kind TEXT NOT NULL,
			data TEXT NOT NULL,
			summary TEXT NOT NULL DEFAULT '',
			start INTEGER NOT NULL DEFAULT 0,
			end INTEGER NOT NULL DEFAULT 0,
			all_day INTEGER NOT NULL DEFAULT 0,
			recurring INTEGER NOT NULL DEFAULT 0,
			due INTEGER NOT NULL DEFAULT 0,
			status TEXT NOT NULL DEFAULT '',
			search TEXT NOT NULL DEFAULT '',
			UNIQUE(collection_id, href)
		)`,
		`CREATE INDEX IF NOT EXISTS dav_objects_start ON dav_objects(collection_id, kind, start)`,
	},
	// What a sync skipped or changed of one object, until it syncs cleanly (syncwarn).
	16: {SyncWarnings},
	// 11: whether a sender is authenticated, added by addAuthentic (projects.go).
	// The notes of the notes folders and their index (notestore).
	12: notestore.Schema,
	// What the action log did to events and tasks (actionlog): one row per object, with the
	// file of its previous text as the server held it, and the ETags the undo checks.
	14: {
		`CREATE TABLE IF NOT EXISTS dav_action_items(
			action INTEGER NOT NULL REFERENCES actions(id) ON DELETE CASCADE,
			account TEXT NOT NULL,
			kind TEXT NOT NULL,
			collection TEXT NOT NULL,
			collection_name TEXT NOT NULL DEFAULT '',
			href TEXT NOT NULL,
			uid TEXT NOT NULL DEFAULT '',
			summary TEXT NOT NULL DEFAULT '',
			object INTEGER NOT NULL DEFAULT 0,
			had_before INTEGER NOT NULL DEFAULT 0,
			before_file TEXT NOT NULL DEFAULT '',
			before_size INTEGER NOT NULL DEFAULT 0,
			before_etag TEXT NOT NULL DEFAULT '',
			after_etag TEXT NOT NULL DEFAULT ''
		)`,
		`CREATE INDEX IF NOT EXISTS dav_action_items_action ON dav_action_items(action)`,
	},
	// 17: the rows of each action's answer and the previews, added by actionlog.AddRows.
	// 7: the mailing-list columns, added and filled by fillLists (lists.go).
	// 10: the invitation columns, added by addInviteColumns (invite.go).
}

// MetaFTS and BodyFTS are the search indexes: subjects, addresses and attachment names, and
// body text.
const (
	MetaFTS = `CREATE VIRTUAL TABLE IF NOT EXISTS meta_fts USING fts5(
		subject, from_addr, to_addr, cc_addr, attachments,
		content='', contentless_delete=1,
		tokenize='unicode61 remove_diacritics 2')`
	BodyFTS = `CREATE VIRTUAL TABLE IF NOT EXISTS body_fts USING fts5(
		text, content='', contentless_delete=1,
		tokenize='unicode61 remove_diacritics 2')`
)

// Tables are the statements that make a new store (at schema 1, then upgraded).
var Tables = []string{
	`CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)`,
	`CREATE TABLE IF NOT EXISTS accounts(
		id INTEGER PRIMARY KEY,
		name TEXT NOT NULL UNIQUE,
		kind TEXT NOT NULL,
		last_sync INTEGER,
		last_error TEXT
	)`,
	`CREATE TABLE IF NOT EXISTS folders(
		id INTEGER PRIMARY KEY,
		account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
		name TEXT NOT NULL,
		delim TEXT NOT NULL DEFAULT '/',
		role TEXT NOT NULL DEFAULT '',
		uidvalidity INTEGER NOT NULL DEFAULT 0,
		uidnext INTEGER NOT NULL DEFAULT 0,
		highestmodseq INTEGER NOT NULL DEFAULT 0,
		synced_uid INTEGER NOT NULL DEFAULT 0,
		UNIQUE(account_id, name)
	)`,
	`CREATE TABLE IF NOT EXISTS messages(
		id INTEGER PRIMARY KEY,
		account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
		folder_id INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
		uid INTEGER NOT NULL,
		message_id TEXT NOT NULL DEFAULT '',
		in_reply_to TEXT NOT NULL DEFAULT '',
		thread_id INTEGER NOT NULL DEFAULT 0,
		date INTEGER NOT NULL,
		subject TEXT NOT NULL DEFAULT '',
		from_name TEXT NOT NULL DEFAULT '',
		from_email TEXT NOT NULL DEFAULT '',
		to_list TEXT NOT NULL DEFAULT '',
		cc_list TEXT NOT NULL DEFAULT '',
		flags INTEGER NOT NULL DEFAULT 0,
		size INTEGER NOT NULL DEFAULT 0,
		attachments TEXT NOT NULL DEFAULT '',
		modseq INTEGER NOT NULL DEFAULT 0,
		UNIQUE(folder_id, uid)
	)`,
	`CREATE INDEX IF NOT EXISTS messages_folder ON messages(folder_id, id)`,
	`CREATE INDEX IF NOT EXISTS messages_account ON messages(account_id, id)`,
	`CREATE INDEX IF NOT EXISTS messages_msgid ON messages(account_id, message_id)`,
	`CREATE INDEX IF NOT EXISTS messages_thread ON messages(thread_id)`,
	`CREATE INDEX IF NOT EXISTS messages_sender ON messages(from_email)`,
	`CREATE TABLE IF NOT EXISTS refs(
		message INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
		ref TEXT NOT NULL
	)`,
	`CREATE INDEX IF NOT EXISTS refs_ref ON refs(ref)`,
	`CREATE INDEX IF NOT EXISTS refs_message ON refs(message)`,
	`CREATE TABLE IF NOT EXISTS bodies(
		id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
		text TEXT NOT NULL DEFAULT '',
		truncated INTEGER NOT NULL DEFAULT 0,
		headers TEXT NOT NULL DEFAULT '',
		problems TEXT NOT NULL DEFAULT ''
	)`,
	`CREATE TABLE IF NOT EXISTS maildir_keys(
		folder_id INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
		key TEXT NOT NULL,
		uid INTEGER NOT NULL,
		PRIMARY KEY(folder_id, key)
	)`,
	MetaFTS,
	BodyFTS,
}

// SyncWarnings holds what a sync skipped or changed of one item, until it syncs cleanly.
const SyncWarnings = `CREATE TABLE IF NOT EXISTS sync_warnings(
	account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
	place TEXT NOT NULL,
	item TEXT NOT NULL,
	text TEXT NOT NULL,
	at INTEGER NOT NULL,
	PRIMARY KEY(account_id, place, item)
)`
