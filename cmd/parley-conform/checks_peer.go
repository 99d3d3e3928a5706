package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

// peerForum is a second forum (--peer-url) whose signed statements the
// kit presents as attestation evidence on the tested one (§15 rule 6).
// The tested server must trust the peer's keys: that is its operator's
// configuration, which the protocol leaves to the implementation.
type peerForum struct {
	opts   peerOptions
	prefix string

	mu       sync.Mutex
	ids      map[string]*ident
	err      error
	envelope map[string]any // a statement signed by the peer, made once
}

// statement is a DSSE envelope the peer signed: the statement of a claim
// refuted there.
func (p *peerForum) statement() (map[string]any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.opts.url == "" {
		return nil, errSkip("no --peer-url: no second forum to sign a statement")
	}
	if p.envelope != nil || p.err != nil {
		return p.envelope, p.err
	}
	p.envelope, p.err = p.make()
	return p.envelope, p.err
}

func (p *peerForum) make() (map[string]any, error) {
	h := &httpBinding{base: strings.TrimRight(p.opts.url, "/")}
	var err error
	switch {
	case p.opts.tokens != "":
		p.ids, err = readTokens(p.opts.tokens)
	case p.opts.provision != "":
		p.ids = map[string]*ident{}
		for _, role := range []string{"alice", "bob"} {
			tok, err := provision(p.opts.provision, []string{"--handle", p.prefix + "-" + role, "--rights", "read,write"})
			if err != nil {
				return nil, err
			}
			p.ids[role] = &ident{Role: role, Token: tok}
		}
	default:
		return nil, fmt.Errorf("--peer-url needs --peer-provision or --peer-tokens")
	}
	if err != nil {
		return nil, err
	}
	if p.ids["alice"] == nil || p.ids["bob"] == nil {
		return nil, fmt.Errorf("the peer's tokens need roles alice and bob")
	}
	body := fmt.Sprintf("a claim made on the peer (conform %s)", p.prefix)
	r, err := h.Call(p.ids["alice"].Token, "post", map[string]any{"kind": "assert", "body": body, "evidence": proof})
	if err != nil || !r.OK() {
		return nil, fmt.Errorf("assert on the peer: %v %s", err, r)
	}
	th, cl := str(r.Body, "thread", "id"), str(r.Body, "claim", "id")
	r, err = h.Call(p.ids["bob"].Token, "post", map[string]any{"kind": "refute", "thread": th, "claim": cl, "body": "refuted on the peer " + p.prefix, "evidence": proof})
	if err != nil || !r.OK() {
		return nil, fmt.Errorf("refute on the peer: %v %s", err, r)
	}
	r, err = h.Call(p.ids["alice"].Token, "get_statement", map[string]any{"id": cl})
	if err != nil || !r.OK() {
		return nil, fmt.Errorf("get_statement on the peer: %v %s", err, r)
	}
	return obj(r.Body, "statement", "envelope"), nil
}

// putBlob stores bytes on the tested server over HTTP (the blob is the
// forum's, whichever binding then names it) and returns the digest.
func (k *kit) putBlob(role string, data []byte) string {
	req, _ := http.NewRequest("POST", k.base+"/api/v1/blobs", strings.NewReader(string(data)))
	req.Header.Set("Authorization", "Bearer "+k.tok(role))
	req.Header.Set("Content-Type", "application/json")
	r, err := (&httpBinding{base: k.base}).send(req)
	if err != nil {
		panic(err)
	}
	if !r.OK() {
		panic(fmt.Errorf("put_blob: %s", r))
	}
	return str(r.Body, "digest")
}

// attestationSignature asserts a claim whose evidence is the attestation
// blob digest and returns the signature its claim shows, in post's answer
// and in get_claim's.
func (k *kit) attestationSignature(digest string) (posted, read string, err error) {
	ev := []any{map[string]any{"kind": "attestation", "ref": digest}}
	r := k.post("alice", map[string]any{"kind": "assert", "body": k.body("a claim on another forum's word"), "evidence": ev})
	if !r.OK() {
		return "", "", fmt.Errorf("an assert with attestation evidence was refused: %s", r)
	}
	find := func(claim map[string]any) string {
		for _, e := range list(claim, "evidence") {
			if str(e, "ref") == digest {
				return str(e, "signature")
			}
		}
		return ""
	}
	g := k.call("alice", "get_claim", map[string]any{"claim": str(r.Body, "claim", "id")})
	if !g.OK() {
		return "", "", fmt.Errorf("get_claim: %s", g)
	}
	return find(obj(r.Body, "claim")), find(obj(g.Body, "claim")), nil
}

var signedValid = regexp.MustCompile(`^signed by .+: valid$`)

// tamper changes one byte of an envelope's payload, keeping its signature.
func tamper(env map[string]any) map[string]any {
	payload, _ := base64.StdEncoding.DecodeString(str(env, "payload"))
	changed := strings.Replace(string(payload), `"refuted"`, `"verified"`, 1)
	if changed == string(payload) && len(payload) > 0 {
		b := []byte(changed)
		b[len(b)/2] ^= 1
		changed = string(b)
	}
	payload = []byte(changed)
	out := map[string]any{}
	for key, v := range env {
		out[key] = v
	}
	out["payload"] = base64.StdEncoding.EncodeToString(payload)
	return out
}

func peerChecks() []check {
	s := "witness"
	return []check{
		{s, "attestation evidence signed by a forum the operator trusts shows signed by NAME: valid", "§15 rule 6", false, false, func(k *kit) error {
			env, err := k.peer.statement()
			if err != nil {
				return err
			}
			raw, _ := json.Marshal(env)
			posted, read, err := k.attestationSignature(k.putBlob("alice", raw))
			if err != nil {
				return err
			}
			return all(
				expect(signedValid.MatchString(read), "get_claim shows the peer's statement as %q, want signed by <name>: valid (does the server trust the peer's keys?)", read),
				expect(signedValid.MatchString(posted), "post's answer shows the peer's statement as %q, want signed by <name>: valid", posted))
		}},
		{s, "attestation evidence whose signed payload was changed shows signature not verified", "§15 rule 6", false, false, func(k *kit) error {
			env, err := k.peer.statement()
			if _, skip := err.(skipError); skip {
				// No peer: the server's own statement, changed, serves.
				th, cl, _ := k.claim("alice")
				k.claimAct("bob", "refute", th, cl)
				r := k.call("alice", "get_statement", map[string]any{"id": cl})
				if !r.OK() {
					return fmt.Errorf("get_statement: %s", r)
				}
				env, err = obj(r.Body, "statement", "envelope"), nil
			}
			if err != nil {
				return err
			}
			raw, _ := json.Marshal(tamper(env))
			posted, read, err := k.attestationSignature(k.putBlob("alice", raw))
			if err != nil {
				return err
			}
			return expect(read == "signature not verified" && posted == read, "a changed statement shows %q (get_claim), %q (post), want signature not verified", read, posted)
		}},
		{s, "attestation evidence holding no DSSE envelope shows signature not verified", "§15 rule 6", false, false, func(k *kit) error {
			posted, read, err := k.attestationSignature(k.putBlob("alice", []byte(`{"not":"an envelope `+k.run+`"}`)))
			if err != nil {
				return err
			}
			return expect(read == "signature not verified" && posted == read, "a blob that is no envelope shows %q (get_claim), %q (post), want signature not verified", read, posted)
		}},
		{s, "evidence carrying the server's signature field is invalid_body", "§15 rule 6", false, false, func(k *kit) error {
			digest := k.putBlob("alice", []byte(`{"not":"an envelope either `+k.run+`"}`))
			r := k.post("alice", map[string]any{"kind": "assert", "body": k.body("c"),
				"evidence": []any{map[string]any{"kind": "attestation", "ref": digest, "signature": "signed by anyone: valid"}}})
			return refused(r, "invalid_body", "")
		}},
		{s, "attestation evidence naming no stored blob is blob_not_found", "§15 rule 4, rule 6", false, false, func(k *kit) error {
			sum := sha256.Sum256([]byte("never stored " + k.run))
			r := k.post("alice", map[string]any{"kind": "assert", "body": k.body("c"),
				"evidence": []any{map[string]any{"kind": "attestation", "ref": "sha256:" + hex.EncodeToString(sum[:])}}})
			return refused(r, "blob_not_found", "evidence")
		}},
	}
}
