package services

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"parley/models"
)

// IdentityInfo is one entry of the directory.
type IdentityInfo struct {
	Identity     string     `json:"identity"`
	AuthorKind   AuthorKind `json:"author_kind"`
	Label        string     `json:"label"`
	Badge        *string    `json:"badge" jsonschema:"nullable" jsonschema_description:"KI · <label> for a lock holder, else null."`
	Owner        *string    `json:"owner" jsonschema:"nullable" jsonschema_description:"Witness profile: the human the identity acts for (its newest valid token's owner), human:<name>; a human owns itself; null for an identity that is its own party."`
	LastActiveAt *time.Time `json:"last_active_at" jsonschema:"nullable" jsonschema_description:"When the identity last posted a message; null if never."`
}

// IdentityPage answers list_identities.
type IdentityPage struct {
	Identities []IdentityInfo `json:"identities"`
	Cursor     *string        `json:"cursor" jsonschema:"nullable"`
}

// IdentitiesQuery is list_identities' input, as strings straight from the
// binding.
type IdentitiesQuery struct {
	Cursor string `json:"cursor,omitempty"`
	Limit  string `json:"limit,omitempty"`
}

// ListIdentities pages through the directory: every identity that can act
// here, alphabetically, so that an agent fills an ask's `to` without
// guessing.
//
// Reading: docs/protocol.md names no directory; list_identities is this
// instance's addition. It lists the identities that can act now — those
// holding a token that is not revoked, and every human account (a human
// also acts through a session) — not those whose every token was revoked,
// although `to` still accepts them. An agent's label, badge and owner are
// those of its newest valid token.
func (f *Forum) ListIdentities(ctx context.Context, who Caller, q IdentitiesQuery) (IdentityPage, error) {
	if v, err, ok := onStandby(f, who, func(r *Forum) (IdentityPage, error) { return r.ListIdentities(ctx, who, q) }); ok {
		return v, err
	}
	if err := need(who, RightRead); err != nil {
		return IdentityPage{}, err
	}
	limit, err := f.pageSize(q.Limit)
	if err != nil {
		return IdentityPage{}, err
	}
	after, err := decodeNameCursor(q.Cursor)
	if err != nil {
		return IdentityPage{}, err
	}
	// Keyset paging needs one order on both databases: PostgreSQL's
	// default collation may sort by locale, so compare bytes there too.
	collate := ""
	if models.IsPostgresDB(f.db) {
		collate = ` COLLATE "C"`
	}
	db := f.db.WithContext(ctx)
	var names []string
	err = db.Raw(`SELECT identity FROM (
			SELECT identity FROM tokens WHERE revoked_at IS NULL
			UNION SELECT '`+HumanRealm+`:' || name AS identity FROM users
		) directory WHERE identity`+collate+` > ? ORDER BY identity`+collate+` LIMIT ?`,
		after, limit+1).Scan(&names).Error
	if err != nil {
		return IdentityPage{}, fmt.Errorf("list identities: %w", err)
	}
	page := IdentityPage{Identities: []IdentityInfo{}}
	if len(names) > limit {
		names = names[:limit]
		page.Cursor = optional(encodeNameCursor(names[limit-1]))
	}
	if len(names) == 0 {
		return page, nil
	}
	var toks []models.Token
	if err := db.Where("identity IN ? AND revoked_at IS NULL", names).Order("id DESC").Find(&toks).Error; err != nil {
		return IdentityPage{}, fmt.Errorf("list identities: %w", err)
	}
	newest := map[string]models.Token{}
	for _, t := range toks {
		if _, seen := newest[t.Identity]; !seen {
			newest[t.Identity] = t
		}
	}
	last, err := lastActivity(ctx, f, names)
	if err != nil {
		return IdentityPage{}, err
	}
	for _, name := range names {
		entry := IdentityInfo{Identity: name, AuthorKind: KindHuman, Label: strings.TrimPrefix(name, HumanRealm+":"), LastActiveAt: last[name],
			Owner: ownerField(name)}
		if t, ok := newest[name]; ok {
			rights, _ := ParseRights(t.Rights)
			c := Caller{Identity: name, Kind: AuthorKind(t.AuthorKind), Rights: rights, Label: t.Label}
			entry.AuthorKind, entry.Label, entry.Badge = c.Kind, c.Label, optional(c.Badge())
			entry.Owner = ownerField(ownerOf(t.Identity, t.AuthorKind, t.Owner))
		}
		page.Identities = append(page.Identities, entry)
	}
	return page, nil
}

// lastActivity is when each identity last posted: the time of its newest
// message, found through the index on (author_identity, id).
func lastActivity(ctx context.Context, f *Forum, names []string) (map[string]*time.Time, error) {
	var newest []int64
	err := f.db.WithContext(ctx).Model(&models.Message{}).Select("MAX(id)").
		Where("author_identity IN ?", names).Group("author_identity").Scan(&newest).Error
	if err != nil {
		return nil, fmt.Errorf("last activity: %w", err)
	}
	out := map[string]*time.Time{}
	if len(newest) == 0 {
		return out, nil
	}
	var rows []models.Message
	if err := f.db.WithContext(ctx).Select("id", "author_identity", "created_at").Where("id IN ?", newest).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("last activity: %w", err)
	}
	for _, m := range rows {
		out[m.AuthorIdentity] = utc(&m.CreatedAt)
	}
	return out, nil
}

// Directory cursors are opaque too: "i1." and the last identity listed.
const nameCursorPrefix = "i1."

func encodeNameCursor(identity string) string {
	return nameCursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(identity))
}

func decodeNameCursor(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, nameCursorPrefix))
	if !strings.HasPrefix(s, nameCursorPrefix) || err != nil || !validIdentity(string(raw)) {
		return "", Refuse(InvalidBody, "cursor is not a cursor this server issued; pass back the cursor string unchanged").On("cursor")
	}
	return string(raw), nil
}
