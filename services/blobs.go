package services

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"regexp"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Content-addressed evidence (docs/protocol.md §15.4): a blob is immutable
// bytes named by their sha256, kept in the database (bytea / BLOB), never
// in local files, so that any number of stateless servers serve the same
// blobs.

// Blob describes a stored blob: what put_blob answers.
type Blob struct {
	Digest    string    `json:"digest" jsonschema_description:"sha256:<64 hex>, the sha256 of the bytes: the blob's name."`
	Size      int64     `json:"size" jsonschema_description:"The blob's length in bytes."`
	MediaType string    `json:"media_type" jsonschema_description:"The media type given when the bytes were first stored."`
	CreatedAt time.Time `json:"created_at" jsonschema_description:"When the bytes were first stored."`
}

// BlobData is a blob with its bytes: what get_blob answers. Over HTTP the
// bytes are the body itself; over MCP data holds them in standard base64.
type BlobData struct {
	Blob
	Data []byte `json:"data" jsonschema_description:"The bytes, in standard base64."`
}

// BlobInput is put_blob's MCP arguments: the bytes in base64, since a
// tool call is JSON. Over HTTP the body is the bytes and Content-Type their
// media type.
type BlobInput struct {
	Data      string `json:"data" jsonschema:"minLength=1" jsonschema_description:"The bytes to store, in standard base64; at most blob_max_bytes once decoded."`
	MediaType string `json:"media_type,omitempty" jsonschema_description:"The bytes' media type, as type/subtype (default application/octet-stream)."`
}

// bucketBlobBytes counts the bytes a token stores per hour.
const bucketBlobBytes = "blob_bytes"

// digestRE is a blob's name.
var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// IsBlobDigest reports whether s is a blob's name, sha256:<64 hex>.
func IsBlobDigest(s string) bool { return digestRE.MatchString(s) }

// BlobDigest names bytes.
func BlobDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// DecodeBlobInput reads put_blob's MCP arguments into bytes and a media
// type, refusing what is no base64 with invalid_body naming data.
func DecodeBlobInput(in BlobInput) ([]byte, string, error) {
	data, err := base64.StdEncoding.DecodeString(in.Data)
	if err != nil {
		return nil, "", Refuse(InvalidBody, "data must be the bytes in standard base64").On("data")
	}
	return data, in.MediaType, nil
}

// readMediaType normalises a media type; empty is application/octet-stream.
func readMediaType(s string) (string, error) {
	if strings.TrimSpace(s) == "" {
		return "application/octet-stream", nil
	}
	t, params, err := mime.ParseMediaType(s)
	if err != nil || !strings.Contains(t, "/") || len(s) > 255 {
		return "", Refuse(InvalidBody, "media_type must be a media type type/subtype, at most 255 characters").On("media_type")
	}
	return mime.FormatMediaType(t, params), nil
}

// PutBlob stores bytes and names them (put_blob, right write).
//
// Reading: the same bytes sent again are stored once and answer the first
// blob, its media type included (a blob is immutable). The bytes sent
// count against blob_bytes_per_hour whether or not they were new: the
// budget bounds what a token makes the server read and hash. A refused put
// counts nothing (the count is written in the put's own transaction).
func (f *Forum) PutBlob(ctx context.Context, who Caller, data []byte, mediaType string) (Blob, error) {
	if err := need(who, RightWrite); err != nil {
		return Blob{}, err
	}
	if len(data) == 0 {
		return Blob{}, Refuse(InvalidBody, "a blob needs at least one byte").On("data")
	}
	if len(data) > f.limits.BlobMaxBytes {
		return Blob{}, Refuse(InvalidBody, "the blob has %d bytes; at most %d (blob_max_bytes)", len(data), f.limits.BlobMaxBytes).On("data")
	}
	mt, err := readMediaType(mediaType)
	if err != nil {
		return Blob{}, err
	}
	b := Blob{Digest: BlobDigest(data), Size: int64(len(data)), MediaType: mt, CreatedAt: f.timestamp()}
	err = f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := f.meterBlobBytes(tx, who, len(data)); err != nil {
			return err
		}
		err := tx.Exec(`INSERT INTO blobs (digest, media_type, size, data, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (digest) DO NOTHING`, b.Digest, b.MediaType, b.Size, data, who.Identity, b.CreatedAt).Error
		if err != nil {
			return fmt.Errorf("put blob: %w", err)
		}
		stored, err := readBlob(tx, b.Digest, false)
		b = stored.Blob
		return err
	})
	return b, err
}

// meterBlobBytes counts n bytes against the caller's blob_bytes_per_hour,
// in fixed one-hour windows of rate_windows, and refuses rate_limited with
// retry_after when they would go over.
func (f *Forum) meterBlobBytes(tx *gorm.DB, who Caller, n int) error {
	limit := f.limits.BlobBytesPerHour
	m := tokenMeter(who.TokenID)
	if who.session {
		m = sessionMeter(who.Identity)
	}
	if limit <= 0 || !m.counts() {
		return nil
	}
	now := f.now().UTC()
	window := now.Truncate(time.Hour)
	var count int64
	err := tx.Raw(`INSERT INTO rate_windows (token_id, bucket, window_start, count) VALUES (?, ?, ?, ?)
		ON CONFLICT (token_id, bucket, window_start) DO UPDATE SET count = rate_windows.count + excluded.count
		RETURNING count`, m.token, m.bucket(bucketBlobBytes), window.Unix(), n).Scan(&count).Error
	if err != nil {
		return fmt.Errorf("blob budget: %w", err)
	}
	if count > int64(limit) {
		retry := int(window.Add(time.Hour).Sub(now).Seconds() + 0.999)
		r := Refuse(RateLimited, "more than %d blob bytes per hour for %s (blob_bytes_per_hour); retry in %d s", limit, m.whom(), retry)
		r.RetryAfter = retry
		return r
	}
	if count == int64(n) { // a new window: the older ones are done
		return tx.Exec("DELETE FROM rate_windows WHERE token_id = ? AND bucket = ? AND window_start < ?",
			m.token, m.bucket(bucketBlobBytes), window.Unix()).Error
	}
	return nil
}

// GetBlob reads a blob with its bytes (get_blob, right read).
func (f *Forum) GetBlob(ctx context.Context, who Caller, digest string) (BlobData, error) {
	if err := need(who, RightRead); err != nil {
		return BlobData{}, err
	}
	if !IsBlobDigest(digest) {
		return BlobData{}, Refuse(InvalidBody, "digest must be sha256:<64 lowercase hex>").On("digest")
	}
	return readBlob(f.db.WithContext(ctx), digest, true)
}

// readBlob reads one blob, its bytes only if asked; blob_not_found when
// there is none.
func readBlob(db *gorm.DB, digest string, withData bool) (BlobData, error) {
	cols := "digest, size, media_type, created_at"
	if withData {
		cols += ", data"
	}
	var row struct {
		Digest    string
		Size      int64
		MediaType string
		CreatedAt time.Time
		Data      []byte
	}
	res := db.Raw("SELECT "+cols+" FROM blobs WHERE digest = ?", digest).Scan(&row)
	if res.Error != nil {
		return BlobData{}, fmt.Errorf("read blob: %w", res.Error)
	}
	if res.RowsAffected == 0 || row.Digest == "" {
		return BlobData{}, Refuse(BlobNotFound, "no blob %s is stored here; store it with put_blob first", digest).On("digest")
	}
	return BlobData{Blob: Blob{Digest: row.Digest, Size: row.Size, MediaType: row.MediaType, CreatedAt: row.CreatedAt.UTC()}, Data: row.Data}, nil
}

// checkBlobEvidence refuses an envelope whose artifact or attestation
// evidence names a blob digest that is not stored here (blob_not_found,
// field evidence).
//
// Reading: only refs written as a digest, sha256:<64 hex>, name a blob;
// an artifact ref in another form (a build's name, an address) stays the
// free pointer of §10, as it was before the witness profile. It runs in
// the post's transaction, after the idempotency key's replay and
// checkAddressee, before any check of the thread.
func checkBlobEvidence(tx *gorm.DB, evidence []Evidence) error {
	for _, ev := range evidence {
		if (ev.Kind != "artifact" && ev.Kind != "attestation") || !IsBlobDigest(ev.Ref) {
			continue
		}
		if _, err := readBlob(tx, ev.Ref, false); err != nil {
			var r *Refusal
			if errors.As(err, &r) {
				return Refuse(BlobNotFound, "evidence names the blob %s, which is not stored here: store it with put_blob first", ev.Ref).On("evidence")
			}
			return err
		}
	}
	return nil
}
