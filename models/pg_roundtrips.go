package models

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// Round trips to PostgreSQL, counted where pgx sends them: every query or
// exec (BEGIN and COMMIT included), every batch and every prepare is one.
// Only work under a context from CountRoundTrips is counted, so that a test
// counts its own requests and nothing else of the pool's (a connection's
// liveness ping is not a query and is never counted).

type roundTripsKey struct{}

// CountRoundTrips answers a context under which every round trip to
// PostgreSQL adds one to n.
func CountRoundTrips(ctx context.Context, n *atomic.Int64) context.Context {
	return context.WithValue(ctx, roundTripsKey{}, n)
}

func countRoundTrip(ctx context.Context) {
	if n, ok := ctx.Value(roundTripsKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
}

// roundTrips is the pool's pgx tracer.
type roundTrips struct{}

func (roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	countRoundTrip(ctx)
	return ctx
}
func (roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	countRoundTrip(ctx)
	return ctx
}
func (roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func (roundTrips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	countRoundTrip(ctx)
	return ctx
}
func (roundTrips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// BatchBegin is what opens a write transaction with the session settings
// (see beginSQL) as statements a pgx batch can carry — BEGIN, then the
// settings by set_config(…, true), SET LOCAL's function form — so that a
// transaction can open in the same round trip as its first statements
// (services/store_action_pg.go). On a direct connection the session holds
// those values already (startup parameters): BEGIN alone, one statement
// less per post.
func (c *sessionConn) BatchBegin() []string {
	if c.batchBegin != nil {
		return c.batchBegin
	}
	var sets []string
	for _, s := range c.settings {
		if !s.fromOption && !c.direct {
			sets = append(sets, "set_config("+quoteLiteral(s.name)+", "+quoteLiteral(s.write)+", true)")
		}
	}
	c.batchBegin = []string{"BEGIN"}
	if len(sets) > 0 {
		c.batchBegin = append(c.batchBegin, "SELECT "+strings.Join(sets, ", "))
	}
	return c.batchBegin
}
