package services

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"parley/models"
)

// feedChannel names the PostgreSQL notification channel of the log: its
// payload is the highest new log position. Channels are per database, not
// per schema, so the name carries the schema: forums in other schemas of
// the same database neither hear nor wake each other.
func (f *Forum) feedChannel(ctx context.Context) (string, error) {
	var schema string
	if err := f.db.WithContext(ctx).Raw("SELECT current_schema()").Scan(&schema).Error; err != nil {
		return "", err
	}
	return FeedChannel(schema), nil
}

// FeedChannel is the notification channel of the log of the forum in
// schema, quoted for LISTEN: what a process outside the services (the
// lab's bare handler) listens to for the forum's news.
func FeedChannel(schema string) string {
	return pgx.Identifier{"parley_log_" + schema}.Sanitize()
}

// feedBackstop is how often the hub wakes its waiters even without news, so
// that a notification lost with a crashed process delays nothing longer.
const feedBackstop = 5 * time.Second

// feedPoll is how often the hub wakes its waiters while the LISTEN
// connection is down or hears nothing (see checkFeed): waiters poll the
// database instead, at this interval rather than the backstop's.
const feedPoll = 200 * time.Millisecond

// listenBackoff is the first wait before the LISTEN connection is tried
// again; it doubles up to listenBackoffMax, and starts over once a
// connection has listened.
const (
	listenBackoff    = 100 * time.Millisecond
	listenBackoffMax = 5 * time.Second
)

// notifyGap is the least time between two NOTIFYs of one process. Each
// NOTIFY costs a round trip and wakes every listening connection of every
// process, and under load one was sent for nearly every post: PostgreSQL
// spent a tenth of a post's CPU on them. A write after a quiet spell is
// announced at once; under load one NOTIFY carries every position
// committed in the gap, so a waiter hears of a write at most this much
// later.
const notifyGap = 5 * time.Millisecond

// StartFeed connects this process to the log's notifications, so that its
// waiting reads and streams learn of writes made by any process on the same
// PostgreSQL database (docs/protocol.md §13): one LISTEN connection to
// listenURL, outside the pool (a direct or session-pooled URL: see
// --db-listen-url), which reconnects with back-off and, each time it
// (re)connects, wakes every waiter to read the log again — whatever was
// written while it was away is found there. The listener checks itself at
// each connection and every feedCheckEvery (checkFeed): while it is down
// or hears nothing, waiters poll every feedPoll and FeedProblem says why.
// Writes of this process are announced by one notifier goroutine, which
// sends at most one NOTIFY at a time (and one per notifyGap) carrying the
// highest position committed meanwhile, after commit: a NOTIFY inside the
// writing transaction would serialize commits on PostgreSQL's notification
// queue lock.
//
// On SQLite, writes wake this process's hub directly, and StartFeed starts
// a watcher of the file for the writes of other processes (store_sqlite_watch.go).
// Without StartFeed, a forum is one process, woken by its own writes.
func (f *Forum) StartFeed(ctx context.Context, listenURL string, log *slog.Logger) {
	if !models.IsPostgres(listenURL) {
		f.watchSQLite(ctx, listenURL, log)
		return
	}
	channel, err := f.feedChannel(ctx)
	if err != nil {
		log.Warn("feed: no channel; waiting reads wake only on this process's writes", "err", err)
		return
	}
	f.notify = make(chan notice, 1024)
	f.listener.start()
	go f.notifier(ctx, channel, log)
	go f.listen(ctx, listenURL, channel, log)
	go f.checkFeed(ctx, channel, log)
	go f.backstop(ctx)
}

func (f *Forum) notifier(ctx context.Context, channel string, log *slog.Logger) {
	var sent time.Time
	for {
		var n notice
		select {
		case <-ctx.Done():
			return
		case n = <-f.notify:
		}
		if rest := notifyGap - time.Since(sent); rest > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(rest):
			}
		}
		audience := map[string]bool{}
		add := func(n notice) {
			for _, a := range n.audience {
				audience[a] = true
			}
		}
		add(n)
	drain:
		for {
			select {
			case more := <-f.notify:
				n.pos = max(n.pos, more.pos)
				add(more)
			default:
				break drain
			}
		}
		payload := strconv.FormatInt(n.pos, 10)
		for a := range audience {
			payload += " " + a
		}
		if len(payload) > 7000 { // NOTIFY payloads stop at 8000 bytes
			payload = strconv.FormatInt(n.pos, 10) + " " + audienceAnyone
		}
		nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := f.db.WithContext(nctx).Exec("SELECT pg_notify(?, ?)", strings.Trim(channel, `"`), payload).Error
		cancel()
		sent = time.Now()
		if err != nil || f.listener.deaf() {
			// The listeners' reconnection and backstop make up for it;
			// this process's own waiters are told at once (and so they
			// are while its own listener hears nothing).
			if err != nil {
				log.Warn("feed: notify failed", "err", err)
			}
			f.hub.advance(n.pos, n.audience...)
		}
	}
}

func (f *Forum) listen(ctx context.Context, url, channel string, log *slog.Logger) {
	backoff := listenBackoff
	for ctx.Err() == nil {
		listened, err := f.listenOnce(ctx, url, channel)
		f.listener.setListening(false)
		if ctx.Err() != nil {
			return
		}
		if listened {
			// A connection that listened ends an outage: the next one
			// starts over from the shortest wait (issue 23 item 8).
			backoff = listenBackoff
		}
		log.Warn("feed: listener lost; reconnecting; waiting reads poll meanwhile", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, listenBackoffMax)
	}
}

// listenOnce holds one LISTEN connection until it fails; listened says
// whether it got as far as listening.
func (f *Forum) listenOnce(ctx context.Context, url, channel string) (listened bool, err error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return false, err
	}
	f.listener.setListening(true)
	f.hub.advance(0) // catch up: read the log again from each waiter's cursor
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		fields := strings.Fields(n.Payload)
		if len(fields) == 0 {
			continue
		}
		if fields[0] == probePayload {
			f.listener.heard(fields[1:])
			continue
		}
		pos, _ := strconv.ParseInt(fields[0], 10, 64)
		f.hub.advance(pos, fields[1:]...)
	}
}

// backstop wakes the waiters of this process when the log took writes
// they may not have heard of: a notification lost with a crashed process,
// a notice the notifier dropped, a listener that is down or deaf. Every
// feedBackstop (feedPoll while the listener is down or deaf) it asks the
// database, in one shared query, whether anything became final since its
// last look (logAdvanced), and wakes everyone only then — so waiting reads
// and streams with nothing happening cost the database one query per
// process and interval, not one read per waiter (issue 31). It cannot
// tell a heard write from an unheard one, so under activity it wakes
// everyone once per interval, as it always did.
func (f *Forum) backstop(ctx context.Context) {
	var seen int64 // 0: the first look finds whatever the log holds, and wakes once
	for {
		wait := feedBackstop
		if f.listener.deaf() {
			wait = feedPoll
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		case <-f.listener.changed():
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, f.queryTimeout)
		horizon, advanced, err := f.logAdvanced(qctx, seen)
		cancel()
		if err != nil || advanced {
			f.hub.advance(0) // a look that failed cannot rule news out
		}
		if err == nil {
			seen = horizon
		}
	}
}
