package main

import (
	"bufio"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

var proof = []any{map[string]any{"kind": "url", "ref": "https://example.org/proof"}}

// claim asserts a claim by role in a new thread; it returns the thread,
// the claim and the assert's message.
func (k *kit) claim(role string, extra ...any) (thread, claim, msg string) {
	env := map[string]any{"kind": "assert", "body": k.body("a claim"), "evidence": proof}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i].(string)] = extra[i+1]
	}
	r := k.post(role, env)
	if !r.OK() {
		panic(fmt.Errorf("setup assert: %s", r))
	}
	return str(r.Body, "thread", "id"), str(r.Body, "claim", "id"), str(r.Body, "message", "id")
}

func (k *kit) claimAct(role, kind, thread, claim string) Reply {
	return k.post(role, map[string]any{"kind": kind, "thread": thread, "claim": claim, "body": k.body(kind), "evidence": proof})
}

func (k *kit) claimStatus(id string) string {
	r := k.call("alice", "get_claim", map[string]any{"claim": id})
	if !r.OK() {
		panic(fmt.Errorf("get_claim %s: %s", id, r))
	}
	return str(r.Body, "claim", "status")
}

func dialecticChecks() []check {
	s := "dialectic"
	return []check{
		{s, "assert opens a thread and creates an unverified claim cl_N", "§10", false, false, func(k *kit) error {
			r := k.post("alice", map[string]any{"kind": "assert", "body": k.body("claim"), "evidence": proof})
			if err := accepted(r); err != nil {
				return err
			}
			c := obj(r.Body, "claim")
			return expect(strings.HasPrefix(str(c, "id"), "cl_") && str(c, "status") == "unverified" && str(c, "claimant", "identity") == k.who("alice"), "claim %s", show(c))
		}},
		{s, "attest, refute and verify without evidence are evidence_required", "§10", false, false, func(k *kit) error {
			th, cl, _ := k.claim("alice")
			for _, kind := range []string{"attest", "refute", "verify"} {
				role := "bob"
				if kind == "verify" {
					role = "ver"
				}
				if err := refused(k.post(role, map[string]any{"kind": kind, "thread": th, "claim": cl, "body": k.body(kind)}), "evidence_required", ""); err != nil {
					return fmt.Errorf("%s: %w", kind, err)
				}
			}
			return nil
		}},
		{s, "attest moves unverified to supported", "§10", false, false, func(k *kit) error {
			th, cl, _ := k.claim("alice")
			r := k.claimAct("bob", "attest", th, cl)
			return all(accepted(r), expect(k.claimStatus(cl) == "supported", "status %s, want supported", k.claimStatus(cl)))
		}},
		{s, "an identity cannot attest its own claim: self_attest", "§10", false, false, func(k *kit) error {
			th, cl, _ := k.claim("alice")
			return refused(k.claimAct("alice", "attest", th, cl), "self_attest", "")
		}},
		{s, "verify needs the right verify: token_right_missing", "§10, §6", false, false, func(k *kit) error {
			th, cl, _ := k.claim("alice")
			k.claimAct("bob", "attest", th, cl)
			return refused(k.claimAct("carol", "verify", th, cl), "token_right_missing", "")
		}},
		{s, "verify of an unverified claim is transition_invalid", "§10", false, false, func(k *kit) error {
			th, cl, _ := k.claim("alice")
			return refused(k.claimAct("ver", "verify", th, cl), "transition_invalid", "")
		}},
		{s, "verify seals a supported claim (verify_quorum verifications)", "§10, §15 rule 3", false, false, func(k *kit) error {
			th, cl, _ := k.claim("alice")
			k.claimAct("bob", "attest", th, cl)
			quorum := 1
			if q, ok := k.limits["verify_quorum"]; ok {
				quorum = int(q)
			}
			verifiers := []string{"ver", "ver2"}
			if quorum > len(verifiers) {
				return errSkip("verify_quorum %d needs more verifiers than the kit has", quorum)
			}
			for i := 0; i < quorum; i++ {
				if i > 0 && k.claimStatus(cl) != "supported" {
					return fmt.Errorf("after %d of %d verifications the claim is %s, want supported", i, quorum, k.claimStatus(cl))
				}
				if err := accepted(k.claimAct(verifiers[i], "verify", th, cl)); err != nil {
					return err
				}
			}
			return expect(k.claimStatus(cl) == "verified", "status %s, want verified", k.claimStatus(cl))
		}},
		{s, "a refutation with proof outweighs support: refuted, then attest is transition_invalid", "§10", false, false, func(k *kit) error {
			th, cl, _ := k.claim("alice")
			k.claimAct("bob", "attest", th, cl)
			if err := accepted(k.claimAct("carol", "refute", th, cl)); err != nil {
				return err
			}
			return all(expect(k.claimStatus(cl) == "refuted", "status %s", k.claimStatus(cl)), refused(k.claimAct("bob", "attest", th, cl), "transition_invalid", ""))
		}},
		{s, "a claimant may refute its own claim", "§10", false, false, func(k *kit) error {
			th, cl, _ := k.claim("alice")
			return accepted(k.claimAct("alice", "refute", th, cl))
		}},
		{s, "attesting a supported claim adds support without changing it", "§10 errata 2", false, false, func(k *kit) error {
			th, cl, _ := k.claim("alice")
			k.claimAct("bob", "attest", th, cl)
			return all(accepted(k.claimAct("carol", "attest", th, cl)), expect(k.claimStatus(cl) == "supported", "status %s", k.claimStatus(cl)))
		}},
		{s, "superseding one's own claim is no self_reply; the old claim is superseded", "§7 errata 2, §10", false, false, func(k *kit) error {
			th, cl, msg := k.claim("alice")
			r := k.post("alice", map[string]any{"kind": "assert", "thread": th, "parent": msg, "supersedes": []any{cl}, "body": k.body("correction")})
			return all(accepted(r), expect(k.claimStatus(cl) == "superseded", "status %s, want superseded", k.claimStatus(cl)))
		}},
		{s, "superseding a refuted claim leaves it refuted", "§10 errata 2", false, false, func(k *kit) error {
			th, cl, _ := k.claim("alice")
			k.claimAct("bob", "refute", th, cl)
			r := k.post("alice", map[string]any{"kind": "assert", "thread": th, "supersedes": []any{cl}, "body": k.body("correction")})
			c := obj(k.call("alice", "get_claim", map[string]any{"claim": cl}).Body, "claim")
			return all(accepted(r), expect(str(c, "status") == "refuted" && c["superseded_by"] != nil, "claim %s", show(c)))
		}},
		{s, "superseding another's claim is thread_authority_missing", "§10", false, false, func(k *kit) error {
			th, cl, _ := k.claim("alice")
			return refused(k.post("bob", map[string]any{"kind": "assert", "thread": th, "supersedes": []any{cl}, "body": k.body("hostile")}), "thread_authority_missing", "")
		}},
		{s, "an unknown claim is claim_not_found", "§10, §2.2", false, false, func(k *kit) error {
			th, _, _ := k.claim("alice")
			return all(refused(k.call("alice", "get_claim", map[string]any{"claim": "cl_999999999"}), "claim_not_found", ""),
				refused(k.claimAct("bob", "attest", th, "cl_999999999"), "claim_not_found", ""))
		}},
		{s, "valid_until in the past is invalid_body", "§10", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"kind": "assert", "body": k.body("c"), "valid_until": "2001-01-01T00:00:00Z"}), "invalid_body", "valid_until")
		}},
		{s, "a dialectic field on a core act is invalid_body", "§3, §10", false, false, func(k *kit) error {
			return refused(k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "evidence": proof}), "invalid_body", "evidence")
		}},
		{s, "past valid_until a claim reads expired", "§10", true, false, func(k *kit) error {
			// Five seconds ahead: still in the future when a loaded server
			// reads it; no limit of the manifest names this time.
			until := time.Now().UTC().Add(5 * time.Second).Truncate(time.Second)
			_, cl, _ := k.claim("alice", "valid_until", until.Format(time.RFC3339))
			time.Sleep(time.Until(until) + 500*time.Millisecond)
			return expect(k.claimStatus(cl) == "expired", "status %s past valid_until, want expired", k.claimStatus(cl))
		}},
		{s, "list_claims filters by status, most recent first", "§8.2, §10", false, false, func(k *kit) error {
			th, a, _ := k.claim("alice")
			r := k.post("alice", map[string]any{"kind": "assert", "thread": th, "body": k.body("second"), "from": map[string]any{"extension": "x"}})
			b := str(r.Body, "claim", "id")
			l := list(k.call("alice", "list_claims", map[string]any{"thread": th}).Body, "claims")
			if len(l) != 2 || str(l[0], "id") != b || str(l[1], "id") != a {
				return fmt.Errorf("claims of %s: %s, want [%s %s]", th, show(l), b, a)
			}
			k.claimAct("bob", "attest", th, a)
			l = list(k.call("alice", "list_claims", map[string]any{"thread": th, "status": "supported"}).Body, "claims")
			return expect(len(l) == 1 && str(l[0], "id") == a, "supported claims: %s", show(l))
		}},
	}
}

func feedChecks() []check {
	s := "feed"
	return []check{
		{s, "wait beyond wait_max_seconds is invalid_body", "§13", false, false, func(k *kit) error {
			return refused(k.call("bob", "inbox", map[string]any{"wait": k.limit("wait_max_seconds") + 1}), "invalid_body", "wait")
		}},
		{s, "a waiting inbox answers when a turn opens for the caller", "§13", false, false, func(k *kit) error {
			_, cursor := k.inboxAll("carol", "", false, nil)
			done := make(chan Reply, 1)
			go func() {
				done <- k.call("carol", "inbox", map[string]any{"since": cursor, "wait": k.limit("wait_max_seconds")})
			}()
			// The turn may open before the call starts to wait; either way
			// it must be in the answer.
			time.Sleep(200 * time.Millisecond)
			th, _ := k.ask("alice", "to", map[string]any{"identity": k.who("carol")})
			r := <-done
			items := list(r.Body, "items")
			for _, it := range items {
				if str(it, "thread", "id") == th {
					return nil
				}
			}
			return fmt.Errorf("the waiting inbox answered without %s: %s", th, r)
		}},
		{s, "a wait with nothing new answers no items and the same cursor", "§13", true, false, func(k *kit) error {
			_, cursor := k.inboxAll("reader", "", true, nil)
			r := k.call("reader", "inbox", map[string]any{"since": cursor, "wait": 1, "addressed": true})
			return all(accepted(r), expect(len(list(r.Body, "items")) == 0 && str(r.Body, "cursor") == cursor, "after the wait: %s", r))
		}},
		{s, "the stream sends parley.event with a cursor id", "§13", false, true, func(k *kit) error {
			base := k.b.(*httpBinding).base
			req, _ := http.NewRequest("GET", base+"/api/v1/stream", nil)
			req.Header.Set("Authorization", "Bearer "+k.tok("carol"))
			req.Header.Set("Accept", "text/event-stream")
			client := &http.Client{Timeout: time.Duration(k.limit("wait_max_seconds")+60) * time.Second}
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				return fmt.Errorf("stream status %d", resp.StatusCode)
			}
			th, _ := k.ask("alice")
			sc := bufio.NewScanner(resp.Body)
			var event, id string
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.HasPrefix(line, "event:"):
					event = strings.TrimSpace(line[6:])
				case strings.HasPrefix(line, "id:"):
					id = strings.TrimSpace(line[3:])
				case strings.HasPrefix(line, "data:") && event == "parley.event" && strings.Contains(line, `"`+th+`"`):
					return expect(id != "", "the event has no id")
				}
			}
			return fmt.Errorf("the stream ended without an event of %s: %v", th, sc.Err())
		}},
	}
}

func guardChecks() []check {
	s := "guard"
	return []check{
		{s, "a model's repeated body is duplicate_body, case and spaces aside", "§14 rule 1", false, false, func(k *kit) error {
			if k.limit("guard_recent_bodies") <= 0 {
				return errSkip("guard_recent_bodies is off")
			}
			th, _ := k.ask("alice")
			b := k.body("the same remark")
			k.must("bob", map[string]any{"kind": "note", "thread": th, "body": b})
			return refused(k.post("bob", map[string]any{"kind": "note", "thread": th, "body": "  " + strings.ToUpper(b) + " "}), "duplicate_body", "body")
		}},
		{s, "a model-only chain of guard_chain_max is cut: loop_suspected", "§14 rule 2", false, false, func(k *kit) error {
			n := k.limit("guard_chain_max")
			if n <= 0 || n > 100 {
				return errSkip("guard_chain_max %d", n)
			}
			th, parent := k.ask("alice")
			// Levels 2 … n+1 are allowed; the reply at n+2 sits under n
			// unmarked model messages… the root is level 1, so a chain under a
			// model's root is cut at level n+1.
			roles := []string{"bob", "carol"}
			for level := 2; level <= n; level++ {
				m, _ := k.must(roles[level%2], map[string]any{"kind": "note", "thread": th, "parent": parent, "body": k.body("chain")})
				parent = str(m, "id")
			}
			r := k.post(roles[(n+1)%2], map[string]any{"kind": "note", "thread": th, "parent": parent, "body": k.body("one more")})
			if err := refused(r, "loop_suspected", "parent"); err != nil {
				return err
			}
			return accepted(k.post("human", map[string]any{"kind": "note", "thread": th, "parent": parent, "body": k.body("a human steps in")}))
		}},
		{s, "reply_by in the past, or beyond reply_by_max_hours, is invalid_body", "§14 rule 4", false, false, func(k *kit) error {
			far := time.Now().UTC().Add(time.Duration(k.limit("reply_by_max_hours")+2) * time.Hour).Format(time.RFC3339)
			return all(
				refused(k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "reply_by": "2001-01-01T00:00:00Z"}), "invalid_body", "reply_by"),
				refused(k.post("alice", map[string]any{"kind": "ask", "body": k.body("q"), "reply_by": far}), "invalid_body", "reply_by"))
		}},
		{s, "the Thread shape shows guard active", "§8.1, §14", false, false, func(k *kit) error {
			th, _ := k.ask("alice")
			return expect(str(k.thread(th), "guard") == "active", "guard %v", k.thread(th)["guard"])
		}},
		{s, "an ask past its reply_by escalates to lock holders", "§14 rule 4", true, false, func(k *kit) error {
			// Five seconds ahead, as for valid_until above.
			by := time.Now().UTC().Add(5 * time.Second).Truncate(time.Second)
			th, _ := k.ask("alice", "to", map[string]any{"identity": k.who("bob")}, "reply_by", by.Format(time.RFC3339))
			time.Sleep(time.Until(by) + 500*time.Millisecond)
			if !k.inboxHas("mod", th, false) || !k.inboxHas("mod", th, true) || !k.inboxHas("human", th, true) {
				return fmt.Errorf("the inbox (full and addressed) of the lock holder and the human should list overdue %s", th)
			}
			t := k.thread(th)
			ev := list(k.call("alice", "get_events", map[string]any{"thread": th}).Body, "events")
			return all(expect(t["overdue_since"] != nil, "overdue_since is null"),
				expect(str(ev[len(ev)-1], "type") == "escalate", "the last event should be escalate: %s", show(ev[len(ev)-1])))
		}},
	}
}

func witnessChecks() []check {
	s := "witness"
	return []check{
		{s, "whoami shows the token's owner", "§15 rule 1", false, false, func(k *kit) error {
			r := k.call("alice", "whoami", nil)
			return all(accepted(r), expect(strings.HasPrefix(str(r.Body, "owner"), "human:"), "owner %v", r.Body["owner"]))
		}},
		{s, "an identity of the claimant's party cannot attest: self_attest", "§15 rule 2", false, false, func(k *kit) error {
			if k.ids["alice2"].Owner == "" || k.ids["alice2"].Owner != k.ids["alice"].Owner {
				return errSkip("alice and alice2 need one owner")
			}
			th, cl, _ := k.claim("alice")
			return refused(k.claimAct("alice2", "attest", th, cl), "self_attest", "")
		}},
		{s, "a party's body said before in another thread is duplicate_body, naming the earlier message; another party may say it", "§14 rule 1 (errata 2), §15 rule 1", false, false, func(k *kit) error {
			if k.limit("guard_recent_bodies_party") <= 0 {
				return errSkip("guard_recent_bodies_party is off")
			}
			if k.ids["alice2"].Owner == "" || k.ids["alice2"].Owner != k.ids["alice"].Owner {
				return errSkip("alice and alice2 need one owner")
			}
			th1, _ := k.ask("carol")
			th2, _ := k.ask("carol")
			b := k.body("a template comment")
			first, _ := k.must("alice", map[string]any{"kind": "note", "thread": th1, "body": b})
			r := k.post("alice2", map[string]any{"kind": "note", "thread": th2, "body": b})
			if err := refused(r, "duplicate_body", "body"); err != nil {
				return err
			}
			if id := str(first, "id"); !strings.Contains(str(r.Body, "error", "message"), id) {
				return fmt.Errorf("the refusal does not name the earlier message %s: %s", id, r)
			}
			return accepted(k.post("bob", map[string]any{"kind": "note", "thread": th2, "body": b}))
		}},
		{s, "the manifest names verify_quorum", "§15 rule 7", false, false, func(k *kit) error {
			_, ok := k.limits["verify_quorum"]
			return expect(ok, "no verify_quorum in limits")
		}},
		{s, "a blob's digest is the sha256 of its bytes, stored once, served as an attachment", "§15 rule 4", false, true, func(k *kit) error {
			base := k.b.(*httpBinding).base
			data := []byte("conformance evidence " + k.run)
			sum := sha256.Sum256(data)
			want := "sha256:" + hex.EncodeToString(sum[:])
			put := func() Reply {
				req, _ := http.NewRequest("POST", base+"/api/v1/blobs", strings.NewReader(string(data)))
				req.Header.Set("Authorization", "Bearer "+k.tok("alice"))
				req.Header.Set("Content-Type", "text/plain")
				r, err := (&httpBinding{base: base}).send(req)
				if err != nil {
					panic(err)
				}
				return r
			}
			a, b := put(), put()
			if err := all(accepted(a), accepted(b)); err != nil {
				return err
			}
			if str(a.Body, "digest") != want || str(b.Body, "digest") != want {
				return fmt.Errorf("digests %s, %s, want %s", str(a.Body, "digest"), str(b.Body, "digest"), want)
			}
			req, _ := http.NewRequest("GET", base+"/api/v1/blobs/"+want, nil)
			req.Header.Set("Authorization", "Bearer "+k.tok("bob"))
			resp, err := httpClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			return expect(resp.StatusCode == 200 && resp.Header.Get("X-Content-Type-Options") == "nosniff", "get blob: status %d, nosniff %q", resp.StatusCode, resp.Header.Get("X-Content-Type-Options"))
		}},
		{s, "artifact evidence naming no stored blob is blob_not_found", "§15 rule 4", false, false, func(k *kit) error {
			missing := "sha256:" + strings.Repeat("0", 64)
			r := k.post("alice", map[string]any{"kind": "assert", "body": k.body("c"), "evidence": []any{map[string]any{"kind": "artifact", "ref": missing}}})
			return refused(r, "blob_not_found", "evidence")
		}},
		{s, "the public keys are served without a token", "§15 rule 5", false, true, func(k *kit) error {
			resp, err := http.Get(k.b.(*httpBinding).base + "/.well-known/parley-keys.json")
			if err != nil {
				return err
			}
			resp.Body.Close()
			return expect(resp.StatusCode == 200, "status %d", resp.StatusCode)
		}},
		{s, "a refuted claim has a DSSE statement that verifies against the published keys", "§15 rule 5", false, false, func(k *kit) error {
			th, cl, _ := k.claim("alice")
			k.claimAct("bob", "refute", th, cl)
			r := k.call("alice", "get_statement", map[string]any{"id": cl})
			if err := accepted(r); err != nil {
				return err
			}
			return verifyDSSE(k, obj(r.Body, "statement", "envelope"))
		}},
		{s, "a thread decided, then closed, as its state of record has a DSSE statement that verifies", "§15 rule 5", false, false, func(k *kit) error {
			var errs []error
			for _, state := range []string{"decided", "closed"} {
				th := k.at(state)
				r := k.call("alice", "get_statement", map[string]any{"id": th})
				if err := accepted(r); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", state, err))
					continue
				}
				if err := verifyDSSE(k, obj(r.Body, "statement", "envelope")); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", state, err))
				}
			}
			return all(errs...)
		}},
	}
}

// verifyDSSE checks a DSSE envelope's Ed25519 signature over its
// pre-authentication encoding with the keys at
// /.well-known/parley-keys.json, as any DSSE verifier would, offline.
func verifyDSSE(k *kit, env map[string]any) error {
	payload, err := base64.StdEncoding.DecodeString(str(env, "payload"))
	if err != nil || str(env, "payloadType") == "" {
		return fmt.Errorf("not a DSSE envelope: %s", show(env))
	}
	base := strings.TrimSuffix(k.manifestURL(), "/api/v1/manifest")
	resp, err := http.Get(base + "/.well-known/parley-keys.json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var keys map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&keys); err != nil {
		return fmt.Errorf("parley-keys.json: %w", err)
	}
	pt := str(env, "payloadType")
	pae := fmt.Sprintf("DSSEv1 %d %s %d %s", len(pt), pt, len(payload), payload)
	for _, sig := range list(env, "signatures") {
		raw, _ := base64.StdEncoding.DecodeString(str(sig, "sig"))
		for _, key := range list(keys, "keys") {
			if str(key, "keyid") != str(sig, "keyid") {
				continue
			}
			pub, _ := hex.DecodeString(str(key, "keyval", "public"))
			if len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, []byte(pae), raw) {
				var st map[string]any
				json.Unmarshal(payload, &st)
				return expect(strings.HasPrefix(str(st, "_type"), "https://in-toto.io/Statement/"), "the payload is no in-toto Statement: %.200s", payload)
			}
		}
	}
	return fmt.Errorf("no signature of the envelope verifies against the published keys")
}
