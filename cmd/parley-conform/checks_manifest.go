package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
)

// coreActs are the nine speech acts of §4.
var coreActs = []string{"ask", "answer", "clarify", "note", "propose", "object", "decide", "mark", "reopen"}

// coreReasons are the refusal reasons of §2.2 with their statuses.
var coreReasons = map[string]int{
	"invalid_body": 400, "evidence_required": 400, "token_missing": 401, "token_invalid": 401,
	"token_right_missing": 403, "thread_authority_missing": 403, "thread_not_found": 404,
	"message_not_found": 404, "claim_not_found": 404, "identity_not_found": 404, "parent_mismatch": 409,
	"self_reply": 409, "self_attest": 409, "thread_locked": 409, "thread_ended": 409,
	"transition_invalid": 409, "state_changed": 409, "limit_exceeded": 409, "rate_limited": 429,
	"idempotency_key_reused": 409,
}

// referenceLimits are the limit names of §9 every manifest carries.
var referenceLimits = []string{"body_max_chars", "extension_max_chars", "provenance_field_max_chars",
	"thread_max_messages", "thread_max_depth", "page_default", "page_max", "request_max_bytes",
	"posts_per_minute", "requests_per_minute"}

func manifestChecks() []check {
	s := "manifest"
	return []check{
		{s, "the manifest carries every key of §8.2", "§8.2", false, false, func(k *kit) error {
			r := k.call("", "get_manifest", nil)
			if err := accepted(r); err != nil {
				return err
			}
			for _, key := range []string{"parley", "server", "realm", "limits", "acts", "states", "rights", "reasons", "profiles", "operations"} {
				if _, ok := r.Body[key]; !ok {
					return fmt.Errorf("no key %q in the manifest", key)
				}
			}
			return all(
				expect(str(r.Body, "parley") == "1", "parley is %v, want \"1\"", r.Body["parley"]),
				expect(str(r.Body, "server", "name") != "" && str(r.Body, "server", "version") != "", "server needs name and version: %s", show(r.Body["server"])),
				expect(dig(r.Body, "states", "forward") != nil && dig(r.Body, "states", "side") != nil && dig(r.Body, "states", "transitions") != nil,
					"states needs forward, side and transitions: %s", show(r.Body["states"])))
		}},
		{s, "get_manifest needs no token", "§2.1", false, false, func(k *kit) error {
			return accepted(k.call("", "get_manifest", nil))
		}},
		{s, "the nine core acts, each with a description, awaiting and mark", "§2, §4", false, false, func(k *kit) error {
			var kinds []string
			for _, a := range list(k.manifest, "acts") {
				kinds = append(kinds, str(a, "kind"))
				if str(a, "description") == "" {
					return fmt.Errorf("act %s has no description", str(a, "kind"))
				}
				m := obj(a)
				if _, ok := m["awaiting"]; !ok {
					return fmt.Errorf("act %s has no awaiting", str(a, "kind"))
				}
				if _, ok := m["mark"]; !ok {
					return fmt.Errorf("act %s has no mark", str(a, "kind"))
				}
			}
			return expect(reflect.DeepEqual(kinds, coreActs) || sameSet(kinds, coreActs), "acts are %v, want the nine %v", kinds, coreActs)
		}},
		{s, "the seven states, forward and side", "§5", false, false, func(k *kit) error {
			fw, side := strs(list(k.manifest, "states", "forward")), strs(list(k.manifest, "states", "side"))
			return all(
				expect(reflect.DeepEqual(fw, forward), "forward states %v, want %v", fw, forward),
				expect(sameSet(side, sideStates), "side states %v, want %v", side, sideStates))
		}},
		{s, "every reason of §2.2 is listed with its status and a description", "§2.2", false, false, func(k *kit) error {
			got := map[string]int{}
			for _, r := range list(k.manifest, "reasons") {
				got[str(r, "reason")] = int(num(r, "status"))
				if str(r, "description") == "" {
					return fmt.Errorf("reason %s has no description", str(r, "reason"))
				}
			}
			for reason, status := range coreReasons {
				if got[reason] != status {
					return fmt.Errorf("reason %s: manifest status %d, want %d", reason, got[reason], status)
				}
			}
			return nil
		}},
		{s, "rights read, write, lock and verify are described", "§6", false, false, func(k *kit) error {
			got := map[string]bool{}
			for _, r := range list(k.manifest, "rights") {
				got[str(r, "right")] = str(r, "description") != ""
			}
			for _, r := range []string{"read", "write", "lock", "verify"} {
				if !got[r] {
					return fmt.Errorf("right %s missing or undescribed: %s", r, show(k.manifest["rights"]))
				}
			}
			return nil
		}},
		{s, "every operation names its MCP tool, HTTP route and right", "§2.1, §8.2", false, false, func(k *kit) error {
			names := map[string]bool{}
			for _, op := range list(k.manifest, "operations") {
				m := obj(op)
				for _, key := range []string{"name", "mcp_tool", "http", "right", "description"} {
					if _, ok := m[key]; !ok {
						return fmt.Errorf("operation %s has no %s", str(op, "name"), key)
					}
				}
				names[str(op, "name")] = true
			}
			for _, op := range []string{"get_manifest", "whoami", "post", "read_thread", "list_threads", "inbox", "get_events", "confirm"} {
				if !names[op] {
					return fmt.Errorf("operation %s is not listed", op)
				}
			}
			return nil
		}},
		{s, "profiles each have a name, a description and acts", "§8.2", false, false, func(k *kit) error {
			for _, p := range list(k.manifest, "profiles") {
				m := obj(p)
				if str(m, "name") == "" || str(m, "description") == "" {
					return fmt.Errorf("profile without name or description: %s", show(p))
				}
				if _, ok := m["acts"]; !ok {
					return fmt.Errorf("profile %s has no acts", str(m, "name"))
				}
			}
			return nil
		}},
		{s, "GET /.well-known/parley.json answers the manifest", "§2.1", false, true, func(k *kit) error {
			resp, err := http.Get(k.b.(*httpBinding).base + "/.well-known/parley.json")
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				return fmt.Errorf("status %d, not JSON: %.200s", resp.StatusCode, raw)
			}
			a, _ := json.Marshal(m)
			b, _ := json.Marshal(k.manifest)
			return expect(bytes.Equal(a, b), "the well-known manifest differs from /api/v1/manifest")
		}},
		{s, "over MCP the manifest is the same as over HTTP", "§2.1", false, false, func(k *kit) error {
			r := k.call("", "get_manifest", nil)
			if err := accepted(r); err != nil {
				return err
			}
			a, _ := json.Marshal(r.Body)
			b, _ := json.Marshal(k.manifest)
			return expect(bytes.Equal(a, b), "the manifest over %s differs from HTTP's", k.b.Name())
		}},
	}
}

var forward = []string{"open", "answered", "decided", "closed"}
var sideStates = []string{"deferred", "obsolete", "rejected"}

func strs(l []any) []string {
	out := []string{}
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		} else {
			out = append(out, str(v, "state"))
		}
	}
	return out
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}
