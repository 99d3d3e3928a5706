package services_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/models"
	"parley/services"
)

// world is a forum on a fresh database with helpers to act in it.
type world struct {
	t     *testing.T
	db    *gorm.DB
	forum *services.Forum
	ctx   context.Context
}

// eachWorld runs fn on SQLite and, when configured, on PostgreSQL.
func eachWorld(t *testing.T, fn func(t *testing.T, w *world)) {
	eachWorldWith(t, services.Config{}, fn)
}

func eachWorldWith(t *testing.T, cfg services.Config, fn func(t *testing.T, w *world)) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		fn(t, &world{t: t, db: db, forum: services.New(db, cfg), ctx: context.Background()})
	})
}

// agent creates a token for a model and returns its caller, authenticated
// the way a binding would.
func (w *world) agent(handle string, rights ...services.Right) services.Caller {
	w.t.Helper()
	if len(rights) == 0 {
		rights = []services.Right{services.RightRead, services.RightWrite}
	}
	tok, err := w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: handle, Rights: rights})
	if err != nil {
		w.t.Fatalf("create token %s: %v", handle, err)
	}
	return w.auth(tok.Secret)
}

// human creates an account and a token acting as it.
func (w *world) human(name string) services.Caller {
	w.t.Helper()
	if err := w.forum.AddUser(w.ctx, name, "correct horse battery"); err != nil {
		w.t.Fatalf("add user %s: %v", name, err)
	}
	tok, err := w.forum.CreateToken(w.ctx, services.TokenRequest{Human: name})
	if err != nil {
		w.t.Fatalf("create human token: %v", err)
	}
	return w.auth(tok.Secret)
}

func (w *world) auth(secret string) services.Caller {
	w.t.Helper()
	who, err := w.forum.Authenticate(w.ctx, secret)
	if err != nil {
		w.t.Fatalf("authenticate: %v", err)
	}
	return who
}

// env is an envelope as a client would send it.
type env map[string]any

func (w *world) post(who services.Caller, e env) (services.Posted, error) {
	raw, err := json.Marshal(e)
	if err != nil {
		w.t.Fatal(err)
	}
	return w.forum.Post(w.ctx, who, raw)
}

// must posts and fails the test on refusal.
func (w *world) must(who services.Caller, e env) services.Posted {
	w.t.Helper()
	p, err := w.post(who, e)
	if err != nil {
		w.t.Fatalf("post %v as %s: %v", e, who.Identity, err)
	}
	return p
}

// refused posts and checks the refusal's reason (and field, when given).
func (w *world) refused(who services.Caller, e env, reason services.Reason, field ...string) {
	w.t.Helper()
	_, err := w.post(who, e)
	expectRefusal(w.t, err, reason, field...)
}

func expectRefusal(t *testing.T, err error, reason services.Reason, field ...string) *services.Refusal {
	t.Helper()
	var r *services.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("want refusal %s, got %v", reason, err)
	}
	if r.Reason != reason {
		t.Fatalf("want refusal %s, got %s (%s)", reason, r.Reason, r.Message)
	}
	if len(field) > 0 && r.Field != field[0] {
		t.Fatalf("refusal %s: want field %q, got %q", reason, field[0], r.Field)
	}
	if r.Status == 0 || r.Message == "" {
		t.Fatalf("refusal %s lacks status or message: %+v", reason, r)
	}
	return r
}

// thread reads a thread back from storage.
func (w *world) thread(id string) services.ThreadView {
	w.t.Helper()
	reader := services.Caller{Identity: "test:reader", Kind: services.KindLLM, Rights: []services.Right{services.RightRead}}
	v, err := w.forum.ReadThread(w.ctx, reader, services.ThreadQuery{Thread: id})
	if err != nil {
		w.t.Fatalf("read thread %s: %v", id, err)
	}
	return v
}

// counts returns how many messages and events are stored.
func (w *world) counts() (messages, events int64) {
	w.t.Helper()
	w.db.Model(&models.Message{}).Count(&messages)
	w.db.Model(&models.Event{}).Count(&events)
	return messages, events
}

// setState puts a thread into a state directly, as a fixture: confirmed
// (the state of record) or as a proposal pending on top of its current
// state of record.
func (w *world) setState(thread string, state services.State, confirmed bool) {
	w.t.Helper()
	var th models.Thread
	id, _ := services.ParseThreadRef(thread)
	if err := w.db.First(&th, id).Error; err != nil {
		w.t.Fatal(err)
	}
	record := services.State(th.RecordState)
	if confirmed {
		record = state
	}
	w.setRecord(thread, record, state)
}

// setRecord puts a thread at a state of record with, when proposal differs
// from it, a model's proposal pending on top.
func (w *world) setRecord(thread string, record, proposal services.State) {
	w.t.Helper()
	id, _ := services.ParseThreadRef(thread)
	now := time.Now().UTC()
	fields := map[string]any{
		"record_state": string(record), "record_origin": "user", "record_label": "human:fixture",
		"record_confirmed_at": now, "record_confirmed_by": "human:fixture",
		"state": string(record), "state_origin": "user", "state_label": "human:fixture", "state_confirmed_at": now,
	}
	if proposal != record {
		fields["state"], fields["state_origin"], fields["state_label"] = string(proposal), "llm", "ainotes:fixture"
		fields["state_confirmed_at"] = nil
	}
	if err := w.db.Model(&models.Thread{}).Where("id = ?", id).Updates(fields).Error; err != nil {
		w.t.Fatal(err)
	}
}

func awaitingIs(a *services.Awaiting, identity string, extension string) bool {
	if a == nil {
		return identity == ""
	}
	ext := ""
	if a.Extension != nil {
		ext = *a.Extension
	}
	return a.Identity == identity && ext == extension
}

func str(a *services.Awaiting) string {
	if a == nil {
		return "nobody"
	}
	b, _ := json.Marshal(a)
	return string(b)
}

func asRefusal(err error, r **services.Refusal) bool { return errors.As(err, r) }

// beginHeld opens a transaction on conn by hand, to be held open across
// the test's waits (a writer that has not committed). It may idle longer
// than a write transaction may (models.WriteIdleLimit, which the session
// of a direct connection holds), or PostgreSQL would end it mid-test.
func beginHeld(t *testing.T, ctx context.Context, conn *sql.Conn) {
	t.Helper()
	for _, s := range []string{"BEGIN", "SET LOCAL idle_in_transaction_session_timeout = '10min'"} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
}
