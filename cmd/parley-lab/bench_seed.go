package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"parley/internal/cli"
	"parley/services"
)

// runBenchSeed loads a large forum for benchmarks: threads × messages per
// thread, in bulk, with what the services would have stored.
func runBenchSeed(args []string) error {
	fs := cli.NewFlagSet("parley-lab bench seed", "parley-lab bench seed --db URL [--threads N] [--messages N] [--old-word WORD --old-threads N]")
	threads := fs.Int("threads", 100000, "how many `threads` to add")
	messages := fs.Int("messages", 1000000, "how many `messages` in all (spread evenly over the threads)")
	oldWord := fs.String("old-word", "", "a `word` to end every message of the first --old-threads threads with, and none after them (a word absent from the newest messages)")
	oldThreads := fs.Int("old-threads", 0, "how many of the first `threads` carry --old-word")
	var cfg cli.Config
	cfg.DBFlag(fs)
	cfg.RealmFlag(fs)
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	if *threads < 1 || *messages < *threads {
		return cli.Usagef("bench seed: need at least one thread and one message per thread")
	}
	ctx := context.Background()
	forum, closeDB, err := cfg.Forum(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	start := time.Now()
	per := *messages / *threads
	err = forum.SeedWith(ctx, services.SeedPlan{Threads: *threads, PerThread: per, OldWord: *oldWord, OldThreads: *oldThreads, Progress: func(done int) {
		fmt.Fprintf(os.Stderr, "\r%d / %d threads", done, *threads)
	}})
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return err
	}
	fmt.Printf("seeded %d threads of %d messages (%d messages) in %s\n", *threads, per, *threads*per, time.Since(start).Round(time.Millisecond))
	return nil
}
