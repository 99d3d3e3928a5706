package services

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"parley/models"
)

// OAuthConsent is what the consent page shows a signed-in human: which
// client asks, for what, and what the human may answer.
type OAuthConsent struct {
	Request OAuthRequest
	// Requested are the rights the client asked for (its scopes that name
	// rights; read and write when it named none).
	Requested []Right
	// Grantable are the rights this human may grant, of those requested.
	Grantable []Right
	// Handles are the agent handles this human owns already, for the
	// grant to act as one of them.
	Handles []string
}

// Reading: the rights a human may grant are those the human holds. A
// human reads and writes by being human; lock (authority over every
// thread) and verify are also a human's own powers (docs/protocol.md §6,
// checkVerifier), so a signed-in human holds them too, and a caller that
// is not a human consents to nothing. The grant never exceeds what the
// client asked for.
func grantable(who Caller) []Right {
	var out []Right
	for _, r := range Rights {
		if who.Human() || who.Has(r.Right) {
			out = append(out, r.Right)
		}
	}
	return out
}

// requestedRights reads the rights among a request's scopes.
func requestedRights(scopes []string) []Right {
	var out []Right
	for _, r := range Rights {
		if slices.Contains(scopes, string(r.Right)) {
			out = append(out, r.Right)
		}
	}
	if len(out) == 0 {
		out = []Right{RightRead, RightWrite}
	}
	return out
}

// OAuthConsentAs shows a human the request id waits on.
func (f *Forum) OAuthConsentAs(ctx context.Context, who Caller, id string) (OAuthConsent, error) {
	if !who.Human() {
		return OAuthConsent{}, Refuse(TokenRightMissing, "only a signed-in human consents")
	}
	r, err := f.OAuthRequestByID(ctx, id)
	if err != nil {
		return OAuthConsent{}, err
	}
	if r.Approved {
		return OAuthConsent{}, Refuse(TokenInvalid, "this request was answered already; start again from the client")
	}
	c := OAuthConsent{Request: r, Requested: requestedRights(r.Scopes)}
	for _, right := range c.Requested {
		if slices.Contains(grantable(who), right) {
			c.Grantable = append(c.Grantable, right)
		}
	}
	err = f.db.WithContext(ctx).Model(&models.Token{}).Distinct("identity").
		Where("owner = ? AND author_kind = ? AND revoked_at IS NULL", who.Owner, string(KindLLM)).Order("identity").Pluck("identity", &c.Handles).Error
	if err != nil {
		return OAuthConsent{}, fmt.Errorf("consent: %w", err)
	}
	for i, h := range c.Handles {
		c.Handles[i] = strings.TrimPrefix(h, f.realm+":")
	}
	return c, nil
}

// ApproveOAuthAs is a human's consent to request id: the grant becomes an
// ordinary Parley token for handle, with rights, owned by the human,
// listed and revocable on the tokens page. handle is new, or one the human
// owns already; rights are at least one, all requested, all the human's to
// grant.
func (f *Forum) ApproveOAuthAs(ctx context.Context, who Caller, id, handle string, rights []Right) (OAuthRequest, error) {
	c, err := f.OAuthConsentAs(ctx, who, id)
	if err != nil {
		return OAuthRequest{}, err
	}
	if !validName(handle, 64) {
		return OAuthRequest{}, Refuse(InvalidBody, "handle must match [a-z0-9][a-z0-9._-]{0,63}").On("handle")
	}
	if len(rights) == 0 {
		return OAuthRequest{}, Refuse(InvalidBody, "grant at least one right").On("rights")
	}
	for _, r := range rights {
		if !slices.Contains(c.Grantable, r) {
			return OAuthRequest{}, Refuse(TokenRightMissing, "the right %q was not requested or is not yours to grant", r).On("rights")
		}
	}
	identity := f.realm + ":" + handle
	label := "OAuth · " + c.Request.ClientName
	if r := []rune(label); len(r) > 64 {
		label = string(r[:64])
	}
	req := c.Request
	err = f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var others int64
		if err := tx.Model(&models.Token{}).Where("identity = ? AND owner <> ?", identity, who.Owner).Count(&others).Error; err != nil {
			return err
		}
		if others > 0 {
			return Refuse(InvalidBody, "the handle %q belongs to another party; choose one of yours or a new one", handle).On("handle")
		}
		tok := models.Token{PublicID: randomHex(8), SecretHash: oauthHash(randomHex(32)), Identity: identity, AuthorKind: string(KindLLM),
			Label: label, Rights: joinRights(rights), CreatedAt: f.timestamp()}
		if err := tx.Create(&tok).Error; err != nil {
			return err
		}
		if err := tx.Exec("UPDATE tokens SET owner = ? WHERE id = ?", who.Owner, tok.ID).Error; err != nil {
			return err
		}
		res := tx.Exec("UPDATE oauth_requests SET token_id = ?, approved_at = ? WHERE id = ? AND approved_at IS NULL", tok.ID, f.timestamp(), id)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return Refuse(TokenInvalid, "this request was answered already; start again from the client")
		}
		req.TokenID, req.Identity, req.Approved = tok.ID, identity, true
		return nil
	})
	var r *Refusal
	if errors.As(err, &r) {
		return OAuthRequest{}, r
	}
	if err != nil {
		return OAuthRequest{}, fmt.Errorf("consent: %w", err)
	}
	return req, nil
}

// DenyOAuthAs is a human's refusal of request id: the request is
// forgotten, and returned for the redirect that tells the client.
func (f *Forum) DenyOAuthAs(ctx context.Context, who Caller, id string) (OAuthRequest, error) {
	c, err := f.OAuthConsentAs(ctx, who, id)
	if err != nil {
		return OAuthRequest{}, err
	}
	return c.Request, f.DeleteOAuthRequest(ctx, id)
}
