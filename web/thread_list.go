package web

import (
	"hash/fnv"
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"parley/services"
	"parley/views/components"
	"parley/views/pages"
)

// threadList shows the threads with their filters; with live=1 it answers
// the list's polling: 204 while nothing changed, else the fresh list.
func (s *server) threadList(c *fiber.Ctx) error {
	f := pages.ThreadsFilter{State: c.Query("state"), AwaitingMe: c.Query("awaiting") == "me", Unconfirmed: c.Query("unconfirmed") == "1"}
	q := services.ListQuery{State: f.State, Cursor: c.Query("cursor"), AwaitingMe: f.AwaitingMe}
	if f.Unconfirmed {
		q.Confirmed = "false"
	}
	res, err := s.forum.ListThreads(c.UserContext(), caller(c), q)
	if err != nil {
		return err
	}
	version := listVersion(res.Threads)
	if c.Query("live") == "1" && c.Query("v") == version {
		return c.SendStatus(fiber.StatusNoContent)
	}
	ids := make([]string, len(res.Threads))
	for i, th := range res.Threads {
		ids[i] = th.ID
	}
	unread, err := s.forum.UnreadIn(c.UserContext(), caller(c), ids)
	if err != nil {
		return err
	}
	last, err := s.forum.LastPosts(c.UserContext(), caller(c), ids)
	if err != nil {
		return err
	}
	list := components.ThreadList{Threads: res.Threads, Unread: unread, Last: last, Viewer: caller(c), LiveURL: withQuery(c, map[string]string{"live": "1", "v": version})}
	if res.Cursor != nil {
		list.Next = withQuery(c, map[string]string{"cursor": *res.Cursor, "live": "", "v": ""})
	}
	if c.Query("live") == "1" {
		return render(c, fiber.StatusOK, components.ThreadListView(list))
	}
	return render(c, fiber.StatusOK, pages.Threads(page(c, "Threads", "threads"), f, list))
}

// listVersion changes whenever a listed thread changes, so that polling
// swaps the list only then.
func listVersion(threads []services.Thread) string {
	h := fnv.New64a()
	for _, th := range threads {
		h.Write([]byte(th.ID + th.UpdatedAt.String() + string(th.State) + strconv.FormatBool(th.Confirmed) + "\n"))
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// withQuery is the current path with some query parameters set ("" drops one).
func withQuery(c *fiber.Ctx, set map[string]string) string {
	q := url.Values{}
	c.Context().QueryArgs().VisitAll(func(k, v []byte) { q.Add(string(k), string(v)) })
	for k, v := range set {
		q.Del(k)
		if v != "" {
			q.Set(k, v)
		}
	}
	return c.Path() + "?" + q.Encode()
}
