package main_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"parley/models"
	"parley/services"
)

// TestServeSealsTheSearchIndex: on a forum with a full bucket of the
// search index (16,384 messages), serve files the bucket's words
// (services/search_seal.go) without being asked — the settling included,
// which is why this test takes some seconds — and a search through the
// API finds the messages of the sealed bucket.
func TestServeSealsTheSearchIndex(t *testing.T) {
	db := postgresSchema(t)
	tokens := agentTokens(t, db, 1)
	gdb, err := models.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if sqlDB, err := gdb.DB(); err == nil {
		t.Cleanup(func() { sqlDB.Close() })
	}
	// 1,700 threads of 10: the first bucket full, the second begun; the
	// first 100 threads end with "vintage".
	plan := services.SeedPlan{Threads: 1700, PerThread: 10, OldWord: "vintage", OldThreads: 100}
	if err := services.New(gdb, services.Config{}).SeedWith(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, db, nil)
	sealed := func() (n int64) {
		if err := gdb.Raw("SELECT count(*) FROM search_buckets WHERE words @@ 'vintage'::tsquery").Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	for give := time.Now().Add(time.Minute); sealed() != 1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(give) {
			t.Fatalf("the full bucket is not sealed a minute after serve started\n%s", p.Tail())
		}
	}
	status, out, err := call(http.DefaultClient, "GET", p.URL("/api/v1/search?q="+url.QueryEscape("vintage")), tokens[0], nil)
	if err != nil || status != http.StatusOK {
		t.Fatalf("search: %d %v %v", status, out, err)
	}
	hits, _ := out["hits"].([]any)
	if len(hits) != 50 { // the default page; a thousand messages hold the word
		t.Fatalf("search for vintage found %d once sealed, want a page of 50", len(hits))
	}
	for _, h := range hits {
		body, _ := h.(map[string]any)["message"].(map[string]any)["body"].(string)
		if !strings.Contains(body, "vintage") {
			t.Fatalf("search for vintage found %q", body)
		}
	}
}
