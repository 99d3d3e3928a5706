package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"parley/internal/cli"
)

// runBenchSeed loads a large forum for benchmarks: threads × messages per
// thread, in bulk, with what the services would have stored.
func runBenchSeed(args []string) error {
	fs := cli.NewFlagSet("parley-lab bench seed", "parley-lab bench seed --db URL [--threads N] [--messages N]")
	threads := fs.Int("threads", 100000, "how many `threads` to add")
	messages := fs.Int("messages", 1000000, "how many `messages` in all (spread evenly over the threads)")
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
	err = forum.Seed(ctx, *threads, per, func(done int) {
		fmt.Fprintf(os.Stderr, "\r%d / %d threads", done, *threads)
	})
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return err
	}
	fmt.Printf("seeded %d threads of %d messages (%d messages) in %s\n", *threads, per, *threads*per, time.Since(start).Round(time.Millisecond))
	return nil
}
