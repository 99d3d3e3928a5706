package services

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestInboxEncoding holds the inbox's own encoders (Inbox.MarshalJSON,
// InboxItem.MarshalJSON, written for the fan-out's thousands of answers)
// to what encoding/json makes of the fields' tags, for pages empty, nil and
// full, items shared by a round or not, with text that JSON escapes.
func TestInboxEncoding(t *testing.T) {
	at := time.Date(2026, 12, 6, 15, 4, 5, 6, time.UTC)
	parent := "m_<parent>"
	item := func(shared bool) InboxItem {
		it := InboxItem{
			Thread:  Thread{ID: "t_1", Title: `a "title" with <html> & ünïcode`, State: "open", StateConfirmedAt: &at},
			Message: &Message{ID: "m_2", Kind: "ask", Thread: "t_1", Parent: &parent, Body: "line\nbreak\u2028 and \\ backslash", CreatedAt: at},
		}
		if shared {
			it.shared = &sharedJSON{}
		}
		return it
	}
	shared := item(true)
	pages := map[string]Inbox{
		"nil items":                   {Cursor: "0"},
		"empty":                       {Items: []InboxItem{}, Cursor: "a1.7"},
		"plain items":                 {Items: []InboxItem{item(false), {Thread: Thread{ID: "t_3"}}}, Cursor: "12"},
		"shared items, encoded twice": {Items: []InboxItem{shared, shared, item(false)}, Cursor: `odd "cursor" <>`},
		"cursor beyond ASCII":         {Items: []InboxItem{}, Cursor: "é\x01\u2028\x7f&"},
	}
	for name, page := range pages {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(inboxFields(page))
			if err != nil {
				t.Fatal(err)
			}
			// Called directly (web/inbox_parked.go does) and through
			// encoding/json; a shared item's second encoding is its first.
			for _, encode := range []func() ([]byte, error){page.MarshalJSON, func() ([]byte, error) { return json.Marshal(page) }, page.MarshalJSON} {
				got, err := encode()
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("encoded as\n%s (%v)\nits fields as\n%s", got, err, want)
				}
			}
			for i, it := range page.Items {
				got, err1 := json.Marshal(it)
				want, err2 := json.Marshal(inboxItemFields(it))
				if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
					t.Fatalf("item %d encoded as\n%s (%v)\nits fields as\n%s (%v)", i, got, err1, want, err2)
				}
			}
		})
	}
}
