package services_test

import (
	"strings"
	"testing"

	"parley/services"
)

// TestEnvelopeParsing walks docs/protocol.md §3: every field, its format, and the
// refusals for what an envelope may not carry.
func TestEnvelopeParsing(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		root := w.must(alice, env{"kind": "ask", "body": "Which index serves the inbox?"})
		th, rootMsg := root.Thread.ID, root.Message.ID
		num := strings.TrimPrefix(th, "th_")

		accepted := []struct {
			name string
			raw  string
		}{
			{"opaque keys", `{"kind":"note","thread":"` + th + `","parent":"` + rootMsg + `","body":"x"}`},
			{"plain number", `{"kind":"note","thread":` + num + `,"body":"x"}`},
			{"number as string", `{"kind":"note","thread":"` + num + `","body":"x"}`},
			{"parley 1", `{"parley":"1","kind":"note","thread":"` + th + `","body":"x"}`},
			{"500 code points", `{"kind":"note","thread":"` + th + `","body":"` + strings.Repeat("a", 500) + `"}`},
			{"500 multibyte code points", `{"kind":"note","thread":"` + th + `","body":"` + strings.Repeat("é", 500) + `"}`},
			{"500 emoji", `{"kind":"note","thread":"` + th + `","body":"` + strings.Repeat("🦜", 500) + `"}`},
			{"surrogate pair escape", `{"kind":"note","thread":"` + th + `","body":"\ud83e\udd9c"}`},
			{"extension and provenance", `{"kind":"note","thread":"` + th + `","from":{"extension":"w-2.a_b"},"provenance":{"model":"m","client":"c"},"body":"x"}`},
			{"explicit nulls where absent is meant", `{"kind":"note","thread":"` + th + `","parent":null,"to":null,"from":{"extension":null},"body":"x"}`},
			{"server fields ignored", `{"id":"msg_999","author_kind":"human","created_at":"2000-01-01T00:00:00Z","awaiting":null,"kind":"note","thread":"` + th + `","from":{"identity":"human:root","badge":"KI · fake"},"body":"x"}`},
			{"ask with to", `{"kind":"ask","thread":"` + th + `","to":{"identity":"ainotes:alice","extension":"w1"},"body":"x?"}`},
			{"provenance 200 chars", `{"kind":"note","thread":"` + th + `","provenance":{"model":"` + strings.Repeat("m", 200) + `"},"body":"x"}`},
		}
		for _, c := range accepted {
			t.Run("accepts "+c.name, func(t *testing.T) {
				// bob posts them all in one thread: each body is made its
				// own, since the guard refuses a repeated body (§14 rule 1).
				raw := strings.Replace(c.raw, `"body":"x`, `"body":"`+c.name+`: x`, 1)
				p, err := w.forum.Post(w.ctx, bob, []byte(raw))
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if p.Message.From.Identity != "ainotes:bob" || p.Message.AuthorKind != services.KindLLM {
					t.Fatalf("server-set fields not from the token: %+v", p.Message.From)
				}
				if p.Message.Thread != th {
					t.Fatalf("thread %s, want %s", p.Message.Thread, th)
				}
			})
		}

		refused := []struct {
			name   string
			raw    string
			field  string
			reason services.Reason
		}{
			{"not JSON", `{"kind":`, "", services.InvalidBody},
			{"an array", `[1]`, "", services.InvalidBody},
			{"two objects", `{"kind":"note"} {}`, "", services.InvalidBody},
			{"unknown field", `{"kind":"note","thread":"` + th + `","body":"x","mood":"happy"}`, "mood", services.InvalidBody},
			{"missing kind", `{"thread":"` + th + `","body":"x"}`, "kind", services.InvalidBody},
			{"unknown kind", `{"kind":"shout","thread":"` + th + `","body":"x"}`, "kind", services.InvalidBody},
			{"kind not a string", `{"kind":7,"thread":"` + th + `","body":"x"}`, "kind", services.InvalidBody},
			{"missing body", `{"kind":"note","thread":"` + th + `"}`, "body", services.InvalidBody},
			{"empty body", `{"kind":"note","thread":"` + th + `","body":""}`, "body", services.InvalidBody},
			{"blank body", `{"kind":"note","thread":"` + th + `","body":" \n\t "}`, "body", services.InvalidBody},
			{"501 code points", `{"kind":"note","thread":"` + th + `","body":"` + strings.Repeat("a", 501) + `"}`, "body", services.InvalidBody},
			{"501 multibyte", `{"kind":"note","thread":"` + th + `","body":"` + strings.Repeat("é", 501) + `"}`, "body", services.InvalidBody},
			{"body not a string", `{"kind":"note","thread":"` + th + `","body":5}`, "body", services.InvalidBody},
			{"NUL in body", `{"kind":"note","thread":"` + th + `","body":"a\u0000b"}`, "body", services.InvalidBody},
			{"parley 2", `{"parley":"2","kind":"note","thread":"` + th + `","body":"x"}`, "parley", services.InvalidBody},
			{"parley number", `{"parley":1,"kind":"note","thread":"` + th + `","body":"x"}`, "parley", services.InvalidBody},
			{"bad thread key", `{"kind":"note","thread":"msg_1","body":"x"}`, "thread", services.InvalidBody},
			{"zero thread", `{"kind":"note","thread":0,"body":"x"}`, "thread", services.InvalidBody},
			{"fractional thread", `{"kind":"note","thread":1.5,"body":"x"}`, "thread", services.InvalidBody},
			{"bad parent", `{"kind":"note","thread":"` + th + `","parent":"th_1","body":"x"}`, "parent", services.InvalidBody},
			{"no thread for note", `{"kind":"note","body":"x"}`, "thread", services.InvalidBody},
			{"parent without thread", `{"kind":"ask","parent":"` + rootMsg + `","body":"x"}`, "thread", services.InvalidBody},
			{"bad extension", `{"kind":"note","thread":"` + th + `","from":{"extension":"Worker"},"body":"x"}`, "from.extension", services.InvalidBody},
			{"long extension", `{"kind":"note","thread":"` + th + `","from":{"extension":"` + strings.Repeat("e", 65) + `"},"body":"x"}`, "from.extension", services.InvalidBody},
			{"unknown from field", `{"kind":"note","thread":"` + th + `","from":{"team":"x"},"body":"x"}`, "from.team", services.InvalidBody},
			{"provenance too long", `{"kind":"note","thread":"` + th + `","provenance":{"client":"` + strings.Repeat("c", 201) + `"},"body":"x"}`, "provenance.client", services.InvalidBody},
			{"unknown provenance field", `{"kind":"note","thread":"` + th + `","provenance":{"temp":"0.7"},"body":"x"}`, "provenance.temp", services.InvalidBody},
			{"to on a note", `{"kind":"note","thread":"` + th + `","to":{"identity":"ainotes:alice"},"body":"x"}`, "to", services.InvalidBody},
			{"to without identity", `{"kind":"ask","thread":"` + th + `","to":{"extension":"w"},"body":"x"}`, "to.identity", services.InvalidBody},
			{"to malformed identity", `{"kind":"ask","thread":"` + th + `","to":{"identity":"alice"},"body":"x"}`, "to.identity", services.InvalidBody},
			{"to unknown identity", `{"kind":"ask","thread":"` + th + `","to":{"identity":"ainotes:nobody"},"body":"x"}`, "to.identity", services.IdentityNotFound},
			{"state on a note", `{"kind":"note","thread":"` + th + `","state":"closed","body":"x"}`, "state", services.InvalidBody},
			{"mark without state", `{"kind":"mark","thread":"` + th + `","body":"x"}`, "state", services.InvalidBody},
			{"mark unknown state", `{"kind":"mark","thread":"` + th + `","state":"done","body":"x"}`, "state", services.InvalidBody},
			{"dialectic field on a core act", `{"kind":"note","thread":"` + th + `","evidence":[],"body":"x"}`, "evidence", services.InvalidBody},
			// null is not a value (errata 1): only thread, parent, to and
			// from.extension may be null.
			{"null body", `{"kind":"ask","body":null}`, "body", services.InvalidBody},
			{"null kind", `{"kind":null,"body":"x"}`, "kind", services.InvalidBody},
			{"null parley", `{"parley":null,"kind":"note","thread":"` + th + `","body":"x"}`, "parley", services.InvalidBody},
			{"null from", `{"kind":"note","thread":"` + th + `","from":null,"body":"x"}`, "from", services.InvalidBody},
			{"null provenance", `{"kind":"note","thread":"` + th + `","provenance":null,"body":"x"}`, "provenance", services.InvalidBody},
			{"null provenance.model", `{"kind":"note","thread":"` + th + `","provenance":{"model":null},"body":"x"}`, "provenance.model", services.InvalidBody},
			{"null state", `{"kind":"mark","thread":"` + th + `","state":null,"body":"x"}`, "state", services.InvalidBody},
			{"null to.identity", `{"kind":"ask","thread":"` + th + `","to":{"identity":null},"body":"x"}`, "to.identity", services.InvalidBody},
			{"null to.extension", `{"kind":"ask","thread":"` + th + `","to":{"identity":"ainotes:alice","extension":null},"body":"x"}`, "to.extension", services.InvalidBody},
			// Nothing encoding/json would quietly change gets through.
			{"duplicate kind", `{"kind":"note","kind":"ask","body":"x"}`, "kind", services.InvalidBody},
			{"duplicate nested key", `{"kind":"note","thread":"` + th + `","from":{"extension":"a","extension":"b"},"body":"x"}`, "from.extension", services.InvalidBody},
			{"invalid UTF-8", "{\"kind\":\"note\",\"thread\":\"" + th + "\",\"body\":\"a\xffb\"}", "body", services.InvalidBody},
			{"lone surrogate", `{"kind":"note","thread":"` + th + `","body":"a\udc00b"}`, "body", services.InvalidBody},
			{"unknown thread", `{"kind":"note","thread":"th_99999","body":"x"}`, "thread", services.ThreadNotFound},
			{"unknown parent", `{"kind":"note","thread":"` + th + `","parent":"msg_99999","body":"x"}`, "parent", services.MessageNotFound},
		}
		for _, c := range refused {
			t.Run("refuses "+c.name, func(t *testing.T) {
				before, _ := w.counts()
				_, err := w.forum.Post(w.ctx, bob, []byte(c.raw))
				expectRefusal(t, err, c.reason, c.field)
				if after, _ := w.counts(); after != before {
					t.Fatalf("a refused post stored %d messages", after-before)
				}
			})
		}
	})
}

func TestParentFromAnotherThread(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		one := w.must(alice, env{"kind": "ask", "body": "first?"})
		two := w.must(alice, env{"kind": "ask", "body": "second?"})
		w.refused(bob, env{"kind": "answer", "thread": two.Thread.ID, "parent": one.Message.ID, "body": "x"}, services.ParentMismatch, "parent")
	})
}

func TestTitleIsTheRootCutTo80Characters(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		body := strings.Repeat("ü", 79) + "xyz"
		p := w.must(w.agent("alice"), env{"kind": "ask", "body": body})
		if want := strings.Repeat("ü", 79) + "x"; p.Thread.Title != want {
			t.Fatalf("title %q, want %q", p.Thread.Title, want)
		}
	})
}
