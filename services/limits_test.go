package services_test

import (
	"fmt"
	"testing"

	"parley/services"
)

func TestThreadLimits(t *testing.T) {
	limits := services.DefaultLimits()
	limits.ThreadMaxMessages, limits.ThreadMaxDepth = 4, 3
	eachWorldWith(t, services.Config{Limits: limits}, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		root := w.must(alice, env{"kind": "ask", "body": "deep?"})
		th := root.Thread.ID
		l2 := w.must(bob, env{"kind": "answer", "thread": th, "body": "level 2"})
		l3 := w.must(alice, env{"kind": "clarify", "thread": th, "parent": l2.Message.ID, "body": "level 3"})
		w.refused(bob, env{"kind": "note", "thread": th, "parent": l3.Message.ID, "body": "level 4"}, services.LimitExceeded, "parent")
		w.must(bob, env{"kind": "note", "thread": th, "body": "message 4"})
		w.refused(bob, env{"kind": "note", "thread": th, "body": "message 5"}, services.LimitExceeded, "thread")
		if got := w.thread(th).Thread.MessageCount; got != 4 {
			t.Fatalf("message_count %d, want 4", got)
		}
	})
}

func TestReferenceLimits(t *testing.T) {
	l := services.DefaultLimits()
	want := services.Limits{BodyMaxChars: 500, ExtensionMaxChars: 64, ProvenanceFieldMaxChars: 200, ThreadMaxMessages: 1000,
		ThreadMaxDepth: 32, PageDefault: 50, PageMax: 200, EvidenceMaxItems: 8, EvidenceRefMaxChars: 2048,
		SupersedesMaxItems: 8, RequestMaxBytes: 16384, PostsPerMinute: 120, RequestsPerMinute: 1200,
		// §13 (profile feed)
		WaitMaxSeconds: 30, StreamsPerToken: 4, WaitsPerToken: 8,
		// §14 (profile guard)
		GuardRecentBodies: 20, GuardChainMax: 12, GuardThreadRunMax: 100, ReplyByMaxHours: 168,
		GuardRecentBodiesParty: 50, GuardDuplicateWindowHours: 24,
		// §15.3 (profile witness)
		VerifyQuorum: 2,
		// Beyond §9: the search operation's.
		SearchQueryMaxChars: 200, SearchCandidates: 2000,
		// §15.4 (profile witness)
		BlobMaxBytes: 1048576, BlobBytesPerHour: 16777216}
	if l != want {
		t.Fatalf("limits %+v differ from docs/protocol.md §9, §14 and §15 %+v", l, want)
	}
}

func TestDepth32IsAllowed33Refused(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		// A model and a human take turns, so that the guard's chain and
		// body rules (§14) never come into play: this is about depth.
		a, b := w.agent("a"), w.human("b")
		p := w.must(a, env{"kind": "ask", "body": "root"})
		th, parent := p.Thread.ID, p.Message.ID
		for level := 2; level <= 32; level++ {
			who := b
			if level%2 == 1 {
				who = a
			}
			parent = w.must(who, env{"kind": "note", "thread": th, "parent": parent, "body": fmt.Sprintf("level %d", level)}).Message.ID
		}
		w.refused(a, env{"kind": "note", "thread": th, "parent": parent, "body": "level 33"}, services.LimitExceeded, "parent")
	})
}
