package services

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"
)

// A bundle's rows are checked against the protocol before the import
// commits, so that a bundle written by hand (or by an attacker) cannot
// store what no post would: a state, kind, right or author kind outside the
// protocol's tables, a password hash that is no bcrypt hash, a body beyond
// the limits or with a NUL, a message tree that is not a tree, or a counter
// that disagrees with the rows it counts.
//
// Two passes. checkRow looks at each row as it is decoded, before it is
// inserted: what one row shows by itself. checkForum runs after every row
// is in, inside the same transaction, and looks at rows together (a
// parent, a thread's root, a count); it also covers the columns a bundle
// did not carry, which the insert filled with their defaults.
//
// Reading: a derived counter that disagrees with the rows (message_count,
// depth, chain_len) is refused, not recomputed. export writes them as the
// services kept them, so a bundle whose counters disagree was not written
// by export: it was edited or corrupted, and an operator learns that
// rather than getting a forum silently different from the bundle; the
// round trip keeps promising the same bytes back.

// BundleRowError is an import refused for one row: the table, the row (its
// id, or its place in the table for a table without ids), the field, and
// why.
type BundleRowError struct {
	Table  string
	Row    string // "id 7", or "row 3" in a table without ids
	Field  string
	Reason string
}

func (e *BundleRowError) Error() string {
	return fmt.Sprintf("%s %s, %s: %s", e.Table, e.Row, e.Field, e.Reason)
}

// textLimits bounds the text columns a post bounds, in code points, as
// the envelope's reader does (checkText).
func (f *Forum) textLimits() map[string]int {
	l := f.limits
	return map[string]int{
		"messages.body": l.BodyMaxChars, "claims.statement": l.BodyMaxChars, "threads.title": titleChars,
		"evidence.ref": l.EvidenceRefMaxChars, "evidence.note": l.BodyMaxChars,
		"messages.provenance_model": l.ProvenanceFieldMaxChars, "messages.provenance_client": l.ProvenanceFieldMaxChars,
		"messages.author_extension": l.ExtensionMaxChars, "threads.created_by_extension": l.ExtensionMaxChars,
	}
}

// rowChecker checks the rows of one import.
type rowChecker struct {
	f     *Forum
	texts map[string]int
}

func (f *Forum) rowChecker() *rowChecker { return &rowChecker{f: f, texts: f.textLimits()} }

// checkRow checks one decoded row of table, the n-th of its table; row
// maps each column the bundle carries to its decoded value.
func (c *rowChecker) checkRow(table string, n int64, row map[string]any) error {
	at := fmt.Sprintf("row %d", n)
	if id, ok := row["id"].(int64); ok {
		at = fmt.Sprintf("id %d", id)
	}
	refuse := func(field, format string, args ...any) error {
		return &BundleRowError{Table: table, Row: at, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	for col, v := range row {
		s, ok := v.(string)
		if !ok {
			continue
		}
		if strings.ContainsRune(s, 0) {
			return refuse(col, "contains a NUL character, which no post stores")
		}
		if max, bounded := c.texts[table+"."+col]; bounded && utf8.RuneCountInString(s) > max {
			return refuse(col, "has %d characters; at most %d", utf8.RuneCountInString(s), max)
		}
	}
	for _, col := range identityColumns[table] {
		optional := col == "to_identity" || col == "awaiting_identity"
		if s, ok := row[col].(string); ok && !validIdentity(s) && !(optional && s == "") && !(col == "awaiting_identity" && s == "*") {
			return refuse(col, "%q is not an identity <realm>:<handle> or human:<name>", s)
		}
	}
	for _, col := range ownerColumns[table] {
		if s, ok := row[col].(string); ok && !validOwner(s) {
			return refuse(col, "%q is not an owner: human:<name> of a human account, or empty for none (docs/protocol.md §15.1)", s)
		}
	}
	l := c.f.limits
	text := func(col string) string { s, _ := row[col].(string); return s }
	num := func(col string) (int64, bool) { v, ok := row[col].(int64); return v, ok }
	inRange := func(col string, lo, hi int64, limit string) error {
		if v, ok := num(col); ok && (v < lo || v > hi) {
			return refuse(col, "%d is outside %d..%d (%s)", v, lo, hi, limit)
		}
		return nil
	}
	authorKind := func(kindCol, identityCol string) error {
		kind, identity := text(kindCol), text(identityCol)
		if _, has := row[kindCol]; !has {
			return nil
		}
		if kind != string(KindLLM) && kind != string(KindHuman) {
			return refuse(kindCol, "%q is not an author kind: llm or human", kind)
		}
		if _, has := row[identityCol]; has && (kind == string(KindHuman)) != strings.HasPrefix(identity, "human:") {
			return refuse(kindCol, "%q does not match the identity %q: human identities, and only they, are human:<name>", kind, identity)
		}
		return nil
	}
	switch table {
	case "users":
		if _, has := row["password_hash"]; has {
			if _, err := bcrypt.Cost([]byte(text("password_hash"))); err != nil {
				return refuse("password_hash", "not a bcrypt hash (%v): a human could never sign in, or anyone could", err)
			}
		}
		if _, has := row["name"]; has && !validName(text("name"), 64) {
			return refuse("name", "%q does not match [a-z0-9][a-z0-9._-]{0,63}", text("name"))
		}
	case "tokens":
		if _, has := row["rights"]; has {
			rights, err := ParseRights(text("rights"))
			if err != nil || joinRights(rights) != text("rights") {
				return refuse("rights", "%q is not a list of known rights (read, write, lock, verify), each once, comma-separated", text("rights"))
			}
		}
		if _, has := row["identity"]; has && !validIdentity(text("identity")) {
			return refuse("identity", "%q is not an identity <realm>:<handle> or human:<name>", text("identity"))
		}
		return authorKind("author_kind", "identity")
	case "threads":
		for _, col := range []string{"state", "record_state"} {
			if _, has := row[col]; has && !ValidState(State(text(col))) {
				return refuse(col, "%q is not a state: one of %s", text(col), stateList())
			}
		}
		for _, col := range []string{"state_origin", "record_origin"} {
			if _, has := row[col]; has && text(col) != "user" && text(col) != "llm" {
				return refuse(col, "%q is not an origin: user or llm", text(col))
			}
		}
		if err := inRange("message_count", 1, int64(l.ThreadMaxMessages), "thread_max_messages"); err != nil {
			return err
		}
		return inRange("model_run", 0, int64(l.ThreadMaxMessages), "thread_max_messages")
	case "messages":
		if _, has := row["kind"]; has && !knownKind(Kind(text("kind"))) {
			return refuse("kind", "%q is not an act: one of %s", text("kind"), kindList())
		}
		if s := text("state"); s != "" && !ValidState(State(s)) {
			return refuse("state", "%q is not a state: one of %s, or empty", s, stateList())
		}
		if err := inRange("depth", 1, int64(l.ThreadMaxDepth), "thread_max_depth"); err != nil {
			return err
		}
		id, _ := num("id")
		depth, _ := num("depth")
		switch parent, ok := num("parent_id"); {
		case !ok && depth != 1:
			return refuse("depth", "%d, but the message has no parent: a thread's root is at depth 1", depth)
		case ok && parent >= id:
			return refuse("parent_id", "names message %d, not an earlier one: a parent exists before its replies, so a message is never its own parent or in a cycle", parent)
		}
		if err := inRange("chain_len", 0, depth, "at most the message's depth"); err != nil {
			return err
		}
		return authorKind("author_kind", "author_identity")
	case "claims":
		if _, has := row["status"]; has && !validClaimStatus(ClaimStatus(text("status"))) {
			return refuse("status", "%q is not a claim status", text("status"))
		}
	case "evidence":
		if _, has := row["kind"]; has && !knownEvidenceKind(EvidenceKind(text("kind"))) {
			return refuse("kind", "%q is not an evidence kind: one of %s", text("kind"), evidenceKindList())
		}
		return inRange("position", 1, int64(l.EvidenceMaxItems), "evidence_max_items")
	case "events":
		if _, has := row["type"]; has && !slices.Contains(eventTypes, EventType(text("type"))) {
			return refuse("type", "%q is not an event type", text("type"))
		}
	case "owner_events":
		if _, has := row["type"]; has && text("type") != EventTypeOwner {
			return refuse("type", "%q is not an owner event's type: owner", text("type"))
		}
		if _, has := row["identity"]; has && !validIdentity(text("identity")) {
			return refuse("identity", "%q is not an identity <realm>:<handle>", text("identity"))
		}
	case "idempotency_keys":
		if _, has := row["result"]; has && !json.Valid([]byte(text("result"))) {
			return refuse("result", "the stored answer is not JSON")
		}
	case "blobs":
		return c.checkBlobRow(row, refuse)
	case "instance_keys":
		return checkKeyRow(row, refuse)
	case "statements":
		if _, has := row["envelope"]; has && !json.Valid([]byte(text("envelope"))) {
			return refuse("envelope", "the stored DSSE envelope is not JSON")
		}
	}
	return nil
}

// checkBlobRow checks a blob as put_blob would have stored it
// (docs/protocol.md §15.4): its name is the sha256 of its bytes, its size
// their length, within blob_max_bytes, with a media type.
func (c *rowChecker) checkBlobRow(row map[string]any, refuse func(field, format string, args ...any) error) error {
	data, ok := row["data"].([]byte)
	if !ok {
		return refuse("data", "a blob needs its bytes")
	}
	if len(data) == 0 || len(data) > c.f.limits.BlobMaxBytes {
		return refuse("data", "%d bytes; a blob has 1 to %d (blob_max_bytes)", len(data), c.f.limits.BlobMaxBytes)
	}
	if digest, _ := row["digest"].(string); digest != BlobDigest(data) {
		return refuse("digest", "%q is not the sha256 of the blob's bytes (%s): a blob is named by its content", digest, BlobDigest(data))
	}
	if size, _ := row["size"].(int64); size != int64(len(data)) {
		return refuse("size", "%d, but the blob holds %d bytes", size, len(data))
	}
	if mt, _ := row["media_type"].(string); mt == "" {
		return refuse("media_type", "a blob has a media type")
	} else if _, err := readMediaType(mt); err != nil {
		return refuse("media_type", "%q is not a media type", mt)
	}
	return nil
}

// identityColumns are the columns that name an identity; to and awaiting
// may be "" (nobody), awaiting "*" (anyone).
var identityColumns = map[string][]string{
	"threads":  {"created_by_identity", "awaiting_identity"},
	"messages": {"author_identity", "to_identity", "awaiting_identity"},
	"claims":   {"claimant_identity"},
	"blobs":    {"created_by"},
}

// ownerColumns are the columns that name an owner (docs/protocol.md
// §15.1): "human:<name>" or "" for none.
var ownerColumns = map[string][]string{
	"tokens":       {"owner"},
	"messages":     {"author_owner"},
	"claims":       {"claimant_owner"},
	"owner_events": {"from_owner", "to_owner"},
}

// validOwner reports whether s can be stored as an owner.
func validOwner(s string) bool {
	name, ok := strings.CutPrefix(s, HumanRealm+":")
	return s == "" || ok && validName(name, 64)
}

// eventTypes are the types of the log's events.
var eventTypes = []EventType{EventTypeState, EventTypeConfirm, EventTypeWithdraw, EventTypeClaim, EventTypeEscalate}

// forumCheck is one check over the imported rows together: sql selects the
// first offending row's id and two values the reason shows, or nothing.
type forumCheck struct {
	table, field string
	sql          string
	reason       string // formatted with the two values
}

// forumChecks are run in order; the first that finds a row refuses the
// import. Missing references are named here, before the foreign keys
// are checked, so that the refusal names the row.
func forumChecks() []forumCheck {
	states := "'" + strings.Join(func() []string {
		out := make([]string, len(allStates))
		for i, s := range allStates {
			out[i] = string(s)
		}
		return out
	}(), "', '") + "'"
	return []forumCheck{
		{"messages", "parent_id", `SELECT m.id, m.parent_id, 0 FROM messages m
			WHERE m.parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM messages p WHERE p.id = m.parent_id) ORDER BY m.id LIMIT 1`,
			"names message %v%.0v, which the bundle does not hold"},
		{"messages", "parent_id", `SELECT m.id, p.id, p.thread_id FROM messages m JOIN messages p ON p.id = m.parent_id
			WHERE p.thread_id <> m.thread_id ORDER BY m.id LIMIT 1`,
			"names message %v of thread %v: a reply's parent is in the reply's own thread"},
		{"threads", "root_message_id", `SELECT t.id, t.root_message_id, 0 FROM threads t
			WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = t.root_message_id AND m.thread_id = t.id AND m.parent_id IS NULL)
			ORDER BY t.id LIMIT 1`,
			"names message %v%.0v, which is not a message of this thread without a parent: every thread has its root"},
		{"messages", "parent_id", `SELECT m.id, t.id, t.root_message_id FROM messages m JOIN threads t ON t.id = m.thread_id
			WHERE m.parent_id IS NULL AND m.id <> t.root_message_id ORDER BY m.id LIMIT 1`,
			"is null, but thread %v's root is message %v: only the root has no parent"},
		{"messages", "depth", `SELECT m.id, m.depth, p.depth + 1 FROM messages m JOIN messages p ON p.id = m.parent_id
			WHERE m.depth <> p.depth + 1 ORDER BY m.id LIMIT 1`,
			"is %v; a reply is one deeper than its parent: %v"},
		{"messages", "chain_len", `SELECT m.id, m.chain_len, COALESCE(p.chain_len, 0) + 1 FROM messages m LEFT JOIN messages p ON p.id = m.parent_id
			WHERE m.chain_len <> 0 AND m.chain_len <> COALESCE(p.chain_len, 0) + 1 ORDER BY m.id LIMIT 1`,
			"is %v; it is 0 or one more than the parent's: %v"},
		{"threads", "message_count", `SELECT t.id, t.message_count, (SELECT COUNT(*) FROM messages m WHERE m.thread_id = t.id) FROM threads t
			WHERE t.message_count <> (SELECT COUNT(*) FROM messages m WHERE m.thread_id = t.id) ORDER BY t.id LIMIT 1`,
			"is %v, but the bundle holds %v messages of the thread"},
		{"threads", "record_state", `SELECT id, record_state, '' FROM threads WHERE record_state NOT IN (` + states + `) ORDER BY id LIMIT 1`,
			"%q is not a state%.0s: the state of record is one of the seven (a bundle without it lacks migration 3's data step)"},
		{"threads", "state", `SELECT id, state, record_state FROM threads
			WHERE state_confirmed_at IS NOT NULL AND state <> record_state ORDER BY id LIMIT 1`,
			"is %q, confirmed, but the state of record is %q: with no proposal pending they are the same"},
		{"threads", "record_confirmed_at", `SELECT id, record_state, '' FROM threads WHERE record_confirmed_at IS NULL ORDER BY id LIMIT 1`,
			"is null: the state of record (%q%.0s) is a confirmed state, and says when"},
		{"tokens", "owner", `SELECT t.id, t.owner, '' FROM tokens t WHERE t.owner <> ''
			AND NOT EXISTS (SELECT 1 FROM users u WHERE '` + HumanRealm + `:' || u.name = t.owner) ORDER BY t.id LIMIT 1`,
			"is %q%.0s, but the bundle holds no such human: an owner is a human account"},
		{"tokens", "owner", `SELECT id, owner, identity FROM tokens WHERE owner <> '' AND author_kind = 'human' ORDER BY id LIMIT 1`,
			"is %q on %s's own token: a human's token is owned by that human"},
	}
}

// checkForum runs forumChecks over the imported rows.
func checkForum(tx *gorm.DB) error {
	for _, c := range forumChecks() {
		rows, err := tx.Raw(c.sql).Rows()
		if err != nil {
			return fmt.Errorf("check %s.%s: %w", c.table, c.field, err)
		}
		var (
			id    int64
			a, b  any
			found = rows.Next()
		)
		if found {
			err = rows.Scan(&id, &a, &b)
		}
		if err == nil {
			err = rows.Err()
		}
		rows.Close()
		if err != nil {
			return fmt.Errorf("check %s.%s: %w", c.table, c.field, err)
		}
		if found {
			return &BundleRowError{Table: c.table, Row: fmt.Sprintf("id %d", id), Field: c.field, Reason: fmt.Sprintf(c.reason, plain(a), plain(b))}
		}
	}
	return nil
}

// plain makes a scanned value printable: text may come as bytes.
func plain(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return v
}

// checkKeyRow checks an instance key (docs/protocol.md §15.5): an Ed25519
// seed whose public key is the one stored, named by its key id, so that
// an imported forum signs with the key it publishes.
func checkKeyRow(row map[string]any, refuse func(field, format string, args ...any) error) error {
	seed, _ := row["private_key"].([]byte)
	pub, _ := row["public_key"].([]byte)
	if len(seed) != ed25519.SeedSize {
		return refuse("private_key", "%d bytes; an Ed25519 seed has %d", len(seed), ed25519.SeedSize)
	}
	if !bytes.Equal(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey), pub) {
		return refuse("public_key", "is not the public key of private_key")
	}
	if id, err := keyIDOf(pub); err != nil || row["key_id"] != id {
		return refuse("key_id", "%v is not the key's id %s", row["key_id"], id)
	}
	return nil
}
