package services_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestStatementsTravelBetweenForums: a verdict signed by one forum, stored
// as a blob in another and cited as attestation evidence, shows "signed by
// <name>: valid" where the operator trusts the first forum's keys, and
// "signature not verified" where it does not, once tampered, or when the
// blob holds no envelope (docs/protocol.md §15.6). Two databases: the
// first forum on SQLite, the second on each database.
func TestStatementsTravelBetweenForums(t *testing.T) {
	dbA := dbtest.Fresh(t, "sqlite")
	a := &world{t: t, db: dbA, forum: services.New(dbA, services.Config{Realm: "north"}), ctx: t.Context()}
	alice, bob := a.agent("alice"), a.agent("bob")
	vera := a.agent("vera", services.RightRead, services.RightWrite, services.RightVerify)
	p := a.must(alice, env{"kind": "assert", "body": "The cache halves p99.", "evidence": []env{{"kind": "url", "ref": "https://ci/7"}}})
	a.must(bob, env{"kind": "attest", "thread": p.Thread.ID, "claim": p.Claim.ID, "body": "Reproduced.", "evidence": []env{{"kind": "log", "ref": "job 1"}}})
	a.must(vera, env{"kind": "verify", "thread": p.Thread.ID, "claim": p.Claim.ID, "body": "Sealed.", "evidence": []env{{"kind": "log", "ref": "job 2"}}})
	vic := a.agent("vic", services.RightRead, services.RightWrite, services.RightVerify) // the second party of the quorum
	a.must(vic, env{"kind": "verify", "thread": p.Thread.ID, "claim": p.Claim.ID, "body": "Sealed too.", "evidence": []env{{"kind": "log", "ref": "job 3"}}})
	st, err := a.forum.GetStatement(a.ctx, bob, p.Claim.ID)
	if err != nil {
		t.Fatal(err)
	}
	keysA, _ := a.forum.Keys(a.ctx)
	rawKeys, _ := json.Marshal(keysA)
	trust, err := services.ParseTrustedKey("north", rawKeys)
	if err != nil {
		t.Fatal(err)
	}
	envelope, _ := json.Marshal(st.Statement.Envelope)
	tampered := st.Statement.Envelope
	payload, _ := base64.StdEncoding.DecodeString(tampered.Payload)
	payload[len(payload)/2] ^= 1
	tampered.Payload = base64.StdEncoding.EncodeToString(payload)
	tamperedRaw, _ := json.Marshal(tampered)

	eachWorldWith(t, services.Config{Realm: "south", TrustedKeys: []services.TrustedKey{trust}}, func(t *testing.T, b *world) {
		carol, dave := b.agent("carol"), b.agent("dave")
		put := func(data []byte) string {
			blob, err := b.forum.PutBlob(b.ctx, carol, data, "application/json")
			if err != nil {
				t.Fatal(err)
			}
			return blob.Digest
		}
		good, bad, none := put(envelope), put(tamperedRaw), put([]byte(`{"not":"an envelope"}`))
		b.refused(carol, env{"kind": "assert", "body": "x", "evidence": []env{{"kind": "attestation", "ref": "https://north/statements/cl_1"}}}, services.InvalidBody, "evidence[0].ref")
		b.refused(carol, env{"kind": "assert", "body": "x", "evidence": []env{{"kind": "attestation", "ref": services.BlobDigest([]byte("absent"))}}}, services.BlobNotFound, "evidence")
		q := b.must(carol, env{"kind": "assert", "body": "North verified that the cache halves p99.", "evidence": []env{
			{"kind": "attestation", "ref": good}, {"kind": "attestation", "ref": bad}, {"kind": "attestation", "ref": none}, {"kind": "url", "ref": "https://x"}}})
		want := []string{"signed by north: valid", services.SignatureUnverified, services.SignatureUnverified, ""}
		shown := func(c services.Claim) []string {
			var out []string
			for _, e := range c.Evidence {
				out = append(out, e.Signature)
			}
			return out
		}
		if got := shown(*q.Claim); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("post answered signatures %q, want %q", got, want)
		}
		view, err := b.forum.GetClaim(b.ctx, dave, q.Claim.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := shown(view.Claim); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("get_claim shows %q, want %q", got, want)
		}
		page, err := b.forum.ListClaims(b.ctx, dave, services.ClaimsQuery{})
		if err != nil || len(page.Claims) != 1 || page.Claims[0].Evidence[0].Signature != want[0] {
			t.Fatalf("list_claims: %+v %v", page, err)
		}
		// The same database read by a forum that trusts nobody.
		untrusting := services.New(b.db, services.Config{Realm: "south"})
		view, _ = untrusting.GetClaim(b.ctx, dave, q.Claim.ID)
		if view.Claim.Evidence[0].Signature != services.SignatureUnverified {
			t.Fatalf("without the trusted key: %q", view.Claim.Evidence[0].Signature)
		}
		// An attestation attests another's claim the same way.
		b.must(dave, env{"kind": "attest", "thread": q.Thread.ID, "claim": q.Claim.ID, "body": "North's statement.", "evidence": []env{{"kind": "attestation", "ref": good}}})
		view, _ = b.forum.GetClaim(b.ctx, dave, q.Claim.ID)
		if view.Claim.Attestations[0].Evidence[0].Signature != want[0] {
			t.Fatalf("attestation evidence shows %q", view.Claim.Attestations[0].Evidence[0].Signature)
		}
	})
}
