package services

import (
	"bytes"
	"context"
	"net"
	neturl "net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parley/migrations/dbtest"
	"parley/models"
)

// TestSlotOfACommitWithoutAnswerIsLetGo: a slot whose insert committed but
// whose COMMIT's answer never reached the server process (the connection
// dropped, the call's deadline struck while the answer was on its way) is
// not left counting. Its call fails, so nothing would ever release it, and
// until its ends_at the token's next waits were refused rate_limited
// though none of them ran: seen under a wake of 10,000 admissions, where
// a few calls answered 503 and their token's retries 429 for up to 30 s.
//
// A proxy between the forum and PostgreSQL forwards the slot's COMMIT,
// waits for PostgreSQL's answer (so the row is committed) and cuts the
// connection instead of passing the answer on.
func TestSlotOfACommitWithoutAnswerIsLetGo(t *testing.T) {
	url := dbtest.FreshURL(t, "postgres")
	cut := newCommitCutter(t, url)
	db := dbtest.Open(t, cut.url)
	f, ctx := New(db, Config{Limits: Limits{WaitsPerToken: 1}}), context.Background()
	if _, err := f.CreateToken(ctx, TokenRequest{Handle: "ada", Rights: []Right{RightRead}}); err != nil {
		t.Fatal(err)
	}
	var who Caller
	if err := db.Raw("SELECT id FROM tokens").Row().Scan(&who.TokenID); err != nil {
		t.Fatal(err)
	}
	slots := func() (n int64) {
		t.Helper()
		if err := db.Model(&models.Stream{}).Where("token_id = ? AND kind = ?", who.TokenID, string(slotWait)).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}

	cut.arm()
	slot, err := f.openWait(ctx, who, time.Minute)
	if err == nil {
		f.releaseWait(slot)
		t.Fatal("the wait was admitted though its COMMIT's answer was cut off")
	}
	if !cut.fired.Load() {
		t.Fatalf("the proxy never saw the slot's COMMIT; the wait failed otherwise: %v", err)
	}
	if n := slots(); n != 0 {
		t.Fatalf("%d slot rows count against the token after its only wait failed (%v)", n, err)
	}
	slot, err = f.openWait(ctx, who, time.Minute)
	if err != nil {
		t.Fatalf("the token's next wait, its only one running: %v", err)
	}
	f.releaseWait(slot)
	if n := slots(); n != 0 {
		t.Fatalf("%d slot rows left after the wait's release", n)
	}
}

// commitCutter is a TCP proxy to a PostgreSQL server that, once armed,
// cuts the first connection that commits after inserting a streams row,
// once PostgreSQL has answered the COMMIT and before the answer is passed
// on. Other connections (and later ones) pass untouched.
type commitCutter struct {
	url   string // the database's URL through the proxy
	armed atomic.Bool
	fired atomic.Bool
}

func newCommitCutter(t *testing.T, url string) *commitCutter {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	upstream := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	u.Host = ln.Addr().String()
	c := &commitCutter{url: u.String()}
	wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", upstream)
			if err != nil {
				client.Close()
				continue
			}
			t.Cleanup(func() { client.Close(); server.Close() })
			wg.Go(func() { c.relay(client, server) })
		}
	})
	return c
}

func (c *commitCutter) arm() { c.armed.Store(true) }

// relay passes one connection's bytes both ways, watching what the client
// sends for an INSERT into streams and, after it, a COMMIT.
func (c *commitCutter) relay(client, server net.Conn) {
	var cutting atomic.Bool // the next answer from the server is the cut COMMIT's
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := server.Read(buf)
			if n > 0 && cutting.Load() {
				c.fired.Store(true)
				client.Close()
				server.Close()
				return
			}
			if n > 0 {
				if _, werr := client.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				client.Close()
				return
			}
		}
	}()
	inserted := false
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			chunk := bytes.ToLower(buf[:n])
			if c.armed.Load() && bytes.Contains(chunk, []byte(`insert into "streams"`)) {
				inserted = true
			}
			if inserted && bytes.Contains(chunk, []byte("commit")) && c.armed.CompareAndSwap(true, false) {
				cutting.Store(true) // before the COMMIT goes: its answer may come at once
			}
			if _, werr := server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			server.Close()
			return
		}
	}
}
