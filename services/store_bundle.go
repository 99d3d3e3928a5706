package services

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"parley/models"
)

// A bundle is a whole forum as JSON Lines, the same from either database
// (store_bundle_export.go writes one, store_bundle_import.go reads one), so
// that a forum moves from SQLite to PostgreSQL, or back, with nothing lost.
// Its first line is a BundleHeader; every further line is one row:
// {"table": ..., "row": {column: value, ...}}, table by table in the
// header's order, each table's rows in the order of their id.
//
// Rows are copied column by column as the database lists them, never field
// by field as Go knows them, so that a column added by a later migration
// travels without anyone touching this code. A table is either carried
// (bundleTables) or left out with a reason (leftOut); a table that is
// neither stops the export, so no table is ever dropped in silence.
//
// Values: integers as JSON numbers, text as strings, times as RFC 3339 in
// UTC to the microsecond (what PostgreSQL keeps), bytes in standard base64,
// NULL as null. Columns appear in alphabetical order, so that a bundle
// written from SQLite and one written from PostgreSQL are the same bytes.

// BundleFormat is the bundle format this build writes and reads.
const BundleFormat = "1"

// BundleHeader is a bundle's first line: the format, the schema version of
// the database it came from, and for each table its columns and row count.
type BundleHeader struct {
	Format        string        `json:"parley_bundle"`
	SchemaVersion int           `json:"schema_version"`
	Tables        []BundleTable `json:"tables"`
}

// BundleTable is one table of a bundle.
type BundleTable struct {
	Name    string   `json:"name"`
	Rows    int64    `json:"rows"`
	Columns []string `json:"columns"`
}

// Rows counts every row a bundle carries.
func (h BundleHeader) Rows() int64 {
	var n int64
	for _, t := range h.Tables {
		n += t.Rows
	}
	return n
}

// bundleLine is one row of a bundle.
type bundleLine struct {
	Table string                     `json:"table"`
	Row   map[string]json.RawMessage `json:"row"`
}

// bundleTables are the tables a bundle carries, in the order written and
// read: a table comes after the tables its rows refer to, except where
// references loop (a message names its claim, a claim its message) or
// point forward (a claim names the newer claim that superseded it); import
// checks those at the end of its transaction.
//
// Reading: the "identities" are the human accounts (users) and
// the tokens, which bind agents to theirs. Human accounts travel with their
// bcrypt password hashes, so humans sign in as before; tokens with the
// hashes of their secrets only, so agents keep their tokens (a secret was
// never stored). Browser sessions do not travel (leftOut).
//
// Reading: idempotency keys travel (docs/protocol.md §3): a retry is
// safe for 24 hours, and a forum moved within them still answers a
// client's retry with the first result instead of storing it twice. Their
// rows name tokens and messages, which travel with their ids.
//
// Reading: owner events travel (docs/protocol.md §15.1): who gave which
// token to which human is part of the forum's record, as its events are.
// So do the witness profile's blobs, signing keys and statements
// (§15.4–15.5): a moved forum is the same forum, its evidence still names
// its bytes and it signs with the same key, so that statements it signed
// before still verify against the keys it publishes.
var bundleTables = []string{"users", "tokens", "owner_events", "threads", "messages", "claims", "evidence", "events", "idempotency_keys",
	"blobs", "instance_keys", "statements"}

// leftOut are the tables a bundle does not carry, and why.
var leftOut = map[string]string{
	"schema_migrations": "the schema itself: the header names its version, and the target is migrated",
	"log_sequence":      "derived: import sets it from the positions it imported",
	"sessions":          "browser sign-ins, bound to cookies of the old server: humans sign in again",
	"setup_tokens":      "the one-time link that creates the first human; the accounts travel",
	"session_flashes":   "what a browser session hands to its next page, bound to its cookie",
	"rate_windows":      "per-minute request counters",
	"sign_in_failures":  "the sign-in throttle's counters",
	"streams":           "open event streams, bound to connections of the old server",
	"thread_visits":     "what each human last saw of each thread (unread in the web UI): a convenience, not the forum's record",
	"sqlite_sequence":   "SQLite's own AUTOINCREMENT counters, which follow the ids imported",
	"search_buckets":    "derived: the words of PostgreSQL's search index, bucket by bucket, which the target's server files again from the messages",
	"messages_search":   "the SQLite search index (with its shadow tables messages_search_*): triggers rebuild it from messages",
	"oauth_keys":        "the key sealing OAuth access tokens and codes: a moved forum makes its own, and clients refresh or sign in again",
	"oauth_clients":     "the operator's OAuth client registrations: configuration, added again with parley oauth client add",
	"oauth_requests":    "OAuth authorizations under way, minutes long",
	"oauth_access":      "OAuth access tokens, minutes long; the grants themselves are tokens, and travel",
	"oauth_refresh":     "OAuth refresh tokens, bound to the key that stays behind: a client connects again, a human consents again",
}

// leftOutReason says why a table is not carried, or "" when it is not
// left out.
func leftOutReason(table string) string {
	if r, ok := leftOut[table]; ok {
		return r
	}
	if strings.HasPrefix(table, "messages_search_") {
		return leftOut["messages_search"]
	}
	return ""
}

// checkCoverage refuses a schema with a table the bundle neither carries
// nor leaves out: exporting it without would lose its rows.
func checkCoverage(tables []string) error {
	var unknown []string
	for _, t := range tables {
		if !slices.Contains(bundleTables, t) && leftOutReason(t) == "" {
			unknown = append(unknown, t)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("bundle: table %s is neither carried nor left out: add it to bundleTables or leftOut in services/store_bundle.go",
			strings.Join(unknown, ", "))
	}
	return nil
}

// ErrNotEmpty is returned by Import for a database that already holds a
// forum.
var ErrNotEmpty = errors.New("the database is not empty: import needs a database without users, tokens, threads or messages")

// ErrBundleNewer is returned by Import for a bundle from a newer schema
// than this build knows.
var ErrBundleNewer = errors.New("the bundle comes from a newer schema than this build knows: import it with a newer parley")

// ErrBundleOlder is returned by Import for a bundle from a schema older
// than any build that wrote bundles.
var ErrBundleOlder = errors.New("the bundle comes from an older schema than any bundle was written from")

// FirstBundleSchema is the schema version of the first build that wrote
// bundles (export came with migration 9). No export wrote an older
// version, and a bundle claiming one would import without the data steps
// of the migrations in between (migrations.RowSteps).
//
// Reading: the issue allows an older bundle if its data steps are
// replayed. None can be: a data step reads the tables as they stood at its
// version (0003 fills the state of record from the log), and import writes
// rows at this build's schema. So an older bundle is refused with what to
// do instead: migrate the source and export again.
const FirstBundleSchema = 9

// valueKind is how a column's values are written in a bundle.
type valueKind int

const (
	kindText valueKind = iota
	kindInt
	kindTime
	kindBytes
	kindBool
	kindFloat
)

// column is a column as the database lists it.
type column struct {
	name string
	kind valueKind
}

// kindOf reads a column's declared type (PostgreSQL's data_type, SQLite's
// declared type).
func kindOf(dbType string) valueKind {
	t := strings.ToLower(dbType)
	switch {
	case strings.Contains(t, "int"):
		return kindInt
	case strings.Contains(t, "timestamp"), strings.Contains(t, "date"):
		return kindTime
	case strings.Contains(t, "bytea"), strings.Contains(t, "blob"):
		return kindBytes
	case strings.Contains(t, "bool"):
		return kindBool
	case strings.Contains(t, "real"), strings.Contains(t, "double"), strings.Contains(t, "float"), strings.Contains(t, "numeric"):
		return kindFloat
	}
	return kindText
}

// columnsOf lists a table's columns in alphabetical order, leaving out
// what the database computes itself (PostgreSQL's generated search
// column).
func columnsOf(tx *gorm.DB, table string) ([]column, error) {
	var sql string
	if models.IsPostgresDB(tx) {
		sql = `SELECT column_name, data_type FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = ? AND is_generated = 'NEVER'`
	} else {
		sql = `SELECT name, type FROM pragma_table_xinfo(?) WHERE hidden = 0`
	}
	rows, err := tx.Raw(sql, table).Rows()
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	defer rows.Close()
	var out []column
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, fmt.Errorf("columns of %s: %w", table, err)
		}
		out = append(out, column{name, kindOf(typ)})
	}
	slices.SortFunc(out, func(a, b column) int { return strings.Compare(a.name, b.name) })
	if len(out) == 0 {
		return nil, fmt.Errorf("columns of %s: the table does not exist", table)
	}
	return out, rows.Err()
}

// bundleTime is how times are written: UTC, always six digits of
// fraction, so that the same instant is the same text from either
// database.
const bundleTime = "2006-01-02T15:04:05.000000Z"

// encodeValue writes one value as the bundle carries it.
func encodeValue(kind valueKind, v any) ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	switch kind {
	case kindInt:
		switch n := v.(type) {
		case int64:
			return strconv.AppendInt(nil, n, 10), nil
		case int32:
			return strconv.AppendInt(nil, int64(n), 10), nil
		case int:
			return strconv.AppendInt(nil, int64(n), 10), nil
		}
	case kindTime:
		t, err := asTime(v)
		if err != nil {
			return nil, err
		}
		return json.Marshal(t.UTC().Truncate(time.Microsecond).Format(bundleTime))
	case kindBytes:
		if b, ok := v.([]byte); ok {
			return json.Marshal(base64.StdEncoding.EncodeToString(b))
		}
	case kindBool:
		switch b := v.(type) {
		case bool:
			return json.Marshal(b)
		case int64:
			return json.Marshal(b != 0)
		}
	case kindFloat:
		if f, ok := v.(float64); ok {
			return json.Marshal(f)
		}
	case kindText:
		switch s := v.(type) {
		case string:
			return json.Marshal(s)
		case []byte:
			return json.Marshal(string(s))
		}
	}
	return nil, fmt.Errorf("unexpected %T for a column of kind %d", v, kind)
}

// asTime reads a time as a driver returns it: a time.Time, or on SQLite
// possibly the text it was stored as.
func asTime(v any) (time.Time, error) {
	switch t := v.(type) {
	case time.Time:
		return t, nil
	case string:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
			if parsed, err := time.Parse(layout, t); err == nil {
				return parsed, nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("unexpected time value %v (%T)", v, v)
}

// decodeValue reads one value of a bundle for a column of the given kind.
func decodeValue(kind valueKind, raw json.RawMessage) (any, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	switch kind {
	case kindInt:
		return strconv.ParseInt(string(raw), 10, 64)
	case kindFloat:
		return strconv.ParseFloat(string(raw), 64)
	case kindBool:
		var b bool
		err := json.Unmarshal(raw, &b)
		return b, err
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	switch kind {
	case kindTime:
		t, err := time.Parse(time.RFC3339Nano, s)
		return t.UTC(), err
	case kindBytes:
		return base64.StdEncoding.DecodeString(s)
	}
	return s, nil
}

// quoteIdent quotes a table or column name for SQL; names come from the
// database's own catalog and the bundle's header, never as SQL.
func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

func quoteIdents(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = quoteIdent(c)
	}
	return strings.Join(q, ", ")
}
