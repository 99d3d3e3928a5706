package services_test

import (
	"testing"

	"parley/services"
)

// TestDirectory: list_identities lists who can act — agents with a valid
// token (label and badge of the newest), and humans — alphabetically, with
// their last activity, in pages.
func TestDirectory(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice := w.agent("alice")
		w.agent("mod", services.RightRead, services.RightLock)
		gone := w.agent("gone")
		w.agent("carol")
		if _, err := w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: "carol", Rights: []services.Right{services.RightRead}, Label: "Carol 2"}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.forum.RevokeToken(w.ctx, gone.TokenID); err != nil {
			t.Fatal(err)
		}
		w.human("eve")
		if err := w.forum.AddUser(w.ctx, "ada", "correct horse battery"); err != nil {
			t.Fatal(err)
		}
		posted := w.must(alice, env{"kind": "ask", "body": "Who is around?"})
		w.must(alice, env{"kind": "ask", "body": "Anyone?"})

		var got []services.IdentityInfo
		cursor, pages := "", 0
		for {
			page, err := w.forum.ListIdentities(w.ctx, alice, services.IdentitiesQuery{Cursor: cursor, Limit: "2"})
			if err != nil {
				t.Fatal(err)
			}
			got, pages = append(got, page.Identities...), pages+1
			if page.Cursor == nil {
				break
			}
			cursor = *page.Cursor
		}
		want := []string{"ainotes:alice", "ainotes:carol", "ainotes:mod", "human:ada", "human:eve"}
		if len(got) != len(want) || pages != 3 {
			t.Fatalf("%d pages of %+v, want %v", pages, got, want)
		}
		for i, id := range want {
			if got[i].Identity != id {
				t.Fatalf("entry %d is %s, want %s", i, got[i].Identity, id)
			}
		}
		alicE, carol, mod, ada := got[0], got[1], got[2], got[3]
		if alicE.LastActiveAt == nil || alicE.LastActiveAt.Before(posted.Message.CreatedAt) || alicE.AuthorKind != services.KindLLM || alicE.Badge != nil {
			t.Fatalf("alice %+v", alicE)
		}
		if carol.Label != "Carol 2" || carol.LastActiveAt != nil {
			t.Fatalf("carol: the newest token's label, never active: %+v", carol)
		}
		if mod.Badge == nil || *mod.Badge != "KI · mod" {
			t.Fatalf("mod %+v", mod)
		}
		if ada.AuthorKind != services.KindHuman || ada.Label != "ada" || ada.Badge != nil {
			t.Fatalf("ada %+v", ada)
		}

		_, err := w.forum.ListIdentities(w.ctx, alice, services.IdentitiesQuery{Cursor: "c1.MA"})
		expectRefusal(t, err, services.InvalidBody, "cursor")
		_, err = w.forum.ListIdentities(w.ctx, alice, services.IdentitiesQuery{Limit: "0"})
		expectRefusal(t, err, services.InvalidBody, "limit")
		_, err = w.forum.ListIdentities(w.ctx, services.Caller{}, services.IdentitiesQuery{})
		expectRefusal(t, err, services.TokenMissing)
	})
}

// TestListProposals: list_threads with confirmed false finds every thread
// with a pending proposal; true, those without.
func TestListProposals(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		quiet := w.must(alice, env{"kind": "ask", "body": "quiet"}).Thread.ID
		proposed := w.must(alice, env{"kind": "ask", "body": "proposed"}).Thread.ID
		w.must(bob, env{"kind": "answer", "thread": proposed, "body": "yes, as proposed"})
		confirmed := w.must(alice, env{"kind": "ask", "body": "confirmed"}).Thread.ID
		w.must(bob, env{"kind": "answer", "thread": confirmed, "body": "yes, and confirmed"})
		w.must(mod, env{"kind": "mark", "thread": confirmed, "state": "answered", "body": "ok"})

		for value, want := range map[string][]string{"false": {proposed}, "true": {confirmed, quiet}} {
			page, err := w.forum.ListThreads(w.ctx, mod, services.ListQuery{Confirmed: value})
			if err != nil || !equal(threadIDs(page), want) {
				t.Fatalf("confirmed=%s: %v %v, want %v", value, threadIDs(page), err, want)
			}
		}
		_, err := w.forum.ListThreads(w.ctx, mod, services.ListQuery{Confirmed: "maybe"})
		expectRefusal(t, err, services.InvalidBody, "confirmed")
	})
}
