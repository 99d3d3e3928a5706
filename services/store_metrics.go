package services

import (
	"context"
	"fmt"
	"time"

	"parley/models"
)

// Gauges is what the operator's metrics read from the database at scrape
// time (web/metrics.go): counts over the whole database, so that every
// server behind a load balancer reports the same figures, and no process
// has to count what it did not see. No identity or text is in it.
type Gauges struct {
	Posts       map[[2]string]int64 // by message kind and author kind ("llm", "human")
	Claims      map[string]int64    // by status
	Escalations int64               // escalate events recorded, ever
	Overdue     int64               // escalated threads whose turn is still open
	Open        map[string]int64    // calls holding a slot, by kind: stream, wait, live
}

// Gauges counts, in a few grouped queries, what Gauges holds. Each is an
// aggregate over an indexed or small table but a scan all the same: the
// caller caches the answer (web/metrics.go) rather than run it per scrape.
func (f *Forum) Gauges(ctx context.Context) (Gauges, error) {
	ctx, cancel := context.WithTimeout(ctx, f.queryTimeout)
	defer cancel()
	db := f.db.WithContext(ctx)
	g := Gauges{Posts: map[[2]string]int64{}, Claims: map[string]int64{}, Open: map[string]int64{}}
	var posts []struct {
		Kind, AuthorKind string
		N                int64
	}
	if err := db.Model(&models.Message{}).Select("kind, author_kind, count(*) AS n").Group("kind, author_kind").Scan(&posts).Error; err != nil {
		return g, fmt.Errorf("gauges: posts: %w", err)
	}
	for _, p := range posts {
		g.Posts[[2]string{p.Kind, p.AuthorKind}] = p.N
	}
	var claims []struct {
		Status string
		N      int64
	}
	if err := db.Model(&models.Claim{}).Select("status, count(*) AS n").Group("status").Scan(&claims).Error; err != nil {
		return g, fmt.Errorf("gauges: claims: %w", err)
	}
	for _, c := range claims {
		g.Claims[c.Status] = c.N
	}
	if err := db.Model(&models.Event{}).Where("type = ?", "escalate").Count(&g.Escalations).Error; err != nil {
		return g, fmt.Errorf("gauges: escalations: %w", err)
	}
	if err := db.Model(&models.Thread{}).Where("escalated_at IS NOT NULL").Where("record_state NOT IN ?", terminalStates()).
		Count(&g.Overdue).Error; err != nil {
		return g, fmt.Errorf("gauges: overdue: %w", err)
	}
	// Counted as openSlot counts them: a wait until its ends_at, a stream
	// or /live row while its process refreshes it.
	now := f.timestamp()
	var open []struct {
		Kind string
		N    int64
	}
	if err := db.Model(&models.Stream{}).Select("kind, count(*) AS n").
		Where("(kind = ? AND ends_at > ?) OR (kind <> ? AND seen_at > ?)", string(slotWait), now, string(slotWait), now.Add(-streamFresh)).
		Group("kind").Scan(&open).Error; err != nil {
		return g, fmt.Errorf("gauges: open calls: %w", err)
	}
	for _, o := range open {
		g.Open[o.Kind] = o.N
	}
	return g, nil
}

// PoolStats is the database pool's state, as database/sql reports it, for
// the metrics (the bindings do not import database/sql).
type PoolStats struct {
	Max, InUse, Idle int
	WaitCount        int64
	WaitDuration     time.Duration
}

// PoolStats reads the pool's counters; zero if the pool cannot be reached.
func (f *Forum) PoolStats() PoolStats {
	sqlDB, err := f.db.DB()
	if err != nil {
		return PoolStats{}
	}
	s := sqlDB.Stats()
	return PoolStats{Max: s.MaxOpenConnections, InUse: s.InUse, Idle: s.Idle, WaitCount: s.WaitCount, WaitDuration: s.WaitDuration}
}

// FeedHealth is the LISTEN connection's state for the metrics: whether
// this process listens at all (PostgreSQL), whether waiters are woken
// (not degraded), and the round trip of its last self-check heard
// (NOTIFY through the pool until the listener hears it: the feed's lag
// from a commit to a waiter's wake-up, measured once a minute).
type FeedHealth struct {
	On, Degraded bool
	RoundTrip    time.Duration // zero until a self-check was heard
}

// FeedHealth reports the feed's state.
func (f *Forum) FeedHealth() FeedHealth {
	s := &f.listener
	s.mu.Lock()
	defer s.mu.Unlock()
	return FeedHealth{On: s.on, Degraded: s.on && (!s.listening || s.deafSince != ""), RoundTrip: s.roundTrip}
}
