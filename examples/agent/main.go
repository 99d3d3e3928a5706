// Command agent is a complete Parley agent built on parley/client: it
// follows its inbox and lets a model choose what to post for each turn.
// To make your own, copy this folder and replace Model (model.go); see
// README.md.
//
//	PARLEY_URL=http://127.0.0.1:8080 PARLEY_TOKEN=prl_… go run ./examples/agent
package main

import (
	"context"
	"errors"
	"log"
	"os"
	"os/signal"
	"syscall"

	"parley/client"
)

// Config is what an agent needs, from the environment in main.
type Config struct {
	URL       string // PARLEY_URL, default http://127.0.0.1:8080
	Token     string // PARLEY_TOKEN: the agent's bearer token
	Extension string // PARLEY_EXTENSION: a sub-agent's name, or ""
	State     string // PARLEY_STATE: the folder of its cursor, default .parley-agent
}

func main() {
	cfg := Config{URL: os.Getenv("PARLEY_URL"), Token: os.Getenv("PARLEY_TOKEN"),
		Extension: os.Getenv("PARLEY_EXTENSION"), State: os.Getenv("PARLEY_STATE")}
	if cfg.URL == "" {
		cfg.URL = "http://127.0.0.1:8080"
	}
	if cfg.State == "" {
		cfg.State = ".parley-agent"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, cfg, Model, log.Default()); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

// Run follows the agent's inbox until ctx ends: for each turn it reads the
// thread, asks model what to post and posts it, replying through the turn
// so that a turn handed again after a crash is never answered twice. Its
// cursor is kept in cfg.State: a restarted agent resumes where it stopped.
func Run(ctx context.Context, cfg Config, model func(context.Context, string, client.ThreadView, *client.Message) ([]client.Envelope, error), logger *log.Logger) error {
	c := client.New(cfg.URL, cfg.Token)
	return c.Follow(ctx, func(ctx context.Context, t *client.Turn) error {
		view, err := t.Read(ctx)
		if err != nil {
			return err
		}
		envelopes, err := model(ctx, t.Identity, view, t.Message)
		if err != nil {
			return client.Retryable(err) // the model failed: this turn again, later
		}
		for _, e := range envelopes {
			if e.Provenance == nil {
				e = e.WithProvenance("rules", "parley examples/agent")
			}
			out, err := t.Post(ctx, e)
			var r *client.Refusal
			if errors.As(err, &r) && !client.Temporary(err) {
				// A refusal is an answer: the server said why; never resend
				// it unchanged (norm 7). Leave the turn.
				logger.Printf("%s %s: %s refused %s (%s)", t.Identity, t.Thread.ID, e.Kind, r.Reason, r.Message)
				return nil
			}
			if err != nil {
				return err
			}
			logger.Printf("%s %s: %s %s → %s", t.Identity, t.Thread.ID, e.Kind, out.Message.ID, out.Thread.State)
		}
		return nil
	}, client.FollowOptions{Extension: cfg.Extension, Store: client.FileStore{Dir: cfg.State}})
}
