package services_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"parley/migrations"
	"parley/migrations/dbtest"
	"parley/services"
)

// search runs a search as a reader and fails the test on a refusal.
func (w *world) search(q services.SearchQuery) services.SearchPage {
	w.t.Helper()
	page, err := w.forum.Search(w.ctx, w.reader(), q)
	if err != nil {
		w.t.Fatalf("search %+v: %v", q, err)
	}
	return page
}

func (w *world) reader() services.Caller {
	return services.Caller{Identity: "test:reader", Kind: services.KindLLM, Rights: []services.Right{services.RightRead}}
}

// hitIDs lists the messages of a page's hits.
func hitIDs(p services.SearchPage) []string {
	ids := []string{}
	for _, h := range p.Hits {
		ids = append(ids, h.Message.ID)
	}
	return ids
}

func TestSearchFindsWordsStemsIdentifiersAndPhrases(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, carol := w.agent("alice"), w.agent("bob"), w.agent("carol")
		ask := w.must(alice, env{"kind": "ask", "body": "Which port should linkd listen on?"})
		answer := w.must(bob, env{"kind": "answer", "thread": ask.Thread.ID, "body": "8443: 443 belongs to the proxy. See linkd.conf and ListThreads."})
		other := w.must(carol, env{"kind": "ask", "body": "Running the migrations twice breaks nothing?"})
		for _, c := range []struct {
			q       string
			want    []string
			snippet string // in the first hit's snippet
		}{
			{"port", []string{ask.Message.ID}, "Which «port» should"},
			{"PORT", []string{ask.Message.ID}, "«port»"},
			{"ports", []string{ask.Message.ID}, "«port»"},                     // a stem finds the word
			{"runs", []string{other.Message.ID}, "«Running»"},                 // and the word the stem
			{"linkd", []string{ask.Message.ID, answer.Message.ID}, "«linkd»"}, // a title first
			{"linkd.conf", []string{answer.Message.ID}, "See «linkd.conf» and"},
			{`"belongs to the proxy"`, []string{answer.Message.ID}, "«belongs to the proxy»"},
			{`"proxy belongs"`, []string{}, ""}, // a phrase keeps its order
			{"ListThreads", []string{answer.Message.ID}, "«ListThreads»"},
			{"8443", []string{answer.Message.ID}, "«8443»"},
			{"linkd 8443", []string{answer.Message.ID}, "«8443»"}, // every term must match
			{"how to configure the proxy", []string{}, ""},        // configure is nowhere
			{"what is the proxy", []string{answer.Message.ID}, "«proxy»"},
			{"the", []string{other.Message.ID, answer.Message.ID}, "«the»"}, // stop words alone are searched for
			{"zebra", []string{}, ""},
		} {
			page := w.search(services.SearchQuery{Q: c.q})
			if got := hitIDs(page); strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("q %q: hits %v, want %v", c.q, got, c.want)
				continue
			}
			if page.Cursor != nil {
				t.Errorf("q %q: a cursor on the only page", c.q)
			}
			if len(page.Hits) > 0 && !strings.Contains(page.Hits[0].Snippet, c.snippet) {
				t.Errorf("q %q: snippet %q lacks %q", c.q, page.Hits[0].Snippet, c.snippet)
			}
		}
		hit := w.search(services.SearchQuery{Q: "8443"}).Hits[0]
		if hit.Thread.ID != ask.Thread.ID || hit.Message.Body != answer.Message.Body || hit.Message.Kind != "answer" {
			t.Fatalf("a hit carries its thread and its whole message: %+v", hit)
		}
	})
}

// TestSearchRanksTitlesFirstAndBreaksTiesByNewest: a thread's title (its
// root message's opening) outweighs the same words in a reply, even an
// older one; equal scores go newest first.
func TestSearchRanksTitlesFirstAndBreaksTiesByNewest(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		titled := w.must(alice, env{"kind": "ask", "body": "Deploy linkd to staging today?"})
		other := w.must(alice, env{"kind": "ask", "body": "Something else entirely"})
		reply := w.must(bob, env{"kind": "note", "thread": other.Thread.ID, "body": "We should deploy linkd after the fix."})
		reply2 := w.must(bob, env{"kind": "note", "thread": titled.Thread.ID, "body": "Deploy linkd, then watch the logs."})
		got := hitIDs(w.search(services.SearchQuery{Q: "deploy linkd"}))
		want := []string{titled.Message.ID, reply2.Message.ID, reply.Message.ID}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("order %v, want the title first, then the replies newest first %v", got, want)
		}
	})
}

func TestSearchFilters(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob, mod := w.agent("alice"), w.agent("bob"), w.agent("mod", services.RightRead, services.RightWrite, services.RightLock)
		t1 := w.must(alice, env{"kind": "ask", "body": "cache eviction policy?"})
		a1 := w.must(bob, env{"kind": "answer", "thread": t1.Thread.ID, "body": "LRU cache, sized by memory."})
		t2 := w.must(bob, env{"kind": "ask", "body": "cache warmup on deploy?"})
		n2 := w.must(alice, env{"kind": "note", "thread": t2.Thread.ID, "body": "The cache warms in a minute."})
		w.must(mod, env{"kind": "mark", "thread": t2.Thread.ID, "state": "deferred", "body": "Later."})
		for _, c := range []struct {
			name string
			q    services.SearchQuery
			want []string
		}{
			{"all", services.SearchQuery{Q: "cache"}, []string{t2.Message.ID, t1.Message.ID, n2.Message.ID, a1.Message.ID}},
			{"thread", services.SearchQuery{Q: "cache", Thread: t1.Thread.ID}, []string{t1.Message.ID, a1.Message.ID}},
			{"thread as a number", services.SearchQuery{Q: "cache", Thread: strings.TrimPrefix(t2.Thread.ID, "th_")}, []string{t2.Message.ID, n2.Message.ID}},
			{"kind", services.SearchQuery{Q: "cache", Kind: "ask"}, []string{t2.Message.ID, t1.Message.ID}},
			{"author", services.SearchQuery{Q: "cache", Author: "ainotes:alice"}, []string{t1.Message.ID, n2.Message.ID}},
			{"state", services.SearchQuery{Q: "cache", State: "deferred"}, []string{t2.Message.ID, n2.Message.ID}},
			{"all filters", services.SearchQuery{Q: "cache", Thread: t1.Thread.ID, Kind: "answer", Author: "ainotes:bob", State: "answered"}, []string{a1.Message.ID}},
			{"no such author", services.SearchQuery{Q: "cache", Author: "ainotes:nobody"}, []string{}},
		} {
			// Titles first (the roots), then the replies; each newest first.
			if got := hitIDs(w.search(c.q)); strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("%s: hits %v, want %v", c.name, got, c.want)
			}
		}
	})
}

// TestSearchPagesWithoutGapsOrRepeats pages through hits of mixed scores
// three at a time and must see exactly the one long page, in its order.
func TestSearchPagesWithoutGapsOrRepeats(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		root := w.must(alice, env{"kind": "ask", "body": "retry budget for the gateway"})
		for i := range 8 {
			body := fmt.Sprintf("note %d about the retry budget", i)
			if i%3 == 0 {
				body = fmt.Sprintf("note %d: retry, retry and retry again", i)
			}
			w.must(bob, env{"kind": "note", "thread": root.Thread.ID, "body": body})
		}
		all := hitIDs(w.search(services.SearchQuery{Q: "retry"}))
		if len(all) != 9 {
			t.Fatalf("%d hits, want 9", len(all))
		}
		var paged []string
		cursor := ""
		for range 10 {
			page := w.search(services.SearchQuery{Q: "retry", Cursor: cursor, Limit: "3"})
			paged = append(paged, hitIDs(page)...)
			if page.Cursor == nil {
				break
			}
			cursor = *page.Cursor
		}
		if strings.Join(paged, ",") != strings.Join(all, ",") {
			t.Fatalf("paged %v, want %v", paged, all)
		}
	})
}

// TestSearchRanksOnlyTheNewestCandidates: past search_candidates matches,
// the oldest are left out.
func TestSearchRanksOnlyTheNewestCandidates(t *testing.T) {
	limits := services.DefaultLimits()
	limits.SearchCandidates = 5
	eachWorldWith(t, services.Config{Limits: limits}, func(t *testing.T, w *world) {
		alice := w.agent("alice")
		var ids []string
		for i := range 8 {
			ids = append(ids, w.must(alice, env{"kind": "ask", "body": fmt.Sprintf("candidate %d", i)}).Message.ID)
		}
		got := hitIDs(w.search(services.SearchQuery{Q: "candidate"}))
		want := []string{ids[7], ids[6], ids[5], ids[4], ids[3]}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("hits %v, want the newest five %v", got, want)
		}
	})
}

// TestSearchSnippets: marks are unambiguous, nothing is markup, long bodies
// are cut around the first match.
func TestSearchSnippets(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice := w.agent("alice")
		w.must(alice, env{"kind": "ask", "body": "<b>bold</b> & «quoted» text\n\n  about   tokens"})
		long := strings.Repeat("filler words go here ", 20) + "and the needle sits near the end of it all"
		w.must(alice, env{"kind": "ask", "body": long})

		s := w.search(services.SearchQuery{Q: "tokens"}).Hits[0].Snippet
		if s != "<b>bold</b> & ‹quoted› text about «tokens»" {
			t.Fatalf("snippet %q", s)
		}
		parts := services.SnippetParts(s)
		if len(parts) != 2 || parts[1] != (services.SnippetPart{Text: "tokens", Match: true}) || parts[0].Match {
			t.Fatalf("parts %+v", parts)
		}
		s = w.search(services.SearchQuery{Q: "needle"}).Hits[0].Snippet
		if !strings.HasPrefix(s, "…") || !strings.Contains(s, "the «needle» sits") || utf8.RuneCountInString(s) > 170 {
			t.Fatalf("long snippet %q (%d characters)", s, utf8.RuneCountInString(s))
		}
		s = w.search(services.SearchQuery{Q: "filler"}).Hits[0].Snippet
		if !strings.HasPrefix(s, "«filler»") || !strings.HasSuffix(s, "…") {
			t.Fatalf("snippet of an early match %q", s)
		}
	})
}

// TestSnippetMarksAfterMarkup: a match right after a tag or an entity in
// the body is marked on its own characters. The run of punctuation and
// spaces before it was taken into the match ("<b> zq1" gave "<b«> zq1»").
func TestSnippetMarksAfterMarkup(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice := w.agent("alice")
		for _, c := range []struct{ body, q, want string }{
			{"<b> zq1", "zq1", "<b> «zq1»"},
			{"&amp; zq2 x", "zq2", "&amp; «zq2» x"},
			{"a <i>zq3</i> b", "zq3", "a <i>«zq3»</i> b"},
			{"&lt;b&gt; zq4", "zq4", "&lt;b&gt; «zq4»"},
			{"é <b> zq5, «zq6».", "zq5 zq6", "é <b> «zq5, ‹zq6»›."},
			{"<a href=x> zq7.conf", `"zq7 conf"`, "<a href=x> «zq7.conf»"},
		} {
			w.must(alice, env{"kind": "ask", "body": c.body})
			if s := w.search(services.SearchQuery{Q: c.q}).Hits[0].Snippet; s != c.want {
				t.Errorf("%q, q %s: snippet %q, want %q", c.body, c.q, s, c.want)
			}
		}
	})
}

func TestSearchRefusals(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice := w.agent("alice")
		w.must(alice, env{"kind": "ask", "body": "anything"})
		for _, c := range []struct {
			q      services.SearchQuery
			reason services.Reason
			field  string
		}{
			{services.SearchQuery{}, services.InvalidBody, "q"},
			{services.SearchQuery{Q: "   "}, services.InvalidBody, "q"},
			{services.SearchQuery{Q: "?! -- ..."}, services.InvalidBody, "q"},
			{services.SearchQuery{Q: strings.Repeat("a", 201)}, services.InvalidBody, "q"},
			{services.SearchQuery{Q: "x", Cursor: "garbage"}, services.InvalidBody, "cursor"},
			{services.SearchQuery{Q: "x", Cursor: "c1.MTA"}, services.InvalidBody, "cursor"}, // a list cursor
			{services.SearchQuery{Q: "x", Cursor: "s1.bm90IGEgY3Vyc29y"}, services.InvalidBody, "cursor"},
			{services.SearchQuery{Q: "x", Thread: "x"}, services.InvalidBody, "thread"},
			{services.SearchQuery{Q: "x", Thread: "th_99"}, services.ThreadNotFound, "thread"},
			{services.SearchQuery{Q: "x", Kind: "shout"}, services.InvalidBody, "kind"},
			{services.SearchQuery{Q: "x", State: "bogus"}, services.InvalidBody, "state"},
			{services.SearchQuery{Q: "x", Limit: "500"}, services.InvalidBody, "limit"},
		} {
			_, err := w.forum.Search(w.ctx, w.reader(), c.q)
			expectRefusal(t, err, c.reason, c.field)
		}
		_, err := w.forum.Search(w.ctx, services.Caller{}, services.SearchQuery{Q: "x"})
		expectRefusal(t, err, services.TokenMissing)
	})
}

// TestSearchIndexFollowsEveryMessage: messages stored before the index
// existed and after are found alike (the migration indexed what was there;
// every later insert is indexed with it).
func TestSearchIndexFollowsEveryMessage(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			db, ctx := dbtest.Empty(t, dialect), context.Background()
			if _, err := migrations.UpTo(ctx, db, 5); err != nil {
				t.Fatal(err)
			}
			w := &world{t: t, db: db, forum: services.New(db, services.Config{}), ctx: ctx}
			if err := w.forum.Seed(ctx, 20, 3, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := migrations.Up(ctx, db); err != nil {
				t.Fatal(err)
			}
			if err := w.forum.Seed(ctx, 10, 3, nil); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{"topic 17", "topic 27"} { // before and after the migration
				page := w.search(services.SearchQuery{Q: q, Limit: "10"})
				if len(page.Hits) != 3 || page.Hits[0].Message.Kind != "ask" {
					t.Fatalf("%s: %v", q, hitIDs(page))
				}
			}
		})
	}
}
