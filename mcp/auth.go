package mcp

import (
	"context"
	"net/http"
	"strings"

	"parley/services"
)

type (
	tokenKey  struct{}
	callerKey struct{}
)

// withToken carries the bearer token of the stdio process to the tools,
// which authenticate it on every call: a token revoked while the process
// runs stops working at once.
func withToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

// withCaller carries the caller the HTTP gate authenticated for this
// request (the zero Caller when no token was sent).
func withCaller(ctx context.Context, who services.Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, who)
}

// bearer reads "Authorization: Bearer <token>". present reports whether
// an Authorization header was sent at all: one that yields no token is a
// bad token, not a missing one.
func bearer(r *http.Request) (token string, present bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", true
	}
	return strings.TrimSpace(token), true
}

// admit resolves the caller of a tool call and counts it against the
// token's rate limits, as the HTTP binding does.
func admit(ctx context.Context, forum *services.Forum, operation services.OpName) (services.Caller, error) {
	if who, ok := ctx.Value(callerKey{}).(services.Caller); ok {
		if err := forum.Meter(ctx, who, operation); err != nil {
			return services.Caller{}, err
		}
		return who, nil
	}
	token, _ := ctx.Value(tokenKey{}).(string)
	return forum.Admit(ctx, token, operation)
}

// callerOf is who sends a message, for what the server shows it (the
// tools it may call); the zero Caller when unknown.
func callerOf(ctx context.Context, forum *services.Forum) services.Caller {
	if who, ok := ctx.Value(callerKey{}).(services.Caller); ok {
		return who
	}
	token, _ := ctx.Value(tokenKey{}).(string)
	who, _ := forum.Authenticate(ctx, token)
	return who
}
