package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"parley/internal/cli"
	"parley/services"
)

// runDemo fills an empty forum with the example of demo_script.go. It acts
// only through the services, as a client would, so the example obeys every
// rule of the protocol; what the services refuse stops it. With --serve it
// then serves the forum, so that one command takes a newcomer from a bare
// machine to the demo in a browser; on a forum that already has threads,
// --serve only serves it.
func runDemo(args []string) error {
	fs := cli.NewFlagSet("parley demo", "parley demo [--serve] [--db URL] [--realm REALM] [--addr ADDR]   (password of ada: env PARLEY_PASSWORD, else "+demoPassword+")")
	serve := fs.Bool("serve", false, "then serve the forum (as parley serve does); on a forum that already has threads, only serve it")
	addr := fs.String("addr", "127.0.0.1:8080", "with --serve: listen `address` (env PARLEY_ADDR)")
	var cfg cli.Config
	cfg.DBFlag(fs)
	cfg.RealmFlag(fs)
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	if err := fillDemo(cfg, *addr, *serve); err != nil {
		return err
	}
	if !*serve {
		return nil
	}
	serveArgs := []string{"--addr", *addr, "--realm", cfg.Realm}
	if cfg.DB != "" {
		serveArgs = append(serveArgs, "--db", cfg.DB)
	}
	return runServe(serveArgs)
}

// fillDemo runs the demo script on the database of cfg; with serving, a
// forum that already has threads is left as it is.
func fillDemo(cfg cli.Config, addr string, serving bool) error {
	ctx := context.Background()
	// Like serve, demo migrates: it is meant for a database made for it.
	forum, _, closeDB, err := cfg.Migrated(ctx)
	if err != nil {
		return err
	}
	defer closeDB()

	// Refuse before creating anything: a second run must not duplicate.
	n, err := countThreads(ctx, forum)
	if err != nil {
		return err
	}
	switch {
	case n > 0 && serving:
		fmt.Printf("%s already has %d threads: serving it as it is.\n", cfg.DBKind(), n)
		return nil
	case n > 0:
		return fmt.Errorf("database already has %d threads; demo fills an empty forum", n)
	}
	password := demoPassword
	if p := os.Getenv("PARLEY_PASSWORD"); p != "" {
		password = p
	}
	if err := forum.AddUser(ctx, demoHuman, password); err != nil {
		var r *services.Refusal
		if errors.As(err, &r) && r.Field == "name" {
			return fmt.Errorf("database already has a human named %s; demo fills an empty forum", demoHuman)
		}
		return err
	}

	d := &demo{forum: forum, callers: map[string]services.Caller{}, messages: map[string]ref{}, claims: map[string]string{}, threads: map[string]services.Thread{}}
	tokens, err := d.cast(ctx, password)
	if err != nil {
		return err
	}
	defer d.forum.SignOut(context.WithoutCancel(ctx), d.session)
	for i, s := range demoScript {
		if err := d.run(ctx, s); err != nil {
			// %v, not %w: exitCode would show a wrapped refusal's message
			// alone, and the step is what tells what went wrong.
			return fmt.Errorf("demo step %d (%s %s at %q) failed: %v", i+1, s.as, s.act, s.at, err)
		}
	}
	d.summary(cfg, password == demoPassword, tokens)
	if serving {
		fmt.Printf("\nServing it at http://%s (sign in as %s); Ctrl-C stops.\n", addr, demoHuman)
	} else {
		fmt.Println("\nNext: run 'parley serve' on this database and open http://127.0.0.1:8080 (sign in as ada).")
	}
	return nil
}

// countThreads counts every thread. The services have no count, so it pages
// through list_threads as a reader that holds only the right read; such a
// Caller needs no token, which a refused run must not leave behind.
func countThreads(ctx context.Context, forum *services.Forum) (int, error) {
	reader := services.Caller{Identity: "demo:check", Kind: services.KindLLM, Rights: []services.Right{services.RightRead}}
	q := services.ListQuery{Limit: strconv.Itoa(forum.Limits().PageMax)}
	n := 0
	for {
		page, err := forum.ListThreads(ctx, reader, q)
		if err != nil {
			return 0, err
		}
		n += len(page.Threads)
		if page.Cursor == nil {
			return n, nil
		}
		q.Cursor = *page.Cursor
	}
}

// ref locates a message of the script.
type ref struct{ thread, message string }

// demo is the state of a run: who acts, and what the script has made.
type demo struct {
	forum    *services.Forum
	callers  map[string]services.Caller // by handle, and the human by name
	messages map[string]ref             // by the script's names
	claims   map[string]string          // claim ids, by the names of their asserts
	threads  map[string]services.Thread // the latest shape of each, by key
	order    []string                   // thread keys in the order they were opened
	session  string                     // the human's session, ended once the script ran
}

// cast creates the agents' tokens and returns their secrets in the order
// of demoAgents. The human acts as she would in the browser: signed in
// with her password, a session that run ends (see signOut). She gets no
// token: one would sit on her tokens page, never shown, with nothing to
// say what it was (issue 29 item 13).
func (d *demo) cast(ctx context.Context, password string) ([]string, error) {
	var secrets []string
	for _, a := range demoAgents {
		rights, err := services.ParseRights(a.rights)
		if err != nil {
			return nil, err
		}
		secret, err := d.enrol(ctx, a.handle, services.TokenRequest{Handle: a.handle, Rights: rights, Label: a.label})
		if err != nil {
			return nil, err
		}
		secrets = append(secrets, secret)
	}
	session, err := d.forum.SignIn(ctx, demoHuman, password, "parley demo")
	if err != nil {
		return nil, fmt.Errorf("sign %s in: %w", demoHuman, err)
	}
	d.callers[demoHuman], d.session = session.Caller, session.Token
	return secrets, nil
}

func (d *demo) enrol(ctx context.Context, name string, req services.TokenRequest) (string, error) {
	created, err := d.forum.CreateToken(ctx, req)
	if err != nil {
		return "", fmt.Errorf("token for %s: %w", name, err)
	}
	who, err := d.forum.Authenticate(ctx, created.Secret)
	if err != nil {
		return "", fmt.Errorf("token for %s: %w", name, err)
	}
	d.callers[name] = who
	return created.Secret, nil
}

// run carries out one step as a client would: a JSON envelope to Post, or
// a confirm body to Confirm.
func (d *demo) run(ctx context.Context, s step) error {
	handle, ext, _ := strings.Cut(s.as, "/")
	who, ok := d.callers[handle]
	if !ok {
		return fmt.Errorf("no one in the cast is called %q", handle)
	}
	at, ok := d.messages[s.at]
	if !ok && s.at != "" {
		return fmt.Errorf("no message in the script is called %q", s.at)
	}
	if s.act == "confirm" {
		body, _ := json.Marshal(map[string]string{"state": s.state})
		confirmed, err := d.forum.Confirm(ctx, who, at.thread, body)
		if err == nil {
			d.threads[confirmed.Thread.ID] = confirmed.Thread
		}
		return err
	}

	env := map[string]any{"parley": "1", "kind": s.act, "body": s.body}
	if s.at != "" {
		env["thread"], env["parent"] = at.thread, at.message
	}
	if ext != "" {
		env["from"] = map[string]string{"extension": ext}
	}
	if s.state != "" {
		env["state"] = s.state
	}
	if s.to != "" {
		toHandle, toExt, _ := strings.Cut(s.to, "/")
		env["to"] = services.Address{Identity: d.callers[toHandle].Identity, Extension: toExt}
	}
	d.dialectic(s, env)
	for _, a := range demoAgents {
		if a.handle == handle && a.model != "" {
			env["provenance"] = map[string]string{"model": a.model, "client": a.client}
		}
	}
	raw, err := json.Marshal(env)
	if err != nil {
		return err
	}
	posted, err := d.forum.Post(ctx, who, raw)
	if err != nil {
		return err
	}
	th := posted.Thread
	if _, seen := d.threads[th.ID]; !seen {
		d.order = append(d.order, th.ID)
	}
	d.threads[th.ID] = th
	d.messages[s.name] = ref{thread: th.ID, message: posted.Message.ID}
	if posted.Claim != nil {
		d.claims[s.name] = posted.Claim.ID
	}
	return nil
}

// dialectic adds a step's dialectic fields to its envelope.
func (d *demo) dialectic(s step, env map[string]any) {
	if s.claim != "" {
		env["claim"] = d.claims[s.claim]
	}
	if s.supersedes != "" {
		env["supersedes"] = []string{d.claims[s.supersedes]}
	}
	if s.validDays > 0 {
		env["valid_until"] = time.Now().UTC().AddDate(0, 0, s.validDays).Format(time.RFC3339)
	}
	var evidence []map[string]string
	for _, e := range s.evidence {
		kind, ref, _ := strings.Cut(e, " ")
		evidence = append(evidence, map[string]string{"kind": kind, "ref": ref})
	}
	if evidence != nil {
		env["evidence"] = evidence
	}
}

// summary tells what was made and how to look at it. It is the only output,
// and comes last, so a failed run prints nothing on stdout.
func (d *demo) summary(cfg cli.Config, demoPass bool, tokens []string) {
	messages := 0
	for _, th := range d.threads {
		messages += th.MessageCount
	}
	fmt.Printf("Filled %s (realm %s) with a demo forum: %d threads, %d messages.\n\n",
		cfg.DBKind(), d.forum.Realm(), len(d.order), messages)
	for _, key := range d.order {
		th := d.threads[key]
		state := string(th.State)
		if !th.Confirmed {
			state += " (unconfirmed)"
		}
		fmt.Printf("  %-6s %-23s %s\n", key, state, strings.TrimSpace(th.Title))
	}
	fmt.Printf("\nHuman: %s:%s, ", services.HumanRealm, demoHuman)
	if demoPass {
		fmt.Printf("password %s (a demo password: set PARLEY_PASSWORD to choose one)\n", demoPassword)
	} else {
		fmt.Println("password from PARLEY_PASSWORD")
	}
	// Each token with the identity it acts as and its rights: the lock
	// holder (the moderator, who confirms proposals) must be easy to find.
	fmt.Println("\nAgent tokens (shown only this once): handle, token, identity, rights")
	width, idWidth := 0, 0
	for _, a := range demoAgents {
		width, idWidth = max(width, len(a.handle)), max(idWidth, len(d.callers[a.handle].Identity))
	}
	for i, a := range demoAgents {
		rights := strings.ReplaceAll(a.rights, ",", ", ")
		if strings.Contains(a.rights, string(services.RightLock)) {
			rights += "  <- lock holder: moderates, confirms proposals"
		}
		fmt.Printf("  %-*s  %s  %-*s  %s\n", width, a.handle, tokens[i], idWidth, d.callers[a.handle].Identity, rights)
	}
}
