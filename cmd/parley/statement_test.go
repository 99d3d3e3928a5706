package main_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestStatementVerify: parley statement verify checks a statement the
// forum signed, offline, against a key file or the forum's own keys, and
// refuses one with a byte changed; parley key rotate adds a key and the
// older statement still verifies.
func TestStatementVerify(t *testing.T) {
	eachDB(t, func(t *testing.T, db string) {
		ok(t, parley(t, nil, "", "migrate", "--db", db))
		ctx := context.Background()
		forum := services.New(dbtest.Open(t, db), services.Config{})
		tok := func(handle string, rights ...services.Right) services.Caller {
			created, err := forum.CreateToken(ctx, services.TokenRequest{Handle: handle, Rights: rights})
			if err != nil {
				t.Fatal(err)
			}
			who, _ := forum.Authenticate(ctx, created.Secret)
			return who
		}
		alice, bob := tok("alice", services.RightRead, services.RightWrite), tok("bob", services.RightRead, services.RightWrite)
		vera := tok("vera", services.RightRead, services.RightWrite, services.RightVerify)
		post := func(who services.Caller, env string) services.Posted {
			p, err := forum.Post(ctx, who, []byte(env))
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		p := post(alice, `{"kind":"assert","body":"It holds."}`)
		post(bob, `{"kind":"attest","thread":"`+p.Thread.ID+`","claim":"`+p.Claim.ID+`","body":"yes","evidence":[{"kind":"log","ref":"l1"}]}`)
		post(vera, `{"kind":"verify","thread":"`+p.Thread.ID+`","claim":"`+p.Claim.ID+`","body":"sealed","evidence":[{"kind":"log","ref":"l2"}]}`)
		// The second independent party of the quorum of 2 (§15.3).
		vic := tok("vic", services.RightRead, services.RightWrite, services.RightVerify)
		post(vic, `{"kind":"verify","thread":"`+p.Thread.ID+`","claim":"`+p.Claim.ID+`","body":"sealed too","evidence":[{"kind":"log","ref":"l3"}]}`)
		st, err := forum.GetStatement(ctx, bob, p.Claim.ID)
		if err != nil {
			t.Fatal(err)
		}
		keys, _ := forum.Keys(ctx)
		dir := t.TempDir()
		write := func(name string, v any) string {
			raw, _ := json.Marshal(v)
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, raw, 0o600); err != nil {
				t.Fatal(err)
			}
			return path
		}
		file, keyFile := write("statement.json", st), write("keys.json", keys)
		ok(t, parley(t, nil, "", "statement", "verify", file, "--keys", keyFile))
		ok(t, parley(t, nil, "", "statement", "verify", write("envelope.json", st.Statement.Envelope), "--db", db))
		payload, _ := base64.StdEncoding.DecodeString(st.Statement.Envelope.Payload)
		payload[len(payload)/3] ^= 1
		bad := st.Statement.Envelope
		bad.Payload = base64.StdEncoding.EncodeToString(payload)
		fails(t, parley(t, nil, "", "statement", "verify", write("bad.json", bad), "--keys", keyFile), 1, "signature not verified")
		fails(t, parley(t, nil, "", "statement", "verify"), 2, "one FILE")
		ok(t, parley(t, nil, "", "key", "rotate", "--db", db))
		ok(t, parley(t, nil, "", "statement", "verify", file, "--db", db))
	})
}
