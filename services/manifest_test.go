package services_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestReasonsMatchTheProtocol checks every reason of docs/protocol.md §2.2 and
// §14 with its status, written out again here from the protocol's text.
func TestReasonsMatchTheProtocol(t *testing.T) {
	want := map[services.Reason]int{
		"invalid_body": 400, "evidence_required": 400, "token_missing": 401, "token_invalid": 401,
		"token_right_missing": 403, "thread_authority_missing": 403, "thread_not_found": 404,
		"message_not_found": 404, "claim_not_found": 404, "identity_not_found": 404, "blob_not_found": 404,
		"parent_mismatch": 409, "self_reply": 409, "self_attest": 409, "thread_locked": 409,
		"thread_ended": 409, "transition_invalid": 409, "state_changed": 409, "idempotency_key_reused": 409, "limit_exceeded": 409,
		"duplicate_body": 409, "loop_suspected": 409, "rate_limited": 429, "internal": 500, "unavailable": 503,
	}
	if len(services.Reasons) != len(want) {
		t.Fatalf("%d reasons, the protocol has %d", len(services.Reasons), len(want))
	}
	for _, r := range services.Reasons {
		if want[r.Reason] != r.Status {
			t.Errorf("%s: status %d, want %d", r.Reason, r.Status, want[r.Reason])
		}
		if len(r.Description) < 20 {
			t.Errorf("%s: description %q is not a sentence", r.Reason, r.Description)
		}
		if got := services.Refuse(r.Reason, "x"); got.Status != r.Status {
			t.Errorf("Refuse(%s) has status %d", r.Reason, got.Status)
		}
	}
}

func TestManifestIsSelfSufficient(t *testing.T) {
	forum := services.New(dbtest.Fresh(t, "sqlite"), services.Config{Realm: "lab"})
	m := forum.Manifest(context.Background())
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	json.Unmarshal(raw, &doc)
	for _, key := range []string{"parley", "server", "realm", "limits", "acts", "states", "rights", "reasons", "profiles", "operations"} {
		if _, ok := doc[key]; !ok {
			t.Errorf("manifest lacks %q", key)
		}
	}
	if m.Parley != "1" || m.Realm != "lab" || m.Limits != services.DefaultLimits() {
		t.Errorf("version %q realm %q limits %+v", m.Parley, m.Realm, m.Limits)
	}
	kinds := []string{}
	for _, a := range m.Acts {
		kinds = append(kinds, string(a.Kind))
		if a.Description == "" || a.Awaiting == "" || a.Mark == "" {
			t.Errorf("act %s lacks description, awaiting or mark", a.Kind)
		}
	}
	if got := strings.Join(kinds, " "); got != "ask answer clarify note propose object decide mark reopen" {
		t.Errorf("acts %s", got)
	}
	if fmt.Sprint(m.States.Forward) != "[open answered decided closed]" || fmt.Sprint(m.States.Side) != "[deferred obsolete rejected]" {
		t.Errorf("states %v %v", m.States.Forward, m.States.Side)
	}
	for _, s := range append(m.States.Forward, m.States.Side...) {
		if m.States.Descriptions[s] == "" {
			t.Errorf("state %s has no description", s)
		}
	}
	if len(m.States.Transitions) != 7 || m.States.HumanRemark == "" {
		t.Errorf("transitions %+v", m.States.Transitions)
	}
	ops := map[string]services.Operation{}
	for _, op := range m.Operations {
		ops[string(op.Name)] = op
		httpOnly := op.Name == "stream" // §2.1: the stream has no MCP tool
		if op.MCPTool == "" && !httpOnly || op.HTTP == "" || op.Right == "" || op.Description == "" || op.Title == "" {
			t.Errorf("operation %+v incomplete", op)
		}
		// AllowedFor knows every right the table names.
		if !slices.Contains([]services.Need{services.NeedNothing, services.NeedRead, services.NeedWrite, services.NeedLockOrHuman}, op.Right) {
			t.Errorf("operation %s needs %q, which AllowedFor does not know", op.Name, op.Right)
		}
	}
	for _, name := range []string{"get_manifest", "whoami", "post", "read_thread", "list_threads", "inbox", "get_events", "stream", "confirm", "get_claim", "list_claims", "list_identities", "put_blob", "get_blob", "get_statement"} {
		if _, ok := ops[name]; !ok {
			t.Errorf("operation %s missing", name)
		}
	}
	if len(m.Rights) != 4 || len(m.Reasons) != len(services.Reasons) {
		t.Errorf("rights %d reasons %d", len(m.Rights), len(m.Reasons))
	}
}

func TestAsRefusal(t *testing.T) {
	r, unexpected := services.AsRefusal(fmt.Errorf("post: %w", services.Refuse(services.SelfReply, "x").On("parent")))
	if r.Reason != services.SelfReply || r.Field != "parent" || unexpected {
		t.Fatalf("wrapped refusal lost: %+v", r)
	}
	r, unexpected = services.AsRefusal(errors.New("syntax error at or near SELECT"))
	if r.Reason != services.Internal || r.Status != 500 || !unexpected || strings.Contains(r.Message, "SELECT") {
		t.Fatalf("internal: %+v", r)
	}
}

func TestClosedDatabaseIsUnavailable(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		forum := services.New(db, services.Config{})
		tok, err := forum.CreateToken(context.Background(), services.TokenRequest{Handle: "a", Rights: []services.Right{services.RightWrite}})
		if err != nil {
			t.Fatal(err)
		}
		sqlDB, _ := db.DB()
		sqlDB.Close()
		_, err = forum.Authenticate(context.Background(), tok.Secret)
		if r, _ := services.AsRefusal(err); r.Reason != services.Unavailable {
			t.Fatalf("closed database: %v", err)
		}
		if err := forum.Ping(context.Background()); err == nil {
			t.Fatal("ping succeeded on a closed database")
		}
	})
}

// TestManifestAdvertisesTheDialecticProfile checks the profile's entry
// against what the server does: each act is accepted by the parser, each
// status by list_claims, each evidence kind in an envelope, each limit is
// the one in force, and each operation is served.
func TestManifestAdvertisesTheDialecticProfile(t *testing.T) {
	forum := services.New(dbtest.Fresh(t, "sqlite"), services.Config{})
	m := forum.Manifest(context.Background())
	if len(m.Profiles) != 4 || m.Profiles[0].Name != "dialectic" || m.Profiles[1].Name != "feed" || m.Profiles[2].Name != "guard" || m.Profiles[3].Name != "witness" {
		t.Fatalf("profiles %+v, want dialectic, feed, guard and witness", m.Profiles)
	}
	p := m.Profiles[0]
	var kinds []string
	for _, a := range p.Acts {
		kinds = append(kinds, string(a.Kind))
		if a.Description == "" || a.Awaiting == "" || a.Mark == "" {
			t.Errorf("profile act %s lacks description, awaiting or mark", a.Kind)
		}
		_, err := forum.ParseEnvelope([]byte(`{"kind":"` + string(a.Kind) + `","body":"x"}`))
		if r, _ := services.AsRefusal(err); err != nil && r.Field == "kind" {
			t.Errorf("profile act %s is not accepted: %v", a.Kind, err)
		}
	}
	if got := strings.Join(kinds, " "); got != "assert attest refute verify" {
		t.Errorf("profile acts %s", got)
	}
	var statuses []string
	reader := services.Caller{Identity: "test:reader", Kind: services.KindLLM, Rights: []services.Right{services.RightRead}}
	for _, s := range p.Statuses {
		statuses = append(statuses, string(s.Status))
		if _, err := forum.ListClaims(context.Background(), reader, services.ClaimsQuery{Status: string(s.Status)}); err != nil {
			t.Errorf("list_claims refuses status %s: %v", s.Status, err)
		}
	}
	if got := strings.Join(statuses, " "); got != "unverified supported verified refuted superseded expired" {
		t.Errorf("claim statuses %s", got)
	}
	if len(p.EvidenceKinds) != 8 || len(p.Transitions) == 0 || len(p.Rules) == 0 || len(p.Fields) != 4 {
		t.Errorf("evidence kinds %d, transitions %d, rules %d, fields %d", len(p.EvidenceKinds), len(p.Transitions), len(p.Rules), len(p.Fields))
	}
	for _, k := range p.EvidenceKinds {
		raw := `{"kind":"assert","body":"x","evidence":[{"kind":"` + string(k.Kind) + `","ref":"r"}]}`
		if _, err := forum.ParseEnvelope([]byte(raw)); err != nil || k.Description == "" {
			t.Errorf("evidence kind %s: %v", k.Kind, err)
		}
	}
	l := services.DefaultLimits()
	want := map[string]int{"evidence_max_items": l.EvidenceMaxItems, "evidence_ref_max_chars": l.EvidenceRefMaxChars, "supersedes_max_items": l.SupersedesMaxItems}
	if fmt.Sprint(p.Limits) != fmt.Sprint(want) {
		t.Errorf("profile limits %v, want %v", p.Limits, want)
	}
	for _, name := range p.Operations {
		if !slices.ContainsFunc(m.Operations, func(op services.Operation) bool { return op.Name == name }) {
			t.Errorf("profile operation %s is not in operations", name)
		}
	}
	for _, r := range p.Reasons {
		if !slices.ContainsFunc(m.Reasons, func(i services.ReasonInfo) bool { return i.Reason == r }) {
			t.Errorf("profile reason %s is not in reasons", r)
		}
	}
}

// TestManifestAdvertisesTheFeedProfile checks the feed profile's entry
// against what is served: its limits are those in force and its
// operations exist, the waiting reads with a wait parameter.
func TestManifestAdvertisesTheFeedProfile(t *testing.T) {
	forum := services.New(dbtest.Fresh(t, "sqlite"), services.Config{})
	m := forum.Manifest(context.Background())
	var feed services.ProfileInfo
	for _, p := range m.Profiles {
		if p.Name == "feed" {
			feed = p
		}
	}
	if feed.Limits["wait_max_seconds"] != m.Limits.WaitMaxSeconds || feed.Limits["streams_per_token"] != m.Limits.StreamsPerToken ||
		feed.Limits["waits_per_token"] != m.Limits.WaitsPerToken || m.Limits.WaitMaxSeconds != 30 {
		t.Fatalf("feed limits %v, limits %+v", feed.Limits, m.Limits)
	}
	for _, name := range feed.Operations {
		found := false
		for _, op := range m.Operations {
			if op.Name != name {
				continue
			}
			found = true
			if name != "stream" && !slices.ContainsFunc(op.Params, func(p services.Param) bool { return p.Name == "wait" }) {
				t.Errorf("%s takes no wait", name)
			}
		}
		if !found {
			t.Errorf("the feed names %s, which is no operation", name)
		}
	}
}
