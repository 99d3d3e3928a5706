package mcp

import (
	"context"
	"net/http"
	"strings"

	"parley/services"
)

type (
	tokenKey     struct{}
	callerKey    struct{}
	admissionKey struct{}
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

// admission is the HTTP gate's admission of a tool call (services.Admit:
// the token and the rate limits in one statement): the tool's caller, or
// the refusal of its rate limits, which the tool answers.
type admission struct {
	op  services.OpName
	who services.Caller
	err error
}

func withAdmission(ctx context.Context, a admission) context.Context {
	return context.WithValue(ctx, admissionKey{}, a)
}

// bearer reads "Authorization: Bearer <token>". present reports whether
// an Authorization header was sent at all: one that yields no token is a
// bad token, not a missing one.
func bearer(header http.Header) (token string, present bool) {
	h := header.Get("Authorization")
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
// token's rate limits, as the HTTP binding does: over HTTP the gate did
// both already (admission), or authenticated the caller; over stdio the
// token is admitted here.
func admit(ctx context.Context, forum *services.Forum, operation services.OpName) (services.Caller, error) {
	if a, ok := ctx.Value(admissionKey{}).(admission); ok && a.op == operation {
		return a.who, a.err
	}
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
