package main

import (
	"context"
	"log/slog"
	"time"

	"parley/services"
)

// sealAfter is how long the sealer lets writes pass before it looks for a
// full bucket of the search index: a bucket fills every 16,384 messages,
// so one look per sealAfter of writing is plenty, and costs four short
// statements when nothing is full.
const sealAfter = 10 * time.Second

// sealRetry is how soon the sealer looks again while a full bucket waits
// for its writers to end (services.SealSearchBuckets).
const sealRetry = 3 * time.Second

// sealSearch seals the search index's full buckets until ctx ends
// (services/search_seal.go), and closes done when it has stopped: at
// start (a forum upgraded with many messages is sealed then), sealAfter
// after a write of any process, every sealRetry while a bucket waits, and
// not at all while the forum is idle. Several servers may seal one
// database; the database keeps them from doing a bucket twice.
func sealSearch(ctx context.Context, forum *services.Forum, logger *slog.Logger, done chan<- struct{}) {
	defer close(done)
	for {
		pending, news, err := forum.SealSearchBuckets(ctx)
		if err != nil && ctx.Err() == nil {
			logger.Warn("search seal", "err", err)
			pending = true
		}
		if !pending {
			select {
			case <-ctx.Done():
				return
			case <-news:
			}
		}
		wait := sealRetry
		if !pending {
			wait = sealAfter
		}
		if !pause(ctx, wait) {
			return
		}
	}
}
