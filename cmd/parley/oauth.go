package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"parley/internal/cli"
	"parley/services"
)

// repeated is a flag given once per value.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

var _ flag.Value = (*repeated)(nil)

// oauthClientAdd registers an OAuth client, an operator's act: for a
// client that does not name itself by the HTTPS URL of a metadata
// document (docs/mcp.md, "OAuth").
func oauthClientAdd(args []string) error {
	fs := cli.NewFlagSet("parley oauth client add", "parley oauth client add --id ID --redirect-uri URI... [--name NAME] [--db URL]")
	id := fs.String("id", "", "the client's `client_id`")
	name := fs.String("name", "", "the `name` the consent page shows (default the id)")
	var redirects repeated
	fs.Var(&redirects, "redirect-uri", "a redirect `URI` the client may use; repeat for more (a loopback one admits any port)")
	var cfg cli.Config
	cfg.DBFlag(fs)
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	ctx := context.Background()
	forum, closeDB, err := cfg.Forum(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	if err := forum.AddOAuthClient(ctx, services.OAuthClient{ID: *id, Name: *name, RedirectURIs: redirects}); err != nil {
		return err
	}
	fmt.Printf("registered OAuth client %s\n", *id)
	return nil
}
