package services_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/migrations"
	"parley/migrations/dbtest"
	"parley/models"
	"parley/services"
)

// bundleClock is when a moving forum starts.
func bundleClock() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

// steppingClock starts at bundleClock and moves on by an uneven step at
// each reading, so that stored times carry fractions of a second (and
// nanoseconds, which the services cut to microseconds); a forum and the
// one it moves to read claims' expiry at about the same times.
func steppingClock() func() time.Time {
	now := bundleClock()
	return func() time.Time {
		now = now.Add(1234567891 * time.Nanosecond / 1000)
		return now
	}
}

// movingForum is a forum with something of everything a bundle carries:
// humans with passwords, agents with extensions, a moderator and a
// verifier, a revoked token, threads in every kind of state with pending
// proposals and a withdrawal, answers, objections, claims attested,
// verified, refuted and superseded (a claim names the newer one that
// replaced it: a reference forward), expiring claims, and a session, which
// a bundle leaves out.
type movingForum struct {
	w       *world
	secrets map[string]string // caller name → token secret
	session string
}

func buildMovingForum(t *testing.T, w *world) movingForum {
	t.Helper()
	m := movingForum{w: w, secrets: map[string]string{}}
	token := func(name string, req services.TokenRequest) services.Caller {
		tok, err := w.forum.CreateToken(w.ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		m.secrets[name] = tok.Secret
		return w.auth(tok.Secret)
	}
	rw := []services.Right{services.RightRead, services.RightWrite}
	alice := token("alice", services.TokenRequest{Handle: "alice", Rights: rw})
	bob := token("bob", services.TokenRequest{Handle: "bob", Rights: rw, Label: "Bob the builder"})
	mod := token("mod", services.TokenRequest{Handle: "mod", Rights: append(rw, services.RightLock), Label: "Steward"})
	verifier := token("verifier", services.TokenRequest{Handle: "verifier", Rights: append(rw, services.RightVerify)})
	revoked := token("revoked", services.TokenRequest{Handle: "gone", Rights: rw})
	if err := w.forum.AddUser(w.ctx, "ada", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	ada := token("ada", services.TokenRequest{Human: "ada"})
	list, _ := w.forum.ListTokens(w.ctx)
	for _, tok := range list {
		if tok.Identity == revoked.Identity {
			w.forum.RevokeToken(w.ctx, tok.ID)
		}
	}
	sess, err := w.forum.SignIn(w.ctx, "ada", "correct horse battery", "test")
	if err != nil {
		t.Fatal(err)
	}
	m.session = sess.Token

	ext := func(e string) map[string]string { return map[string]string{"extension": e} }
	port := w.must(alice, env{"kind": "ask", "body": "Which port should linkd listen on?", "provenance": map[string]string{"model": "m-1", "client": "c-1"}})
	ans := w.must(bob, env{"kind": "answer", "thread": port.Thread.ID, "from": ext("w1"), "body": "8443: 443 belongs to the proxy."})
	w.must(alice, env{"kind": "object", "thread": port.Thread.ID, "parent": ans.Message.ID, "body": "Is 8443 free on staging?"})
	w.must(bob, env{"kind": "note", "thread": port.Thread.ID, "from": ext("w2"), "body": "It is: see linkd.conf."})
	w.must(alice, env{"kind": "decide", "thread": port.Thread.ID, "body": "8443 it is."})
	if _, err := w.forum.Confirm(w.ctx, mod, port.Thread.ID, []byte(`{"state":"decided"}`)); err != nil {
		t.Fatal(err)
	}
	w.must(alice, env{"kind": "mark", "thread": port.Thread.ID, "state": "closed", "body": "Done."})

	cache := w.must(bob, env{"kind": "ask", "body": "Cache eviction: LRU or LFU?", "to": map[string]string{"identity": alice.Identity}})
	clarify := w.must(alice, env{"kind": "clarify", "thread": cache.Thread.ID, "body": "For which service?"})
	w.must(bob, env{"kind": "answer", "thread": cache.Thread.ID, "parent": clarify.Message.ID, "body": "For the gateway."})
	w.must(bob, env{"kind": "mark", "thread": cache.Thread.ID, "state": "deferred", "body": "Later."})
	w.must(bob, env{"kind": "mark", "thread": cache.Thread.ID, "state": "open", "body": "Withdrawn."})
	w.must(ada, env{"kind": "propose", "thread": cache.Thread.ID, "body": "LRU, sized by memory."})

	side := w.must(alice, env{"kind": "ask", "body": "Rewrite it in Rust?"})
	w.must(ada, env{"kind": "mark", "thread": side.Thread.ID, "state": "rejected", "body": "No."})
	w.must(bob, env{"kind": "ask", "body": "Anyone for a review?", "idempotency_key": "review-1"})

	c1 := w.must(alice, env{"kind": "assert", "body": "p99 is under 40 ms.", "evidence": proof("https://ci.example/1")})
	w.must(bob, env{"kind": "attest", "thread": c1.Thread.ID, "claim": *c1.Message.Claim, "body": "Reproduced.",
		"evidence": []map[string]string{{"kind": "log", "ref": "job 7", "note": "line 88"}}})
	w.must(verifier, env{"kind": "verify", "thread": c1.Thread.ID, "claim": *c1.Message.Claim, "body": "Sealed.", "evidence": proof("https://ci.example/2")})
	c2 := w.must(bob, env{"kind": "assert", "thread": c1.Thread.ID, "body": "The cache hit rate is 90%.", "valid_until": bundleClock().Add(time.Hour)})
	w.must(alice, env{"kind": "refute", "thread": c1.Thread.ID, "claim": *c2.Message.Claim, "body": "It is 60%.", "evidence": proof("https://grafana.example/d/1")})
	w.must(bob, env{"kind": "assert", "thread": c1.Thread.ID, "body": "The cache hit rate is 60%.", "supersedes": []string{*c2.Message.Claim}})
	w.must(alice, env{"kind": "assert", "body": "The old proxy is gone.", "valid_until": bundleClock().Add(time.Minute)})
	return m
}

// reading is everything the services answer about a forum, as JSON.
func (m movingForum) reading(t *testing.T, f *services.Forum) string {
	t.Helper()
	ctx := context.Background()
	var out []any
	add := func(label string, v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		out = append(out, label, v)
	}
	callers := map[string]services.Caller{}
	for _, name := range []string{"alice", "bob", "mod", "verifier", "ada"} {
		who, err := f.Authenticate(ctx, m.secrets[name])
		if err != nil {
			t.Fatalf("token of %s after the move: %v", name, err)
		}
		callers[name] = who
		me, err := f.Whoami(ctx, who, services.WhoamiQuery{})
		add("whoami "+name, me, err)
	}
	if _, err := f.Authenticate(ctx, m.secrets["revoked"]); err == nil {
		t.Fatal("a revoked token came back to life")
	}
	reader := callers["alice"]
	cursor := ""
	for {
		page, err := f.ListThreads(ctx, reader, services.ListQuery{Cursor: cursor, Limit: "2"})
		add("threads", page, err)
		for _, th := range page.Threads {
			v, err := f.ReadThread(ctx, reader, services.ThreadQuery{Thread: th.ID})
			add("thread "+th.ID, v, err)
		}
		if page.Cursor == nil {
			break
		}
		cursor = *page.Cursor
	}
	for _, name := range []string{"alice", "bob", "mod", "ada"} {
		for _, ext := range []string{"", "w1"} {
			in, err := f.Inbox(ctx, callers[name], services.InboxQuery{Extension: ext})
			add("inbox "+name+" "+ext, in, err)
		}
	}
	since := ""
	for {
		page, err := f.Events(ctx, reader, services.EventsQuery{Since: since, Limit: "5"})
		add("events", page, err)
		if len(page.Events) == 0 {
			break
		}
		since = page.Cursor
	}
	claims, err := f.ListClaims(ctx, reader, services.ClaimsQuery{})
	add("claims", claims, err)
	for _, c := range claims.Claims {
		v, err := f.GetClaim(ctx, reader, c.ID)
		add("claim "+c.ID, v, err)
	}
	raw, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func export(t *testing.T, f *services.Forum) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := f.Export(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestForumMovesWithNothingLost moves a forum from SQLite to PostgreSQL
// and from PostgreSQL to SQLite: exported again from where it landed, the
// bundle is the same bytes; read through the services, the forum answers
// the same (tokens and passwords work, cursors held before the move stay
// valid); new ids and log positions come after the imported ones.
func TestForumMovesWithNothingLost(t *testing.T) {
	for _, move := range [][2]string{{"sqlite", "postgres"}, {"postgres", "sqlite"}} {
		t.Run(move[0]+"→"+move[1], func(t *testing.T) {
			fromDB, toDB := dbtest.Fresh(t, move[0]), dbtest.Fresh(t, move[1])
			w := &world{t: t, db: fromDB, forum: services.New(fromDB, services.Config{Now: steppingClock()}), ctx: context.Background()}
			to := services.New(toDB, services.Config{Now: steppingClock()})
			m := buildMovingForum(t, w)
			before := m.reading(t, w.forum)
			bundle := export(t, w.forum)

			header, err := to.Import(w.ctx, bytes.NewReader(bundle))
			if err != nil {
				t.Fatal(err)
			}
			if header.Rows() != int64(bytes.Count(bundle, []byte("\n"))-1) {
				t.Fatalf("header counts %d rows, the bundle holds %d", header.Rows(), bytes.Count(bundle, []byte("\n"))-1)
			}
			if again := export(t, to); !bytes.Equal(again, bundle) {
				t.Fatalf("the bundle exported after the move differs:\n%s", firstDifference(bundle, again))
			}
			if after := m.reading(t, to); after != before {
				t.Fatalf("the forum reads differently after the move:\n%s", firstDifference([]byte(before), []byte(after)))
			}
			if _, err := to.SignIn(w.ctx, "ada", "correct horse battery", "test"); err != nil {
				t.Fatalf("ada's password after the move: %v", err)
			}
			if _, err := to.SessionCaller(w.ctx, m.session); err == nil {
				t.Fatal("a browser session moved: sessions are left out")
			}

			// Cursors kept from before the move see exactly what is new.
			alice, _ := to.Authenticate(w.ctx, m.secrets["alice"])
			bob, _ := to.Authenticate(w.ctx, m.secrets["bob"])
			events, _ := to.Events(w.ctx, alice, services.EventsQuery{Limit: "200"})
			inbox, _ := to.Inbox(w.ctx, bob, services.InboxQuery{Limit: "200"})
			moved := &world{t: t, db: toDB, forum: to, ctx: w.ctx}
			// An idempotency key travels: bob's retry after the move is a replay.
			if p := moved.must(bob, env{"kind": "ask", "body": "Anyone for a review?", "idempotency_key": "review-1"}); !p.Replayed {
				t.Fatalf("bob's retry after the move stored a new message %s", p.Message.ID)
			}
			fresh := moved.must(alice, env{"kind": "ask", "body": "First question after the move"})
			newEvents, err := to.Events(w.ctx, alice, services.EventsQuery{Since: events.Cursor})
			if err != nil || len(newEvents.Events) != 1 || newEvents.Events[0].Thread != fresh.Thread.ID {
				t.Fatalf("events since the cursor held before the move: %+v (%v)", newEvents.Events, err)
			}
			newInbox, err := to.Inbox(w.ctx, bob, services.InboxQuery{Since: inbox.Cursor})
			if err != nil || len(newInbox.Items) != 1 || newInbox.Items[0].Thread.ID != fresh.Thread.ID {
				t.Fatalf("inbox since the cursor held before the move: %+v (%v)", newInbox.Items, err)
			}
			var maxThread, maxMessage, maxEvent int64
			fromDB.Raw("SELECT MAX(id) FROM threads").Scan(&maxThread)
			fromDB.Raw("SELECT MAX(id) FROM messages").Scan(&maxMessage)
			fromDB.Raw("SELECT MAX(seq) FROM events").Scan(&maxEvent)
			if fresh.Thread.ID != services.ThreadKey(maxThread+1) || fresh.Message.ID != services.MessageKey(maxMessage+1) {
				t.Fatalf("new ids %s %s, want the next after %d and %d", fresh.Thread.ID, fresh.Message.ID, maxThread, maxMessage)
			}
			var newSeq int64
			toDB.Raw("SELECT MAX(seq) FROM events").Scan(&newSeq)
			if newSeq <= maxEvent {
				t.Fatalf("new log position %d is not above the imported %d", newSeq, maxEvent)
			}
		})
	}
}

// TestImportKeepsNewPositionsAboveFarOnes imports into PostgreSQL a forum
// whose log positions lie far above what this server's transaction ids
// give (as from a busier server): new positions must still come after
// them, and readers must see them.
func TestImportKeepsNewPositionsAboveFarOnes(t *testing.T) {
	cfg := services.Config{Now: bundleClock}
	fromDB, toDB := dbtest.Fresh(t, "sqlite"), dbtest.Fresh(t, "postgres")
	w := &world{t: t, db: fromDB, forum: services.New(fromDB, cfg), ctx: context.Background()}
	m := buildMovingForum(t, w)
	const far = int64(1) << 52
	bundle := rewriteRows(t, export(t, w.forum), func(table string, row map[string]json.RawMessage) {
		for _, col := range []string{"seq", "turn_seq", "activity_seq"} {
			if raw, ok := row[col]; ok && (table == "events" || table == "threads") {
				var n int64
				json.Unmarshal(raw, &n)
				row[col] = json.RawMessage(fmt.Sprint(n + far))
			}
		}
	})
	to := services.New(toDB, cfg)
	if _, err := to.Import(w.ctx, bytes.NewReader(bundle)); err != nil {
		t.Fatal(err)
	}
	alice, _ := to.Authenticate(w.ctx, m.secrets["alice"])
	events, err := to.Events(w.ctx, alice, services.EventsQuery{Limit: "200"})
	if err != nil || len(events.Events) == 0 {
		t.Fatalf("imported events: %d (%v)", len(events.Events), err)
	}
	moved := &world{t: t, db: toDB, forum: to, ctx: w.ctx}
	fresh := moved.must(alice, env{"kind": "ask", "body": "After a move from afar"})
	next, err := to.Events(w.ctx, alice, services.EventsQuery{Since: events.Cursor})
	if err != nil || len(next.Events) != 1 || next.Events[0].Thread != fresh.Thread.ID {
		t.Fatalf("the new event after the far positions: %+v (%v)", next.Events, err)
	}
	var first, last int64
	toDB.Raw("SELECT MIN(seq), MAX(seq) FROM events").Row().Scan(&first, &last)
	if first < far || last <= first {
		t.Fatalf("positions %d..%d", first, last)
	}
}

// TestImportRefuses: a database with a forum, a bundle from a newer
// schema, a bundle cut short or with a column this schema lacks; each
// leaves the database as it was.
func TestImportRefuses(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		src := &world{t: t, db: dbtest.Fresh(t, "sqlite"), ctx: ctx}
		src.forum = services.New(src.db, services.Config{Now: bundleClock})
		buildMovingForum(t, src)
		bundle := export(t, src.forum)
		target := services.New(db, services.Config{})
		lines := bytes.SplitAfter(bundle, []byte("\n"))

		latest, _ := migrations.Latest(models.Dialect(db))
		newer := bytes.Replace(bundle, []byte(fmt.Sprintf(`"schema_version":%d`, latest)), []byte(fmt.Sprintf(`"schema_version":%d`, latest+1)), 1)
		for name, c := range map[string]struct {
			bundle []byte
			want   string
		}{
			"newer schema":     {newer, services.ErrBundleNewer.Error()},
			"cut short":        {bytes.Join(lines[:len(lines)-2], nil), "EOF"},
			"one row too many": {append(append([]byte{}, bundle...), lines[len(lines)-2]...), "more rows than its header counts"},
			"unknown column": {bytes.Replace(bundle, []byte(`"columns":["created_at","id","name","password_hash"]`),
				[]byte(`"columns":["created_at","id","name","password_hash","shoe_size"]`), 1), "shoe_size"},
			"not a bundle": {[]byte(`{"hello":"world"}` + "\n"), "not a Parley bundle"},
		} {
			_, err := target.Import(ctx, bytes.NewReader(c.bundle))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
			}
			var n int64
			db.Raw("SELECT COUNT(*) FROM messages").Scan(&n)
			if n != 0 {
				t.Fatalf("%s: a refused import left %d messages behind", name, n)
			}
		}
		if _, err := target.Import(ctx, bytes.NewReader(bundle)); err != nil {
			t.Fatal(err)
		}
		if _, err := target.Import(ctx, bytes.NewReader(bundle)); !errors.Is(err, services.ErrNotEmpty) {
			t.Fatalf("a second import: %v, want ErrNotEmpty", err)
		}
	})
}

// TestBundleCoversEverySchemaTable: every table of the schema is carried or
// left out with a reason, on both databases; a table that is neither (one
// a later migration adds) stops the export instead of going missing.
func TestBundleCoversEverySchemaTable(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		forum := services.New(db, services.Config{})
		if _, err := forum.Export(context.Background(), io.Discard); err != nil {
			t.Fatalf("a fresh schema does not export: %v", err)
		}
		if err := db.Exec("CREATE TABLE widgets (id INTEGER PRIMARY KEY)").Error; err != nil {
			t.Fatal(err)
		}
		_, err := forum.Export(context.Background(), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "widgets is neither carried nor left out") {
			t.Fatalf("export with an unknown table: %v", err)
		}
	})
}

// rewriteRows applies fn to every row of a bundle.
func rewriteRows(t *testing.T, bundle []byte, fn func(table string, row map[string]json.RawMessage)) []byte {
	t.Helper()
	lines := bytes.SplitAfter(bundle, []byte("\n"))
	var out bytes.Buffer
	out.Write(lines[0])
	for _, l := range lines[1:] {
		if len(l) == 0 {
			continue
		}
		var line struct {
			Table string                     `json:"table"`
			Row   map[string]json.RawMessage `json:"row"`
		}
		if err := json.Unmarshal(l, &line); err != nil {
			t.Fatal(err)
		}
		fn(line.Table, line.Row)
		raw, _ := json.Marshal(line)
		out.Write(append(raw, '\n'))
	}
	return out.Bytes()
}

// firstDifference shows where two texts part.
func firstDifference(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-300)
	return fmt.Sprintf("before: …%s…\nafter:  …%s…", a[from:min(len(a), i+200)], b[from:min(len(b), i+200)])
}
