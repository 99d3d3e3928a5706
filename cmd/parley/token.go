package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"parley/internal/cli"
	"parley/services"
)

// runToken dispatches "parley token <create|list|revoke|owner>".
func runToken(args []string) error {
	if len(args) == 0 {
		return cli.Usagef("token needs a subcommand: create, list, revoke or owner")
	}
	switch args[0] {
	case "create":
		return tokenCreate(args[1:])
	case "list":
		return tokenList(args[1:])
	case "revoke":
		return tokenRevoke(args[1:])
	case "owner":
		return tokenOwner(args[1:])
	}
	return cli.Usagef("unknown command \"token %s\": use create, list, revoke or owner", args[0])
}

// tokenCreate prints a description, then the secret alone on the last line,
// so that scripts can take it with tail -n1.
func tokenCreate(args []string) error {
	fs := cli.NewFlagSet("parley token create",
		"parley token create (--handle NAME --rights read,write[,lock,verify] [--owner NAME] | --human NAME) [--label TEXT] [--db URL] [--realm REALM]")
	handle := fs.String("handle", "", "agent `name`; the identity is <realm>:<name>")
	human := fs.String("human", "", "human `name`; the identity is human:<name>; a human without an account gets one (with no password: see 'parley user add')")
	rights := fs.String("rights", "", "with --handle: comma-separated `list` of read, write, lock, verify")
	label := fs.String("label", "", "`text` shown with the token's messages (default: the name)")
	owner := fs.String("owner", "", "with --handle: the human `name` who owns the agent (witness profile); without it the token is its own party")
	var cfg cli.Config
	cfg.DBFlag(fs)
	cfg.RealmFlag(fs)
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	req := services.TokenRequest{Handle: *handle, Human: *human, Label: *label, Owner: *owner}
	switch {
	case (*handle == "") == (*human == ""):
		return cli.Usagef("token create needs either --handle or --human")
	case *human != "" && *owner != "":
		return cli.Usagef("a human's token is owned by that human: drop --owner")
	case *human != "" && *rights != "":
		return cli.Usagef("a human's token always has read and write: drop --rights")
	case *handle != "" && *rights == "":
		return cli.Usagef("--handle needs --rights, e.g. --rights read,write")
	case *handle != "":
		parsed, err := services.ParseRights(*rights)
		if err != nil {
			return err
		}
		req.Rights = parsed
	}

	ctx := context.Background()
	forum, closeDB, err := cfg.Forum(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	created, err := forum.CreateToken(ctx, req)
	var refusal *services.Refusal
	if *human != "" && errors.As(err, &refusal) && refusal.Reason == services.IdentityNotFound {
		// A human named for a token who has no account yet gets one, without
		// a password (one nobody knows): it acts through its tokens, and
		// 'parley user add' is how a human who signs in is made.
		if err = forum.AddUser(ctx, *human, unknownPassword()); err != nil {
			return err
		}
		fmt.Printf("added %s:%s, with no password to sign in with\n", services.HumanRealm, *human)
		created, err = forum.CreateToken(ctx, req)
	}
	if err != nil {
		return err
	}
	t := created.Token
	fmt.Printf("token %d for %s (%s), rights %s, label %s, owner %s\n", t.ID, t.Identity, t.AuthorKind, joinRights(t.Rights),
		strconv.Quote(t.Label), ownerText(t.Owner))
	fmt.Println("The secret below is shown only this once:")
	fmt.Println(created.Secret)
	return nil
}

// unknownPassword is a random password shown to nobody: 72 hex digits,
// bcrypt's longest.
func unknownPassword() string {
	b := make([]byte, 36)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// tokenList prints every token as a table, newest first.
func tokenList(args []string) error {
	fs := cli.NewFlagSet("parley token list", "parley token list [--db URL]")
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
	tokens, err := forum.ListTokens(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tIDENTITY\tKIND\tLABEL\tRIGHTS\tCREATED\tREVOKED\tOWNER")
	for _, t := range tokens {
		revoked := "-"
		if t.RevokedAt != nil {
			revoked = t.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, cell(t.Identity), t.AuthorKind, cell(t.Label),
			joinRights(t.Rights), t.CreatedAt.Format(time.RFC3339), revoked, ownerText(t.Owner))
	}
	return tw.Flush()
}

// tokenRevoke revokes one token; revoking it again reports the first time.
func tokenRevoke(args []string) error {
	fs := cli.NewFlagSet("parley token revoke", "parley token revoke ID [--db URL]")
	var cfg cli.Config
	cfg.DBFlag(fs)
	positional, err := cli.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return cli.Usagef("token revoke takes one token ID (see 'parley token list')")
	}
	id, err := strconv.ParseInt(positional[0], 10, 64)
	if err != nil || id <= 0 {
		return cli.Usagef("token revoke: %q is not a token ID", positional[0])
	}
	ctx := context.Background()
	forum, closeDB, err := cfg.Forum(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	t, err := forum.RevokeToken(ctx, id)
	if err != nil {
		return err
	}
	fmt.Printf("token %d (%s) revoked at %s\n", t.ID, t.Identity, t.RevokedAt.Format(time.RFC3339))
	return nil
}

// tokenOwner makes a human the owner of an agent's token (docs/protocol.md
// §15.1), recorded as an event of type owner.
func tokenOwner(args []string) error {
	fs := cli.NewFlagSet("parley token owner", "parley token owner ID NAME [--db URL]")
	var cfg cli.Config
	cfg.DBFlag(fs)
	positional, err := cli.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 2 {
		return cli.Usagef("token owner takes a token ID (see 'parley token list') and a human's name (see 'parley user add')")
	}
	id, err := strconv.ParseInt(positional[0], 10, 64)
	if err != nil || id <= 0 {
		return cli.Usagef("token owner: %q is not a token ID", positional[0])
	}
	ctx := context.Background()
	forum, closeDB, err := cfg.Forum(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	ch, err := forum.SetTokenOwner(ctx, id, positional[1], "operator")
	if err != nil {
		return err
	}
	fmt.Printf("token %d (%s): owner %s (was %s), owner event %d\n", ch.Token.ID, ch.Token.Identity, ownerText(ch.Event.To),
		ownerText(ch.Event.From), ch.Event.ID)
	return nil
}

// ownerText is an owner for people: its identity, or "-" for none.
func ownerText(owner *string) string {
	if owner == nil {
		return "-"
	}
	return cell(*owner)
}

func joinRights(rights []services.Right) string {
	parts := make([]string, len(rights))
	for i, r := range rights {
		parts[i] = string(r)
	}
	return strings.Join(parts, ",")
}

// cell makes a value safe for one table cell: labels are free text, and a
// tab, a newline or a terminal escape in one would garble the table.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	if strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) {
		return strconv.Quote(s)
	}
	return s
}
