package services_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// The hostile-bundle corpus (issue 23, items 1 and 2): bundles whose
// structure is sound but whose rows break the protocol, each made from a
// real export of the moving forum by editing a few values. Each must be
// refused with the target left empty, the refusal naming the table and
// the field; or import a forum whose reads work.

// bundleRow is one row of a bundle being edited.
type bundleRow struct {
	Table string                     `json:"table"`
	Row   map[string]json.RawMessage `json:"row"`
}

// editableBundle is a bundle read into memory to be edited.
type editableBundle struct {
	header services.BundleHeader
	rows   []bundleRow
}

func readBundle(t *testing.T, bundle []byte) *editableBundle {
	t.Helper()
	lines := bytes.Split(bytes.TrimSpace(bundle), []byte("\n"))
	b := &editableBundle{}
	if err := json.Unmarshal(lines[0], &b.header); err != nil {
		t.Fatal(err)
	}
	for _, l := range lines[1:] {
		var r bundleRow
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		b.rows = append(b.rows, r)
	}
	return b
}

// bytes writes the bundle out again, its header counting the rows it holds.
func (b *editableBundle) bytes(t *testing.T) []byte {
	t.Helper()
	for i, tab := range b.header.Tables {
		b.header.Tables[i].Rows = 0
		for _, r := range b.rows {
			if r.Table == tab.Name {
				b.header.Tables[i].Rows++
			}
		}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	if err := enc.Encode(b.header); err != nil {
		t.Fatal(err)
	}
	for _, r := range b.rows {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

func num(r bundleRow, col string) int64 {
	var n int64
	json.Unmarshal(r.Row[col], &n)
	return n
}

func text(r bundleRow, col string) string {
	var s string
	json.Unmarshal(r.Row[col], &s)
	return s
}

func rawJSON(v any) json.RawMessage {
	raw, _ := json.Marshal(v)
	return raw
}

// first returns the first row of table for which pick holds.
func (b *editableBundle) first(t *testing.T, table string, pick func(r bundleRow) bool) bundleRow {
	t.Helper()
	for _, r := range b.rows {
		if r.Table == table && pick(r) {
			return r
		}
	}
	t.Fatalf("no row of %s fits", table)
	return bundleRow{}
}

func anyRow(bundleRow) bool { return true }

// reply is the first message with a parent.
func (b *editableBundle) reply(t *testing.T) bundleRow {
	return b.first(t, "messages", func(r bundleRow) bool { return string(r.Row["parent_id"]) != "null" })
}

// dropColumns removes columns from the header and every row of a table.
func (b *editableBundle) dropColumns(table string, cols ...string) {
	for i, tab := range b.header.Tables {
		if tab.Name != table {
			continue
		}
		var keep []string
		for _, c := range tab.Columns {
			if !strings.Contains(" "+strings.Join(cols, " ")+" ", " "+c+" ") {
				keep = append(keep, c)
			}
		}
		b.header.Tables[i].Columns = keep
	}
	for _, r := range b.rows {
		if r.Table == table {
			for _, c := range cols {
				delete(r.Row, c)
			}
		}
	}
}

var recordColumns = []string{"record_state", "record_origin", "record_label", "record_confirmed_at", "record_confirmed_by", "record_event_id"}

// hostileCase is one edit of a good bundle, and what import must say: the
// table and field its refusal names, or "" for a bundle it must accept.
type hostileCase struct {
	name         string
	edit         func(t *testing.T, b *editableBundle)
	table, field string
}

func hostileCases() []hostileCase {
	set := func(table string, pick func(*testing.T, *editableBundle) bundleRow, col string, v any) func(*testing.T, *editableBundle) {
		return func(t *testing.T, b *editableBundle) { pick(t, b).Row[col] = rawJSON(v) }
	}
	firstOf := func(table string) func(*testing.T, *editableBundle) bundleRow {
		return func(t *testing.T, b *editableBundle) bundleRow { return b.first(t, table, anyRow) }
	}
	reply := func(t *testing.T, b *editableBundle) bundleRow { return b.reply(t) }
	thread := firstOf("threads")
	return []hostileCase{
		{"message_count 10^9", set("threads", thread, "message_count", 1_000_000_000), "threads", "message_count"},
		{"message_count -5", set("threads", thread, "message_count", -5), "threads", "message_count"},
		{"message_count one too many", func(t *testing.T, b *editableBundle) {
			th := b.first(t, "threads", anyRow)
			th.Row["message_count"] = rawJSON(num(th, "message_count") + 1)
		}, "threads", "message_count"},
		{"thread state bogus", set("threads", thread, "state", "bogus"), "threads", "state"},
		{"state of record bogus", set("threads", thread, "record_state", "bogus"), "threads", "record_state"},
		{"state origin bogus", set("threads", thread, "state_origin", "root"), "threads", "state_origin"},
		{"model_run -1", set("threads", thread, "model_run", -1), "threads", "model_run"},
		{"message kind bogus", set("messages", reply, "kind", "bogus"), "messages", "kind"},
		{"message state bogus", set("messages", reply, "state", "bogus"), "messages", "state"},
		{"parent cycle", func(t *testing.T, b *editableBundle) {
			// Two replies of one thread, each the other's parent.
			a := b.reply(t)
			c := b.first(t, "messages", func(r bundleRow) bool {
				return num(r, "thread_id") == num(a, "thread_id") && num(r, "id") > num(a, "id")
			})
			a.Row["parent_id"], c.Row["parent_id"] = c.Row["id"], a.Row["id"]
		}, "messages", "parent_id"},
		{"self-parent", func(t *testing.T, b *editableBundle) {
			r := b.reply(t)
			r.Row["parent_id"] = r.Row["id"]
		}, "messages", "parent_id"},
		{"parent in another thread", func(t *testing.T, b *editableBundle) {
			other := b.first(t, "messages", func(r bundleRow) bool { return num(r, "thread_id") == 1 && string(r.Row["parent_id"]) == "null" })
			r := b.first(t, "messages", func(r bundleRow) bool { return num(r, "thread_id") != 1 && string(r.Row["parent_id"]) != "null" })
			r.Row["parent_id"], r.Row["depth"] = other.Row["id"], rawJSON(2)
		}, "messages", "parent_id"},
		{"parent not in the bundle", func(t *testing.T, b *editableBundle) {
			// The removed message is a leaf no other row names.
			named := map[string]bool{}
			for _, r := range b.rows {
				for col, v := range r.Row {
					if col == "parent_id" || strings.HasSuffix(col, "message_id") {
						named[string(v)] = true
					}
				}
			}
			at := -1
			for i, r := range b.rows {
				if r.Table == "messages" && string(r.Row["parent_id"]) != "null" && !named[string(r.Row["id"])] {
					at = i
				}
			}
			if at < 0 {
				t.Fatal("no leaf to remove")
			}
			gone := b.rows[at]
			b.rows = append(b.rows[:at], b.rows[at+1:]...)
			th := b.first(t, "threads", func(r bundleRow) bool { return num(r, "id") == num(gone, "thread_id") })
			th.Row["message_count"] = rawJSON(num(th, "message_count") - 1)
			b.first(t, "messages", func(r bundleRow) bool {
				return num(r, "id") > num(gone, "id") && string(r.Row["parent_id"]) != "null"
			}).Row["parent_id"] = gone.Row["id"]
		}, "messages", "parent_id"},
		{"missing root", set("threads", thread, "root_message_id", 0), "threads", "root_message_id"},
		{"root names a reply", func(t *testing.T, b *editableBundle) {
			r := b.reply(t)
			b.first(t, "threads", func(th bundleRow) bool { return num(th, "id") == num(r, "thread_id") }).Row["root_message_id"] = r.Row["id"]
		}, "threads", "root_message_id"},
		{"second root", func(t *testing.T, b *editableBundle) {
			r := b.reply(t)
			r.Row["parent_id"], r.Row["depth"] = json.RawMessage("null"), rawJSON(1)
		}, "messages", "parent_id"},
		{"depth 10^9", set("messages", reply, "depth", 1_000_000_000), "messages", "depth"},
		{"depth off by one", func(t *testing.T, b *editableBundle) {
			r := b.reply(t)
			r.Row["depth"] = rawJSON(num(r, "depth") + 1)
		}, "messages", "depth"},
		{"root at depth 2", set("messages", firstOf("messages"), "depth", 2), "messages", "depth"},
		{"chain_len 10^9", set("messages", reply, "chain_len", 1_000_000_000), "messages", "chain_len"},
		{"rights admin,root", set("tokens", firstOf("tokens"), "rights", "admin,root"), "tokens", "rights"},
		{"rights empty", set("tokens", firstOf("tokens"), "rights", ""), "tokens", "rights"},
		{"token author kind root", set("tokens", firstOf("tokens"), "author_kind", "root"), "tokens", "author_kind"},
		{"token identity bogus", set("tokens", firstOf("tokens"), "identity", "nobody"), "tokens", "identity"},
		// Owners (docs/protocol.md §15.1): a human account, or none.
		{"token owner not an identity", set("tokens", firstOf("tokens"), "owner", "root"), "tokens", "owner"},
		{"token owner an agent", set("tokens", firstOf("tokens"), "owner", "ainotes:bob"), "tokens", "owner"},
		{"token owner nobody holds", set("tokens", firstOf("tokens"), "owner", "human:nobody"), "tokens", "owner"},
		{"message owner bogus", set("messages", reply, "author_owner", "human:Not A Name"), "messages", "author_owner"},
		{"claimant owner bogus", set("claims", firstOf("claims"), "claimant_owner", "everyone"), "claims", "claimant_owner"},
		{"empty password hash", set("users", firstOf("users"), "password_hash", ""), "users", "password_hash"},
		{"password hash in plain text", set("users", firstOf("users"), "password_hash", "correct horse battery"), "users", "password_hash"},
		{"author identity bogus", set("messages", reply, "author_identity", "root"), "messages", "author_identity"},
		{"awaiting identity bogus", set("threads", thread, "awaiting_identity", "everyone!"), "threads", "awaiting_identity"},
		{"author kind root", set("messages", reply, "author_kind", "root"), "messages", "author_kind"},
		{"a model's message as a human's", func(t *testing.T, b *editableBundle) {
			b.first(t, "messages", func(r bundleRow) bool { return text(r, "author_kind") == "llm" }).Row["author_kind"] = rawJSON("human")
		}, "messages", "author_kind"},
		{"NUL in a body", set("messages", reply, "body", "before\x00after"), "messages", "body"},
		{"NUL in a token label", set("tokens", firstOf("tokens"), "label", "a\x00b"), "tokens", "label"},
		{"oversize body", set("messages", reply, "body", strings.Repeat("é", 10_000)), "messages", "body"},
		{"body one over the limit", set("messages", reply, "body", strings.Repeat("x", services.DefaultLimits().BodyMaxChars+1)), "messages", "body"},
		{"claim status bogus", set("claims", firstOf("claims"), "status", "proven"), "claims", "status"},
		{"evidence kind bogus", set("evidence", firstOf("evidence"), "kind", "vibes"), "evidence", "kind"},
		{"event type bogus", set("events", firstOf("events"), "type", "bogus"), "events", "type"},
		{"stored answer not JSON", set("idempotency_keys", firstOf("idempotency_keys"), "result", "{"), "idempotency_keys", "result"},
		{"confirmed state beside another state of record", func(t *testing.T, b *editableBundle) {
			th := b.first(t, "threads", func(r bundleRow) bool { return text(r, "state") == "rejected" })
			th.Row["record_state"] = rawJSON("open")
		}, "threads", "state"},
		{"schema_version 2", func(t *testing.T, b *editableBundle) {
			// As a forum before migration 3 would have written it.
			b.header.SchemaVersion = 2
			b.dropColumns("threads", recordColumns...)
		}, "", "schema"},
		{"schema_version current, the state of record left out", func(t *testing.T, b *editableBundle) {
			b.dropColumns("threads", recordColumns...)
		}, "threads", "record_state"},

		// Accepted: at the limits, a forum works.
		{"body at the limit", set("messages", reply, "body", strings.Repeat("é", services.DefaultLimits().BodyMaxChars)), "", ""},
		{"blank lines between rows", func(t *testing.T, b *editableBundle) {}, "", ""},
	}
}

// TestImportRefusesHostileBundles runs the corpus on both databases: every
// hostile bundle is refused, naming the table and field, with the target
// left empty; the accepted ones import a forum whose threads read.
func TestImportRefusesHostileBundles(t *testing.T) {
	ctx := context.Background()
	src := &world{t: t, db: dbtest.Fresh(t, "sqlite"), ctx: ctx}
	src.forum = services.New(src.db, services.Config{Now: bundleClock})
	m := buildMovingForum(t, src)
	good := export(t, src.forum)
	cases := hostileCases()
	dbtest.Each(t, func(t *testing.T, target *gorm.DB) {
		// A refused import leaves the target empty, so the refused
		// bundles all try the same one; an accepted one gets its own.
		refused := 0
		for _, c := range cases {
			b := readBundle(t, good)
			c.edit(t, b)
			bundle := b.bytes(t)
			if c.name == "blank lines between rows" {
				bundle = bytes.ReplaceAll(bundle, []byte("\n"), []byte("\n\n  \n"))
			}
			t.Run(c.name, func(t *testing.T) {
				if c.field == "" {
					to := services.New(dbtest.Fresh(t, target.Dialector.Name()), services.Config{Now: bundleClock})
					if _, err := to.Import(ctx, bytes.NewReader(bundle)); err != nil {
						t.Fatalf("refused: %v", err)
					}
					readsWork(t, to, m)
					return
				}
				_, err := services.New(target, services.Config{Now: bundleClock}).Import(ctx, bytes.NewReader(bundle))
				want := c.table + " "
				if c.table == "" {
					want = "schema version 2"
				}
				if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), c.field) {
					t.Fatalf("import: %v; want a refusal naming %q and %q", err, want, c.field)
				}
				if c.table != "" && !strings.Contains(err.Error(), ", "+c.field+": ") {
					t.Fatalf("import: %v; want the row and field named as '%s <row>, %s: '", err, c.table, c.field)
				}
				refused++
				for _, table := range []string{"users", "tokens", "threads", "messages", "claims", "evidence", "events", "idempotency_keys"} {
					var n int64
					target.Raw("SELECT COUNT(*) FROM " + table).Scan(&n)
					if n != 0 {
						t.Fatalf("a refused import left %d rows in %s", n, table)
					}
				}
				t.Logf("refused: %v", err)
			})
		}
		t.Logf("%d hostile bundles refused of %d tried", refused, len(cases))
	})
}

// readsWork reads every thread of an imported forum as one of its agents.
func readsWork(t *testing.T, f *services.Forum, m movingForum) {
	t.Helper()
	ctx := context.Background()
	alice, err := f.Authenticate(ctx, m.secrets["alice"])
	if err != nil {
		t.Fatal(err)
	}
	page, err := f.ListThreads(ctx, alice, services.ListQuery{Limit: "200"})
	if err != nil || len(page.Threads) == 0 {
		t.Fatalf("list threads: %d (%v)", len(page.Threads), err)
	}
	for _, th := range page.Threads {
		v, err := f.ReadThread(ctx, alice, services.ThreadQuery{Thread: th.ID})
		if err != nil {
			t.Fatalf("read %s: %v", th.ID, err)
		}
		if n := treeSize(v.Messages); v.Thread.MessageCount != n {
			t.Fatalf("thread %s counts %d messages and shows %d", th.ID, v.Thread.MessageCount, n)
		}
	}
}

// treeSize counts the messages of a thread tree.
func treeSize(ms []*services.Message) int {
	n := len(ms)
	for _, m := range ms {
		n += treeSize(m.Replies)
	}
	return n
}

// TestImportRefusesSchemaVersion2: the case. A bundle that claims
// schema version 2 lacks the state of record, which migration 3 filled
// from the log; imported as it was, its confirmed rejected thread then
// accepted a model's note. It is refused, and says what to do instead.
func TestImportRefusesSchemaVersion2(t *testing.T) {
	ctx := context.Background()
	src := &world{t: t, db: dbtest.Fresh(t, "sqlite"), ctx: ctx}
	src.forum = services.New(src.db, services.Config{Now: bundleClock})
	buildMovingForum(t, src)
	b := readBundle(t, export(t, src.forum))
	b.header.SchemaVersion = 2
	b.dropColumns("threads", recordColumns...)
	bundle := b.bytes(t)
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		_, err := services.New(db, services.Config{Now: bundleClock}).Import(ctx, bytes.NewReader(bundle))
		if err == nil || !strings.Contains(err.Error(), "parley migrate") {
			t.Fatalf("import of a schema version 2 bundle: %v, want a refusal saying to migrate the source and export again", err)
		}
		var n int64
		db.Raw("SELECT COUNT(*) FROM threads").Scan(&n)
		if n != 0 {
			t.Fatalf("a refused import left %d threads", n)
		}
	})
}

// hugeBody is a bundle whose second message row has a body of n bytes,
// produced as it is read: the test holds none of it.
func hugeBody(t *testing.T, good []byte, n int64) (io.Reader, *countingReader) {
	t.Helper()
	b := readBundle(t, good)
	marker := "HUGE-BODY-HERE"
	b.reply(t).Row["body"] = rawJSON(marker)
	text := string(b.bytes(t))
	before, after, ok := strings.Cut(text, `"`+marker+`"`)
	if !ok {
		t.Fatal("no marker")
	}
	r := &countingReader{r: io.MultiReader(strings.NewReader(before+`"`), io.LimitReader(xs{}, n), strings.NewReader(`"`+after))}
	return r, r
}

// xs reads as endless 'x'.
type xs struct{}

func (xs) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestImportRefusesAHugeBodyWithoutHoldingIt: a row with a 64 MiB body is
// refused when the reader passes the most a row takes, on both databases:
// import reads little more than that bound from the bundle, and allocates
// far less than the body (the old reader buffered the whole line, then
// copied it: 824 MB RSS on SQLite).
func TestImportRefusesAHugeBodyWithoutHoldingIt(t *testing.T) {
	ctx := context.Background()
	src := &world{t: t, db: dbtest.Fresh(t, "sqlite"), ctx: ctx}
	src.forum = services.New(src.db, services.Config{Now: bundleClock})
	buildMovingForum(t, src)
	good := export(t, src.forum)
	const body = 64 << 20
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		r, counted := hugeBody(t, good, body)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := services.New(db, services.Config{Now: bundleClock}).Import(ctx, r)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "messages") || !strings.Contains(err.Error(), "longer than") {
			t.Fatalf("import of a 64 MiB body: %v, want a refusal of the messages row as too long", err)
		}
		// Generous bounds: a few MiB beyond the 1 MiB line limit, far
		// below the 64 MiB body.
		if counted.n > 8<<20 {
			t.Errorf("import read %d bytes of the bundle before refusing it", counted.n)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
			t.Errorf("import allocated %d bytes for a bundle refused at its 1 MiB line limit", alloc)
		}
		t.Logf("refused after reading %d bytes, allocating %d: %v", counted.n, after.TotalAlloc-before.TotalAlloc, err)
		var n int64
		db.Raw("SELECT COUNT(*) FROM users").Scan(&n)
		if n != 0 {
			t.Fatalf("a refused import left %d users", n)
		}
	})
}

// TestStoredCountsSizeNoAllocation: a thread row whose message_count is
// wrong (written by a bug, or by hand into the database) reads: the count
// is not the size of any allocation. 10^9 made the read allocate 10^9
// messages and the process die; -5 panicked in makeslice.
func TestStoredCountsSizeNoAllocation(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		p := w.must(alice, env{"kind": "ask", "body": "How many?"})
		w.must(bob, env{"kind": "note", "thread": p.Thread.ID, "body": "Two."})
		id := strings.TrimPrefix(p.Thread.ID, "th_")
		for _, count := range []int64{-5, 1_000_000_000} {
			t.Run(fmt.Sprint(count), func(t *testing.T) {
				if err := w.db.Exec("UPDATE threads SET message_count = ? WHERE id = ?", count, id).Error; err != nil {
					t.Fatal(err)
				}
				v, err := w.forum.ReadThread(w.ctx, alice, services.ThreadQuery{Thread: p.Thread.ID})
				if err != nil || treeSize(v.Messages) != 2 {
					t.Fatalf("read_thread: %d messages (%v)", treeSize(v.Messages), err)
				}
			})
		}
	})
}
