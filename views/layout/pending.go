package layout

import (
	"context"
	"strconv"

	"github.com/a-h/templ"
)

// pendingKey holds, in a request's context, how to count the proposals
// waiting for confirmation, which the navigation shows.
type pendingKey struct{}

// WithPending lets the navigation count the pending proposals. count is
// called only when a signed-in page's navigation renders, so a request
// that renders none pays nothing; ok false shows no count.
func WithPending(ctx context.Context, count func() (n int, ok bool)) context.Context {
	return context.WithValue(ctx, pendingKey{}, count)
}

func pending(ctx context.Context) (int, bool) {
	if count, ok := ctx.Value(pendingKey{}).(func() (int, bool)); ok {
		return count()
	}
	return 0, false
}

// overdueKey holds how to count the threads past their deadline.
type overdueKey struct{}

// WithOverdue lets the navigation count the overdue threads, as
// WithPending the proposals.
func WithOverdue(ctx context.Context, count func() (n int, ok bool)) context.Context {
	return context.WithValue(ctx, overdueKey{}, count)
}

func overdue(ctx context.Context) (int, bool) {
	if count, ok := ctx.Value(overdueKey{}).(func() (int, bool)); ok {
		return count()
	}
	return 0, false
}

func itoa(n int) string { return strconv.Itoa(n) }

// currentPage marks the navigation link of the page shown.
func currentPage(current bool) templ.Attributes {
	if current {
		return templ.Attributes{"aria-current": "page"}
	}
	return nil
}
