package migrations_test

import (
	"context"
	"fmt"
	"testing"

	"parley/migrations"
	"parley/migrations/dbtest"
	"parley/services"
)

// TestIdempotencyOverTheSchemaBefore: migration 13 (idempotency keys)
// applied to a forum written at schema 12, on both databases. The thread
// written before it reads as it did, and a keyed post in it stores one
// message however often it is sent.
func TestIdempotencyOverTheSchemaBefore(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			db := dbtest.Empty(t, dialect)
			ctx := context.Background()
			if _, err := migrations.UpTo(ctx, db, 12); err != nil {
				t.Fatal(err)
			}
			before := services.New(db, services.Config{Limits: beforeOwners()})
			tok, err := before.CreateToken(ctx, services.TokenRequest{Handle: "alice", Rights: []services.Right{services.RightRead, services.RightWrite}})
			if err != nil {
				t.Fatal(err)
			}
			who, err := before.Authenticate(ctx, tok.Secret)
			if err != nil {
				t.Fatal(err)
			}
			root, err := before.Post(ctx, who, []byte(`{"kind":"ask","body":"Written before migration 13?"}`))
			if err != nil {
				t.Fatal(err)
			}

			if applied, err := migrations.Up(ctx, db); err != nil || len(applied) == 0 || applied[0] != 13 {
				t.Fatalf("migrated %v, %v; want 13 first", applied, err)
			}
			after := services.New(db, services.Config{})
			env := []byte(fmt.Sprintf(`{"kind":"note","thread":%q,"body":"And after it.","from":{"extension":"w2"},"idempotency_key":"retry-1"}`, root.Thread.ID))
			first, err := after.Post(ctx, who, env)
			if err != nil {
				t.Fatal(err)
			}
			again, err := after.Post(ctx, who, env)
			if err != nil || !again.Replayed || again.Message.ID != first.Message.ID || first.Replayed {
				t.Fatalf("the retry: %+v, %v; want a replay of %s", again.Message, err, first.Message.ID)
			}
			view, err := after.ReadThread(ctx, who, services.ThreadQuery{Thread: root.Thread.ID})
			if err != nil {
				t.Fatal(err)
			}
			if view.Thread.MessageCount != 2 || view.Thread.ID != root.Thread.ID {
				t.Fatalf("thread after the migration: %+v, want the old root and one note", view.Thread)
			}
		})
	}
}
