package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"parley/internal/cli"
	"parley/services"
)

// searchMix is what bench search asks of a forum made by bench seed, whose
// messages read "Seeded topic N: which option?" (the roots) and "Seeded
// remark K on topic N": rare words (a topic's number), words in a tenth of
// the messages or in all of them, a stem, a phrase, filters, a word found
// nowhere, and "vintage": the word bench seed --old-word vintage puts in
// the oldest messages only (found nowhere on a forum seeded without it).
// {n} is a random topic number.
var searchMix = []services.SearchQuery{
	{Q: "topic {n}"},
	{Q: "{n}"},
	{Q: "option {n}", Kind: "ask"},
	{Q: "remark {n}", State: "open"},
	{Q: `"which option"`},
	{Q: "remark 7"},
	{Q: "seeded"},
	{Q: "remarks"},
	{Q: "zebra"},
	{Q: "vintage"},
	{Q: "vintage", Kind: "ask"},
	{Q: "vintage", State: "open"},
	{Q: "seeded", Kind: "ask"},
}

// runBenchSearch measures search latency in-process, through the services
// (no HTTP), one query at a time, cycling through searchMix, and prints
// each query's plan: EXPLAIN ANALYZE on PostgreSQL.
func runBenchSearch(args []string) error {
	fs := cli.NewFlagSet("parley-lab bench search", "parley-lab bench search --db URL [--queries N] [--threads N] [--seal=false] [--explain] [--json]")
	queries := fs.Int("queries", 2000, "how many `searches` to time")
	threads := fs.Int("threads", 100000, "the seeded forum's thread count, for the topic numbers")
	seal := fs.Bool("seal", true, "first seal the search index's full buckets, as parley serve does as it runs (--seal=false: time the search with the buckets as they are)")
	explain := fs.Bool("explain", false, "print each query's plan (EXPLAIN ANALYZE on PostgreSQL)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	var cfg cli.Config
	cfg.DBFlag(fs)
	cfg.RealmFlag(fs)
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	ctx := context.Background()
	forum, closeDB, err := cfg.Forum(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	if *seal {
		if err := sealAll(ctx, forum); err != nil {
			return err
		}
	}
	reader := services.Caller{Identity: "bench:reader", Kind: services.KindLLM, Rights: []services.Right{services.RightRead}}
	topic := func() string { return strconv.Itoa(1 + rand.IntN(*threads)) }
	if *explain {
		for _, q := range searchMix {
			q = withTopic(q, topic())
			plan, err := forum.ExplainSearch(ctx, q, true)
			if err != nil {
				return err
			}
			fmt.Printf("-- q=%q kind=%q state=%q\n%s\n\n", q.Q, q.Kind, q.State, plan)
		}
	}
	// A warm-up pass, so that the figures are of a running server's cache.
	for _, q := range searchMix {
		if _, err := forum.Search(ctx, reader, withTopic(q, topic())); err != nil {
			return err
		}
	}
	all := make([]time.Duration, 0, *queries)
	each := make([][]time.Duration, len(searchMix))
	start := time.Now()
	for i := range *queries {
		q := withTopic(searchMix[i%len(searchMix)], topic())
		t0 := time.Now()
		if _, err := forum.Search(ctx, reader, q); err != nil {
			return fmt.Errorf("search %+v: %w", q, err)
		}
		took := time.Since(t0)
		all = append(all, took)
		each[i%len(searchMix)] = append(each[i%len(searchMix)], took)
	}
	results := []benchResult{summarize("search (all)", "services", 1, time.Since(start), all, map[string]int{})}
	for i, q := range searchMix {
		var took time.Duration
		for _, d := range each[i] {
			took += d
		}
		results = append(results, summarize(mixLabel(q), "services", 1, took, each[i], map[string]int{}))
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	printTable(os.Stdout, results)
	return nil
}

// sealAll seals every full bucket of the search index, waiting as parley
// serve would for each one's writers to end (services.SealSearchBuckets).
func sealAll(ctx context.Context, forum *services.Forum) error {
	start := time.Now()
	for {
		pending, _, err := forum.SealSearchBuckets(ctx)
		if err != nil || !pending {
			fmt.Fprintf(os.Stderr, "search buckets sealed in %s\n", time.Since(start).Round(time.Millisecond))
			return err
		}
		time.Sleep(time.Second)
	}
}

// mixLabel names a query of the mix in the table.
func mixLabel(q services.SearchQuery) string {
	label := "q=" + q.Q
	if q.Kind != "" {
		label += " kind=" + q.Kind
	}
	if q.State != "" {
		label += " state=" + q.State
	}
	return label
}

func withTopic(q services.SearchQuery, n string) services.SearchQuery {
	q.Q = strings.ReplaceAll(q.Q, "{n}", n)
	return q
}
