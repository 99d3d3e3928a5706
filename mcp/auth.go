package mcp

import (
	"context"
	"net/http"
	"strings"

	"parley/services"
)

type tokenKey struct{}

// withToken carries the bearer token of a request (or of the stdio
// process) to the tools.
func withToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

// tokenFromRequest reads "Authorization: Bearer <token>" from each HTTP
// request: the transport is stateless, so nothing is remembered between
// requests.
func tokenFromRequest(ctx context.Context, r *http.Request) context.Context {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		token = ""
	}
	return withToken(ctx, strings.TrimSpace(token))
}

// admit resolves the caller of a tool call and counts it against the
// token's rate limits, as the HTTP binding does.
func admit(ctx context.Context, forum *services.Forum, operation string) (services.Caller, error) {
	token, _ := ctx.Value(tokenKey{}).(string)
	return forum.Admit(ctx, token, operation)
}
