package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"parley/internal/cli"
	"parley/services"
)

// statementVerify checks a signed statement offline (docs/protocol.md
// §15.5) with securesystemslib's DSSE verifier: against the keys of
// --keys (a parley-keys.json file, or its URL, fetched once), else those
// of the forum at --db.
func statementVerify(args []string) error {
	fs := cli.NewFlagSet("parley statement verify", "parley statement verify FILE [--keys FILE|URL] [--db URL]")
	keysFrom := fs.String("keys", "", "the public keys: a parley-keys.json `file` or its URL (default: the keys of the forum at --db)")
	var cfg cli.Config
	cfg.DBFlag(fs)
	positional, err := cli.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return cli.Usagef("statement verify needs one FILE (get_statement's answer, or a DSSE envelope; - for stdin)")
	}
	raw, err := readArg(positional[0])
	if err != nil {
		return err
	}
	env, err := services.ReadEnvelope(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", positional[0], err)
	}
	ctx := context.Background()
	keys, err := loadKeys(ctx, *keysFrom, cfg)
	if err != nil {
		return err
	}
	got, err := services.VerifyStatement(ctx, keys, env)
	if err != nil {
		return fmt.Errorf("%s: %w", positional[0], err)
	}
	fmt.Printf("valid: %s %s, subject sha256:%s, signed by key %s\n", got.Subject, got.Verdict, got.Digest, got.KeyID)
	return nil
}

func readArg(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(name)
}

// loadKeys reads a key set: a file, a URL, or the forum's own.
func loadKeys(ctx context.Context, from string, cfg cli.Config) ([]services.PublicKey, error) {
	var raw []byte
	var err error
	switch {
	case from == "":
		forum, closeDB, err := cfg.Forum(ctx)
		if err != nil {
			return nil, err
		}
		defer closeDB()
		set, err := forum.Keys(ctx)
		return set.Keys, err
	case strings.HasPrefix(from, "http://") || strings.HasPrefix(from, "https://"):
		client := &http.Client{Timeout: 30 * time.Second}
		resp, err := client.Get(from)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: %s", from, resp.Status)
		}
		raw, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return nil, err
		}
	default:
		if raw, err = os.ReadFile(from); err != nil {
			return nil, err
		}
	}
	var set services.KeySet
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("%s: not a parley-keys.json: %w", from, err)
	}
	return set.Keys, nil
}

// keyRotate runs "parley key rotate".
func keyRotate(args []string) error {
	fs := cli.NewFlagSet("parley key rotate", "parley key rotate [--db URL]")
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
	id, err := forum.RotateInstanceKey(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("the instance now signs with key %s; older keys stay published (servers name the new one in the manifest once restarted)\n", id)
	return nil
}
