package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"parley/services"
)

// bareFan is the bare handler's waiting inbox: the fan-out's limit (issue
// 31, item 3), what this machine does when ten thousand parked calls are
// woken with the least code. GET /api/v1/inbox?wait=N checks the token as
// the other bare routes do, then parks its request's goroutine — Fiber's
// own way — until the log's notification channel announces a turn anyone
// may take, or the wait passes. The notification is Parley's (a Parley
// server posts the ask and NOTIFYs, as for its own waiters); each process
// then reads once, the newest turn awaiting anyone and its last message,
// encodes one page for all, and every parked call sends those bytes. It
// holds no slot row, admits without a first read and has no cursor: what
// Parley does beyond it is the protocol's (waits_per_token, the reads that
// find nothing, the since of each call). GET /parked counts the calls
// parked, for the bench to know when all of them wait.
type bareFan struct {
	mu     sync.Mutex
	next   *bareWake // the wake the calls parked now will get
	parked atomic.Int64
}

// bareWake is one notification's page: body is set before done closes.
type bareWake struct {
	done chan struct{}
	body []byte
}

func newBareFan() *bareFan { return &bareFan{next: &bareWake{done: make(chan struct{})}} }

// inbox parks a waiting call until the next wake or its wait's end (an
// empty page then, as Parley's).
func (b *bare) inbox(c *fiber.Ctx) error {
	if _, err := b.caller(c); err != nil {
		return c.Status(401).JSON(fiber.Map{"error": fiber.Map{"reason": "token_invalid"}})
	}
	wait, err := strconv.Atoi(c.Query("wait", "0"))
	if err != nil || wait < 0 {
		return c.Status(400).JSON(fiber.Map{"error": fiber.Map{"reason": "invalid_body"}})
	}
	f := b.fan
	f.parked.Add(1) // before the wake is taken: a wake that finds none parked skips its read (listen)
	f.mu.Lock()
	w := f.next
	f.mu.Unlock()
	t := time.NewTimer(time.Duration(wait) * time.Second)
	select {
	case <-w.done:
		t.Stop()
		f.parked.Add(-1)
		c.Set("Content-Type", "application/json")
		return c.Send(w.body)
	case <-t.C:
		f.parked.Add(-1)
		return c.JSON(services.Inbox{Items: []services.InboxItem{}})
	}
}

// parkedCalls answers the number of calls parked.
func (b *bare) parkedCalls(c *fiber.Ctx) error {
	return c.SendString(strconv.FormatInt(b.fan.parked.Load(), 10))
}

// listen holds a LISTEN connection on the log's channel until ctx ends
// and wakes the parked calls at each announcement of a turn anyone may
// take ("<position> <audience>...", the audience "*" among them).
func (b *bare) listen(ctx context.Context, dbURL string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var schema string
	if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+services.FeedChannel(schema)); err != nil {
		return err
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fields := strings.Fields(n.Payload)
		if len(fields) < 2 || !contains(fields[1:], services.Anyone) {
			continue // a self-check's probe, or a turn for someone in particular
		}
		if b.fan.parked.Load() == 0 {
			continue // nobody to answer: no read beside Parley's own round of the bench
		}
		body, err := b.newestTurn(ctx)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bare: wake:", err)
			continue
		}
		f := b.fan
		f.mu.Lock()
		w := f.next
		f.next = &bareWake{done: make(chan struct{})}
		f.mu.Unlock()
		w.body = body
		close(w.done)
	}
}

// newestTurn is the page of the wake: the newest turn awaiting anyone, its
// thread and last message (the columns scanBareThread and read take).
func (b *bare) newestTurn(ctx context.Context) ([]byte, error) {
	var id int64
	if err := b.pool.QueryRow(ctx, "SELECT id FROM threads WHERE awaiting_identity = $1 ORDER BY turn_seq DESC LIMIT 1", services.Anyone).Scan(&id); err != nil {
		return nil, err
	}
	th, err := scanBareThread(b.pool.QueryRow(ctx, "SELECT "+bareThreadColumns+" FROM threads WHERE id = $1", id))
	if err != nil {
		return nil, err
	}
	m := &services.Message{Parley: "1", Thread: th.ID}
	var mid int64
	var ext string
	if err := b.pool.QueryRow(ctx, `SELECT id, kind, author_identity, author_extension, author_kind, body, created_at
		FROM messages WHERE thread_id = $1 ORDER BY id DESC LIMIT 1`, id).
		Scan(&mid, &m.Kind, &m.From.Identity, &ext, &m.AuthorKind, &m.Body, &m.CreatedAt); err != nil {
		return nil, err
	}
	m.ID, m.From.Extension = services.MessageKey(mid), bareOptional(ext)
	return json.Marshal(services.Inbox{Items: []services.InboxItem{{Thread: th, Message: m}}})
}

// newBarePool opens the bare handler's pool, all of its connections kept.
func newBarePool(ctx context.Context, dbURL string, conns int) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, err
	}
	pc.MaxConns, pc.MinConns = int32(conns), int32(conns)
	return pgxpool.NewWithConfig(ctx, pc)
}
