package services_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"parley/migrations/dbtest"
	"parley/services"
)

// TestBlobsRoundTrip: put_blob stores bytes once by their sha256 and
// get_blob answers them byte for byte (docs/protocol.md §15.4), on both
// databases.
func TestBlobsRoundTrip(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		data := make([]byte, w.forum.Limits().BlobMaxBytes) // the largest allowed, every byte value
		rand.Read(data)
		data[0], data[1] = 0, 0xff
		b, err := w.forum.PutBlob(w.ctx, alice, data, "application/x-test; charset=binary")
		if err != nil {
			t.Fatal(err)
		}
		if b.Digest != services.BlobDigest(data) || !services.IsBlobDigest(b.Digest) || b.Size != int64(len(data)) {
			t.Fatalf("put answered %+v", b)
		}
		again, err := w.forum.PutBlob(w.ctx, bob, data, "text/html")
		if err != nil {
			t.Fatal(err)
		}
		if again != b {
			t.Fatalf("the same bytes again answered %+v, want the first blob %+v (media type kept)", again, b)
		}
		var rows int64
		w.db.Raw("SELECT COUNT(*) FROM blobs").Scan(&rows)
		if rows != 1 {
			t.Fatalf("%d blob rows, want the bytes stored once", rows)
		}
		got, err := w.forum.GetBlob(w.ctx, bob, b.Digest)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data, data) || got.Blob != b {
			t.Fatalf("get answered %d bytes (%+v), want the %d stored", len(got.Data), got.Blob, len(data))
		}
		for _, tc := range []struct {
			name   string
			data   []byte
			media  string
			reason services.Reason
			field  string
		}{
			{"too large", make([]byte, w.forum.Limits().BlobMaxBytes+1), "", services.InvalidBody, "data"},
			{"empty", nil, "", services.InvalidBody, "data"},
			{"no media type", []byte("x"), "not a type", services.InvalidBody, "media_type"},
		} {
			_, err := w.forum.PutBlob(w.ctx, alice, tc.data, tc.media)
			expectRefusal(t, err, tc.reason, tc.field)
		}
		_, err = w.forum.GetBlob(w.ctx, bob, services.BlobDigest([]byte("never stored")))
		expectRefusal(t, err, services.BlobNotFound, "digest")
		_, err = w.forum.GetBlob(w.ctx, bob, "sha256:ABC")
		expectRefusal(t, err, services.InvalidBody, "digest")
		reader := w.agent("reader", services.RightRead)
		_, err = w.forum.PutBlob(w.ctx, reader, []byte("x"), "")
		expectRefusal(t, err, services.TokenRightMissing)
	})
}

// TestBlobBudget: a token stores at most blob_bytes_per_hour bytes an
// hour; beyond, rate_limited with retry_after, and a refused put counts
// nothing. Another token has its own budget.
func TestBlobBudget(t *testing.T) {
	limits := services.DefaultLimits()
	limits.BlobMaxBytes, limits.BlobBytesPerHour = 100, 250
	// The clock stands still: a run across the hour would count in two
	// windows.
	now := func() time.Time { return time.Date(2026, 12, 7, 12, 30, 0, 0, time.UTC) }
	eachWorldWith(t, services.Config{Limits: limits, Now: now}, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		for i := range 2 {
			if _, err := w.forum.PutBlob(w.ctx, alice, bytes.Repeat([]byte{byte(i)}, 100), ""); err != nil {
				t.Fatal(err)
			}
		}
		_, err := w.forum.PutBlob(w.ctx, alice, bytes.Repeat([]byte{9}, 51), "")
		r := expectRefusal(t, err, services.RateLimited)
		if r.RetryAfter < 1 || r.RetryAfter > 3600 {
			t.Fatalf("retry_after %d, want 1..3600", r.RetryAfter)
		}
		if _, err := w.forum.PutBlob(w.ctx, alice, bytes.Repeat([]byte{9}, 50), ""); err != nil {
			t.Fatalf("50 bytes fit what is left of the budget (the refused put counted nothing): %v", err)
		}
		if _, err := w.forum.PutBlob(w.ctx, bob, bytes.Repeat([]byte{7}, 100), ""); err != nil {
			t.Fatalf("bob has a budget of his own: %v", err)
		}
	})
}

// TestArtifactEvidenceNamesAStoredBlob: evidence {kind artifact, ref
// sha256:…} must name a blob stored here, else blob_not_found on field
// evidence; other artifact refs stay free pointers.
func TestArtifactEvidenceNamesAStoredBlob(t *testing.T) {
	eachWorld(t, func(t *testing.T, w *world) {
		alice, bob := w.agent("alice"), w.agent("bob")
		missing := services.BlobDigest([]byte("not here"))
		w.refused(alice, env{"kind": "assert", "body": "it builds", "evidence": []env{{"kind": "artifact", "ref": missing}}}, services.BlobNotFound, "evidence")
		messages, _ := w.counts()
		if messages != 0 {
			t.Fatalf("a refused assert stored %d messages", messages)
		}
		b, err := w.forum.PutBlob(w.ctx, alice, []byte("build log: ok\n"), "text/plain")
		if err != nil {
			t.Fatal(err)
		}
		p := w.must(alice, env{"kind": "assert", "body": "it builds", "evidence": []env{{"kind": "artifact", "ref": b.Digest}}})
		w.refused(bob, env{"kind": "attest", "thread": p.Thread.ID, "claim": p.Claim.ID, "evidence": []env{{"kind": "artifact", "ref": missing}}, "body": "seen"},
			services.BlobNotFound, "evidence")
		w.must(bob, env{"kind": "attest", "thread": p.Thread.ID, "claim": p.Claim.ID, "evidence": []env{{"kind": "artifact", "ref": "build #12 on ci"}}, "body": "seen"})
	})
}

// TestBundleCarriesBlobs: export and import move a blob byte for byte,
// and import refuses a blob row whose digest is not the sha256 of its
// bytes, or whose size disagrees, or is over blob_max_bytes.
func TestBundleCarriesBlobs(t *testing.T) {
	for _, move := range [][2]string{{"sqlite", "postgres"}, {"postgres", "sqlite"}} {
		t.Run(move[0]+"→"+move[1], func(t *testing.T) {
			fromDB := dbtest.Fresh(t, move[0])
			w := &world{t: t, db: fromDB, forum: services.New(fromDB, services.Config{}), ctx: t.Context()}
			alice := w.agent("alice")
			data := []byte("\x00\x01binary\xff and text")
			b, err := w.forum.PutBlob(w.ctx, alice, data, "application/octet-stream")
			if err != nil {
				t.Fatal(err)
			}
			w.must(alice, env{"kind": "assert", "body": "see the blob", "evidence": []env{{"kind": "artifact", "ref": b.Digest}}})
			bundle := export(t, w.forum)

			to := services.New(dbtest.Fresh(t, move[1]), services.Config{})
			if _, err := to.Import(w.ctx, bytes.NewReader(bundle)); err != nil {
				t.Fatal(err)
			}
			got, err := to.GetBlob(w.ctx, alice, b.Digest)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Data, data) || got.Blob != b {
				t.Fatalf("moved blob %+v %q, want %+v %q", got.Blob, got.Data, b, data)
			}

			for _, tc := range []struct {
				name, field string
				edit        func(r bundleRow)
			}{
				{"digest of other bytes", "digest", func(r bundleRow) { r.Row["digest"] = rawJSON(services.BlobDigest([]byte("other"))) }},
				{"bytes changed", "digest", func(r bundleRow) { r.Row["data"] = rawJSON([]byte("\x00\x01binary\xfe and text")) }},
				{"size wrong", "size", func(r bundleRow) { r.Row["size"] = rawJSON(len(data) + 1) }},
				{"too large", "data", func(r bundleRow) {
					big := make([]byte, services.DefaultLimits().BlobMaxBytes+1)
					r.Row["data"], r.Row["digest"], r.Row["size"] = rawJSON(big), rawJSON(services.BlobDigest(big)), rawJSON(len(big))
				}},
				{"no media type", "media_type", func(r bundleRow) { r.Row["media_type"] = rawJSON("") }},
			} {
				t.Run(tc.name, func(t *testing.T) {
					eb := readBundle(t, bundle)
					tc.edit(eb.first(t, "blobs", anyRow))
					target := services.New(dbtest.Fresh(t, move[1]), services.Config{})
					_, err := target.Import(w.ctx, bytes.NewReader(eb.bytes(t)))
					var re *services.BundleRowError
					if !asBundleRowError(err, &re) || re.Table != "blobs" || re.Field != tc.field {
						t.Fatalf("import answered %v, want a refusal of blobs.%s", err, tc.field)
					}
				})
			}
		})
	}
}

func asBundleRowError(err error, re **services.BundleRowError) bool { return errors.As(err, re) }
