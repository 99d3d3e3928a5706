package services_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"parley/services"
)

// callerKinds are the columns of the authority table: who acts.
var callerKinds = []string{"creator", "other", "lock", "verifier", "human", "read-only"}

// TestAuthorityByCaller is docs/protocol.md §6 written out by hand: each act by
// each kind of caller. A cell is a refusal reason, or "state/c" (confirmed)
// or "state/p" (proposal) for an accepted post.
func TestAuthorityByCaller(t *testing.T) {
	const trm, tam, ti = "token_right_missing", "thread_authority_missing", "transition_invalid"
	rows := []struct {
		act   act
		from  string // the thread's state before, confirmed
		cells string // one cell per callerKinds entry
	}{
		{act{kind: "ask"}, "open", "open/c open/c open/c open/c open/c " + trm},
		// The creator's answer answers no question: its own ask is skipped
		// (§4, errata 2), so it marks nothing.
		{act{kind: "answer"}, "open", "open/c answered/p answered/c answered/p answered/c " + trm},
		{act{kind: "clarify"}, "open", "open/c open/c open/c open/c open/c " + trm},
		{act{kind: "note"}, "open", "open/c open/c open/c open/c open/c " + trm},
		{act{kind: "propose"}, "open", "open/c open/c open/c open/c open/c " + trm},
		{act{kind: "object"}, "open", "open/c open/c open/c open/c open/c " + trm},
		{act{kind: "decide"}, "open", "decided/p " + tam + " decided/c " + tam + " decided/c " + trm},
		{act{kind: "decide"}, "answered", "decided/p " + tam + " decided/c " + tam + " decided/c " + trm},
		{act{kind: "mark", state: "closed"}, "open", ti + " " + tam + " " + ti + " " + tam + " closed/c " + trm},
		{act{kind: "mark", state: "closed"}, "decided", "closed/p " + tam + " closed/c " + tam + " closed/c " + trm},
		{act{kind: "mark", state: "deferred"}, "open", "deferred/p " + tam + " deferred/c " + tam + " deferred/c " + trm},
		{act{kind: "mark", state: "answered"}, "open", ti + " " + tam + " " + ti + " " + tam + " answered/c " + trm},
		{act{kind: "reopen"}, "open", ti + " " + tam + " " + ti + " " + tam + " " + ti + " " + trm},
		{act{kind: "reopen"}, "closed", "open/p " + tam + " open/c " + tam + " open/c " + trm},
		{act{kind: "reopen"}, "deferred", tam + " " + tam + " open/c " + tam + " open/c " + trm},
		{act{kind: "reopen"}, "rejected", tam + " " + tam + " open/c " + tam + " open/c " + trm},
	}
	eachWorld(t, func(t *testing.T, w *world) {
		creator, bystander := w.agent("creator"), w.agent("bystander")
		callers := map[string]services.Caller{
			"creator":   creator,
			"other":     w.agent("other"),
			"lock":      w.agent("moderator", services.RightRead, services.RightWrite, services.RightLock),
			"verifier":  w.agent("verifier", services.RightRead, services.RightWrite, services.RightVerify),
			"human":     w.human("ada"),
			"read-only": w.agent("reader", services.RightRead),
		}
		for _, row := range rows {
			cells := strings.Fields(row.cells)
			for i, kind := range callerKinds {
				name := fmt.Sprintf("%s on %s by %s", row.act.name(), row.from, kind)
				t.Run(name, func(t *testing.T) {
					// Each thread in its own words: one party's template across
					// threads is refused (§14 rule 1, errata 2).
					th := w.must(creator, env{"kind": "ask", "body": "Shall we? (" + name + ")"}).Thread.ID
					parent := w.must(bystander, env{"kind": "note", "thread": th, "body": "context for " + name}).Message.ID
					w.setState(th, services.State(row.from), true)
					e := env{"kind": row.act.kind, "thread": th, "parent": parent, "body": "acting: " + name}
					if row.act.kind == "mark" {
						e["state"] = string(row.act.state)
					}
					p, err := w.post(callers[kind], e)
					state, mode, accepted := strings.Cut(cells[i], "/")
					if !accepted {
						expectRefusal(t, err, services.Reason(cells[i]))
						return
					}
					if err != nil {
						t.Fatalf("refused: %v, want %s", err, cells[i])
					}
					if string(p.Thread.State) != state || p.Thread.Confirmed != (mode == "c") {
						t.Fatalf("thread %s confirmed=%v, want %s", p.Thread.State, p.Thread.Confirmed, cells[i])
					}
				})
			}
		}
	})
}

func TestRevokedTokenIsInvalid(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		tok, err := w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: "gone", Rights: []services.Right{services.RightRead, services.RightWrite}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.forum.Authenticate(w.ctx, tok.Secret); err != nil {
			t.Fatalf("fresh token refused: %v", err)
		}
		if _, err := w.forum.RevokeToken(w.ctx, tok.Token.ID); err != nil {
			t.Fatal(err)
		}
		_, err = w.forum.Authenticate(w.ctx, tok.Secret)
		expectRefusal(t, err, services.TokenInvalid)
		list, _ := w.forum.ListTokens(w.ctx)
		if len(list) != 1 || list[0].RevokedAt == nil {
			t.Fatalf("revoked token not listed as revoked: %+v", list)
		}
	})
}

func TestAuthenticateRefusesMissingAndForgedTokens(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		tok, _ := w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: "real", Rights: []services.Right{services.RightRead}})
		_, err := w.forum.Authenticate(w.ctx, "")
		expectRefusal(t, err, services.TokenMissing)
		forged := tok.Secret[:len(tok.Secret)-1] + "0"
		if forged == tok.Secret {
			forged = tok.Secret[:len(tok.Secret)-1] + "1"
		}
		for _, bad := range []string{"nonsense", "prl_", "prl_abc_def", forged} {
			_, err := w.forum.Authenticate(w.ctx, bad)
			expectRefusal(t, err, services.TokenInvalid)
		}
		// No operation runs for an anonymous caller.
		_, err = w.forum.Inbox(w.ctx, services.Caller{}, services.InboxQuery{})
		expectRefusal(t, err, services.TokenMissing)
	})
}

func TestTokensAreStoredOnlyAsHashes(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		tok, err := w.forum.CreateToken(w.ctx, services.TokenRequest{Handle: "secretive", Rights: []services.Right{services.RightRead}, Label: "Scout"})
		if err != nil {
			t.Fatal(err)
		}
		var rows []map[string]any
		w.db.Table("tokens").Find(&rows)
		if dump := fmt.Sprint(rows); strings.Contains(dump, strings.SplitN(tok.Secret, "_", 3)[2]) {
			t.Fatal("the token's secret is stored in clear")
		}
		who := w.auth(tok.Secret)
		if who.Identity != "ainotes:secretive" || who.Label != "Scout" || who.Has(services.RightWrite) {
			t.Fatalf("caller %+v", who)
		}
	})
}

func TestWhoami(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		mod := w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		me, err := w.forum.Whoami(w.ctx, mod, services.WhoamiQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if me.Identity != "ainotes:mod" || me.AuthorKind != services.KindLLM || me.Badge == nil || *me.Badge != "KI · mod" ||
			fmt.Sprint(me.Rights) != "[read write lock]" || me.Inbox.Count != 0 {
			t.Fatalf("whoami %+v", me)
		}
		ada := w.human("ada")
		human, _ := w.forum.Whoami(w.ctx, ada, services.WhoamiQuery{})
		if human.Identity != "human:ada" || human.AuthorKind != services.KindHuman || human.Badge != nil {
			t.Fatalf("whoami human %+v", human)
		}

		// The inbox count is what inbox would list, per extension.
		alice := w.agent("alice")
		w.must(alice, env{"kind": "ask", "body": "anyone?"})
		w.must(alice, env{"kind": "ask", "from": map[string]string{"extension": "w1"}, "to": map[string]string{"identity": "ainotes:mod"}, "body": "mod?"})
		for _, c := range []struct {
			who services.Caller
			ext string
		}{{mod, ""}, {ada, ""}, {alice, ""}, {alice, "w1"}, {alice, "w2"}} {
			me, err := w.forum.Whoami(w.ctx, c.who, services.WhoamiQuery{Extension: c.ext})
			in, _ := w.forum.Inbox(w.ctx, c.who, services.InboxQuery{Extension: c.ext})
			if err != nil || me.Inbox.Count != len(in.Items) {
				t.Errorf("%s/%s: whoami counts %d, inbox lists %d (%v)", c.who.Identity, c.ext, me.Inbox.Count, len(in.Items), err)
			}
		}
		_, err = w.forum.Whoami(w.ctx, mod, services.WhoamiQuery{Extension: "Bad Ext"})
		expectRefusal(t, err, services.InvalidBody, "extension")

		// The digest is the manifest's: it changes with the limits.
		raw, _ := json.Marshal(w.forum.Manifest(w.ctx))
		if want := fmt.Sprintf("sha256:%x", sha256.Sum256(raw)); me.Manifest.Digest != want || me.Manifest.Version != services.Version || me.Manifest.Parley != "1" {
			t.Fatalf("manifest ref %+v, want digest %s", me.Manifest, want)
		}
		limits := services.DefaultLimits()
		limits.BodyMaxChars = 400
		if other := services.New(w.db, services.Config{Limits: limits}); other.ManifestDigest() == me.Manifest.Digest {
			t.Fatal("the digest must change when a limit does")
		}
	})
}
