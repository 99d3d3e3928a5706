package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"parley/internal/cli"
	"parley/models"
	"parley/services"
)

// runBenchBare serves read_thread, post and the waiting inbox the bare way — plain Fiber and a
// pgx pool, no GORM, no services, no rate limit, no rules beyond the ones
// the bench's calls need — so that `parley-lab bench --bare URL` can set
// Parley's figures beside what the same machine does with the least code:
// the "bare handler" column of docs/performance.md's table. The SQL has the shape
// of Parley's (token lookup by public id and hash check; a thread row and
// its messages in one query; a note under the thread's root with the
// advisory lock, the new message, the log position from the transaction
// id and the thread's update, as cmd/parley-lab/pgbench/parley_post_old.sql), and the
// JSON the same form (services' answer types).
//
//	parley-lab bench bare --db URL --addr 127.0.0.1:18092 [--db-max-conns 16]
func runBenchBare(args []string) error {
	fs := cli.NewFlagSet("parley-lab bench bare", "parley-lab bench bare --db URL [--addr HOST:PORT] [--db-max-conns N]")
	addr := fs.String("addr", "127.0.0.1:18092", "listen on `address`")
	conns := fs.Int("db-max-conns", models.DefaultMaxConns, "database connections in the pool")
	var cfg cli.Config
	cfg.DBFlag(fs)
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	if !strings.HasPrefix(cfg.DB, "postgres") {
		return cli.Usagef("bench bare: --db must be a postgres:// URL")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	pool, err := newBarePool(ctx, cfg.DB, *conns)
	if err != nil {
		return err
	}
	defer pool.Close()
	b := newBare(pool)
	app := b.app()
	go func() { <-ctx.Done(); app.Shutdown() }()
	go func() {
		if err := b.listen(ctx, cfg.DB); err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "bare: the waiting inbox hears nothing:", err)
		}
	}()
	fmt.Fprintf(os.Stderr, "bare handler listening on %s\n", *addr)
	return app.Listen(*addr)
}

type bare struct {
	pool *pgxpool.Pool
	fan  *bareFan // the waiting inbox's parked calls (bench_bare_fanout.go)
}

func newBare(pool *pgxpool.Pool) *bare { return &bare{pool: pool, fan: newBareFan()} }

// app routes the endpoints: read_thread, post, the waiting inbox.
func (b *bare) app() *fiber.App {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Get("/api/v1/threads/:thread", b.read)
	app.Post("/api/v1/messages", b.post)
	app.Get("/api/v1/inbox", b.inbox)
	app.Get("/parked", b.parkedCalls)
	return app
}

var errBareToken = errors.New("the token is unknown or revoked")

// caller checks the bearer token as Authenticate does: one row by public
// id, its hash compared in constant time.
func (b *bare) caller(c *fiber.Ctx) (string, error) {
	token := strings.TrimPrefix(c.Get("Authorization"), "Bearer ")
	public, secret, ok := strings.Cut(strings.TrimPrefix(token, "prl_"), "_")
	if !ok {
		return "", errBareToken
	}
	var identity string
	var hash []byte
	var revoked *time.Time
	err := b.pool.QueryRow(c.Context(), "SELECT identity, secret_hash, revoked_at FROM tokens WHERE public_id = $1", public).
		Scan(&identity, &hash, &revoked)
	if err != nil {
		return "", errBareToken
	}
	sum := sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(sum[:], hash) != 1 || revoked != nil {
		return "", errBareToken
	}
	return identity, nil
}

const bareThreadColumns = `id, title, state, state_origin, state_confirmed_at, record_state, state_label,
	awaiting_identity, awaiting_extension, created_by_identity, created_by_extension, created_at, updated_at, message_count`

func scanBareThread(row pgx.Row) (services.Thread, error) {
	var t services.Thread
	var id int64
	var ai, ae, ce string
	err := row.Scan(&id, &t.Title, &t.State, &t.StateOrigin, &t.StateConfirmedAt, &t.StateOfRecord, &t.StateLabel,
		&ai, &ae, &t.CreatedBy.Identity, &ce, &t.CreatedAt, &t.UpdatedAt, &t.MessageCount)
	t.ID, t.Confirmed = services.ThreadKey(id), t.StateConfirmedAt != nil
	// The baseline reads no guard counter: its threads never come near
	// guard_thread_run_max, so the guard is active (docs/protocol.md §8.1).
	t.Guard = services.GuardActive
	if ai != "" {
		t.Awaiting = &services.Awaiting{Identity: ai, Extension: bareOptional(ae)}
	}
	t.CreatedBy.Extension = bareOptional(ce)
	return t, err
}

func bareOptional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// read answers GET /api/v1/threads/:thread with the whole tree.
func (b *bare) read(c *fiber.Ctx) error {
	if _, err := b.caller(c); err != nil {
		return c.Status(401).JSON(fiber.Map{"error": fiber.Map{"reason": "token_invalid"}})
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(c.Params("thread"), "th_"), 10, 64)
	if err != nil {
		return c.SendStatus(404)
	}
	ctx := c.Context()
	th, err := scanBareThread(b.pool.QueryRow(ctx, "SELECT "+bareThreadColumns+" FROM threads WHERE id = $1", id))
	if err != nil {
		return c.SendStatus(404)
	}
	// The columns Parley's tree reads (services.treeColumns), so that both
	// move the same bytes.
	rows, err := b.pool.Query(ctx, `SELECT id, thread_id, parent_id, depth, kind, author_identity, author_extension, author_kind,
		author_badge, body, provenance_model, provenance_client, to_identity, to_extension, state, claim_id,
		awaiting_identity, awaiting_extension, created_at, reply_by FROM messages WHERE thread_id = $1 ORDER BY id`, id)
	if err != nil {
		return err
	}
	defer rows.Close()
	byID := map[int64]*services.Message{}
	roots := []*services.Message{}
	for rows.Next() {
		var mid, tid int64
		var parent, claim *int64
		var depth int
		var ext, model, client, toID, toExt, ai, ae string
		m := &services.Message{Parley: "1", Replies: []*services.Message{}}
		if err := rows.Scan(&mid, &tid, &parent, &depth, &m.Kind, &m.From.Identity, &ext, &m.AuthorKind,
			&m.From.Badge, &m.Body, &model, &client, &toID, &toExt, &m.State, &claim, &ai, &ae, &m.CreatedAt, &m.ReplyBy); err != nil {
			return err
		}
		m.ID, m.Thread, m.From.Extension = services.MessageKey(mid), services.ThreadKey(tid), bareOptional(ext)
		if ai != "" {
			m.Awaiting = &services.Awaiting{Identity: ai, Extension: bareOptional(ae)}
		}
		if model != "" || client != "" {
			m.Provenance = &services.Provenance{Model: model, Client: client}
		}
		if toID != "" {
			m.To = &services.Address{Identity: toID, Extension: toExt}
		}
		if claim != nil {
			m.Claim = bareOptional(services.ClaimKey(*claim))
		}
		byID[mid] = m
		if parent == nil || byID[*parent] == nil {
			roots = append(roots, m)
			continue
		}
		m.Parent = bareOptional(services.MessageKey(*parent))
		byID[*parent].Replies = append(byID[*parent].Replies, m)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	raw, err := json.Marshal(services.ThreadView{Thread: th, Messages: roots})
	if err != nil {
		return err
	}
	c.Set("Content-Type", "application/json")
	return c.Send(raw)
}

// post answers POST /api/v1/messages for a note into a thread, under its
// root: the statements of cmd/parley-lab/pgbench/parley_post_old.sql.
func (b *bare) post(c *fiber.Ctx) error {
	identity, err := b.caller(c)
	if err != nil {
		return c.Status(401).JSON(fiber.Map{"error": fiber.Map{"reason": "token_invalid"}})
	}
	var env struct {
		Kind   string `json:"kind"`
		Thread string `json:"thread"`
		Body   string `json:"body"`
		From   struct {
			Extension string `json:"extension"`
		} `json:"from"`
	}
	if err := json.Unmarshal(c.Body(), &env); err != nil || env.Kind != "note" {
		return c.Status(400).JSON(fiber.Map{"error": fiber.Map{"reason": "invalid_body"}})
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(env.Thread, "th_"), 10, 64)
	if err != nil {
		return c.SendStatus(404)
	}
	var out services.Posted
	err = pgx.BeginFunc(c.Context(), b.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(c.Context(), "SELECT pg_advisory_xact_lock('threads'::regclass::oid::int, $1::int)", id); err != nil {
			return err
		}
		var root int64
		var ai, ae string
		if err := tx.QueryRow(c.Context(), "SELECT root_message_id, awaiting_identity, awaiting_extension FROM threads WHERE id = $1", id).
			Scan(&root, &ai, &ae); err != nil {
			return err
		}
		var parentID int64
		var depth int
		if err := tx.QueryRow(c.Context(), "SELECT id, depth FROM messages WHERE id = $1", root).Scan(&parentID, &depth); err != nil {
			return err
		}
		m := &services.Message{Parley: "1", Kind: "note", Thread: services.ThreadKey(id), AuthorKind: "llm", Body: env.Body,
			From: services.OwnedAuthor{Author: services.Author{Identity: identity, Extension: bareOptional(env.From.Extension)}}, Parent: bareOptional(services.MessageKey(parentID))}
		var mid int64
		if err := tx.QueryRow(c.Context(), `INSERT INTO messages (thread_id, parent_id, depth, kind, author_identity, author_extension,
				author_kind, body, awaiting_identity, awaiting_extension, created_at)
			VALUES ($1, $2, $3, 'note', $4, $5, 'llm', $6, $7, $8, now()) RETURNING id, created_at`,
			id, parentID, depth+1, identity, env.From.Extension, env.Body, ai, ae).Scan(&mid, &m.CreatedAt); err != nil {
			return err
		}
		m.ID = services.MessageKey(mid)
		if ai != "" {
			m.Awaiting = &services.Awaiting{Identity: ai, Extension: bareOptional(ae)}
		}
		th, err := scanBareThread(tx.QueryRow(c.Context(), `UPDATE threads SET message_count = message_count + 1, updated_at = now(),
				activity_seq = pg_current_xact_id()::text::bigint * 1048576 WHERE id = $1 RETURNING `+bareThreadColumns, id))
		out = services.Posted{Message: m, Thread: th}
		return err
	})
	if err != nil {
		return err
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return err
	}
	c.Set("Content-Type", "application/json")
	return c.Status(201).Send(raw)
}
