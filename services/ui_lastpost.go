package services

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// LastPost is who spoke last in a thread, and when: the thread list shows it.
type LastPost struct {
	Author Author
	Kind   AuthorKind
	At     time.Time
}

// LastPosts answers, in one query, who posted the newest message of each
// of the threads ("th_N").
func (f *Forum) LastPosts(ctx context.Context, who Caller, threads []string) (map[string]LastPost, error) {
	if err := need(who, RightRead); err != nil {
		return nil, err
	}
	ids, err := threadRefs(threads)
	if err != nil {
		return nil, err
	}
	out := map[string]LastPost{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ThreadID        int64
		AuthorIdentity  string
		AuthorExtension string
		AuthorKind      string
		AuthorBadge     string
		CreatedAt       time.Time
	}
	// messages_thread (thread_id, id) serves each thread's MAX(id).
	err = f.db.WithContext(ctx).Raw(`
		SELECT thread_id, author_identity, author_extension, author_kind, author_badge, created_at
		FROM messages WHERE id IN (SELECT MAX(id) FROM messages WHERE thread_id IN ? GROUP BY thread_id)`, ids).
		Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("last posts: %w", err)
	}
	for _, r := range rows {
		out[ThreadKey(r.ThreadID)] = LastPost{
			Author: Author{Identity: r.AuthorIdentity, Extension: optional(r.AuthorExtension), Badge: r.AuthorBadge},
			Kind:   AuthorKind(r.AuthorKind), At: r.CreatedAt.UTC(),
		}
	}
	return out, nil
}

// AwaitsYou reports whether the thread's open turn is the caller's own:
// it awaits their identity (any extension), not anyone. The web UI says
// "your turn" for it.
func AwaitsYou(th Thread, who Caller) bool {
	return th.Awaiting != nil && who.Identity != "" && th.Awaiting.Identity == who.Identity
}

// KindOfIdentity is what kind of author an identity names: "human:<name>"
// is a human's (docs/protocol.md §3), every other realm a model's.
func KindOfIdentity(identity string) AuthorKind {
	if strings.HasPrefix(identity, "human:") {
		return KindHuman
	}
	return KindLLM
}
