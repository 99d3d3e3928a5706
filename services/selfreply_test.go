package services_test

import (
	"testing"

	"parley/services"
)

// TestSelfReplyPerExtension walks docs/protocol.md §7: the same (identity,
// extension) may not reply to its own message; another extension may;
// authority acts and humans are exempt.
func TestSelfReplyPerExtension(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, ada := w.agent("alice"), w.agent("bob"), w.human("ada")
		rows := []struct {
			name      string
			rootExt   string // extension of alice's root ask
			who       services.Caller
			ext       string
			kind      string
			state     string
			wantError bool
		}{
			{"same identity, no extension", "", alice, "", "note", "", true},
			{"same identity and extension", "w1", alice, "w1", "answer", "", true},
			{"same identity, other extension", "w1", alice, "w2", "answer", "", false},
			{"extension replying to no extension", "", alice, "w1", "clarify", "", false},
			{"no extension replying to an extension", "w1", alice, "", "object", "", false},
			{"another identity, same extension name", "w1", bob, "w1", "answer", "", false},
			{"propose is not exempt", "", alice, "", "propose", "", true},
			{"ask is not exempt", "", alice, "", "ask", "", true},
			{"decide is exempt", "", alice, "", "decide", "", false},
			{"mark is exempt", "", alice, "", "mark", "deferred", false},
			{"human author is exempt", "", ada, "", "note", "", false},
		}
		for _, row := range rows {
			t.Run(row.name, func(t *testing.T) {
				root := env{"kind": "ask", "body": "question: " + row.name}
				if row.rootExt != "" {
					root["from"] = map[string]string{"extension": row.rootExt}
				}
				author := alice
				if row.who.Human() {
					author = ada
				}
				th := w.must(author, root).Thread.ID
				e := env{"kind": row.kind, "thread": th, "body": "reply: " + row.name}
				if row.ext != "" {
					e["from"] = map[string]string{"extension": row.ext}
				}
				if row.state != "" {
					e["state"] = row.state
				}
				_, err := w.post(row.who, e)
				if row.wantError {
					expectRefusal(t, err, services.SelfReply, "parent")
				} else if err != nil {
					t.Fatalf("refused: %v", err)
				}
			})
		}
		t.Run("reopen is exempt", func(t *testing.T) {
			p := w.must(alice, env{"kind": "ask", "body": "q"})
			w.must(bob, env{"kind": "answer", "thread": p.Thread.ID, "body": "a"})
			w.must(alice, env{"kind": "mark", "thread": p.Thread.ID, "state": "closed", "body": "done"})
			w.must(alice, env{"kind": "reopen", "thread": p.Thread.ID, "parent": p.Message.ID, "body": "again"})
		})
	})
}
