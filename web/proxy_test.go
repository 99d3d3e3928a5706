package web_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"parley/migrations/dbtest"
	"parley/services"
	"parley/web"
)

// startBehind starts the application with these trusted proxies. The test
// reaches it from 127.0.0.1, so it is a trusted proxy exactly when a range
// holds 127.0.0.1.
func startBehind(t *testing.T, trusted string) *api {
	t.Helper()
	proxies, err := web.ParseTrustedProxies(trusted)
	if err != nil {
		t.Fatal(err)
	}
	a := startServerWith(t, dbtest.Fresh(t, "sqlite"), services.Config{}, web.Options{TrustedProxies: proxies})
	if err := a.forum.AddUser(t.Context(), "ada", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	return a
}

// signInFrom posts ada's sign-in form with this X-Forwarded-For ("" sends
// none) and returns the HTTP status: 303 signed in, 401 wrong password,
// 429 throttled.
func signInFrom(t *testing.T, a *api, forwarded, password string) int {
	t.Helper()
	const csrf = "0000000000000000000000000000000000000000000000000000000000000000"
	form := url.Values{"_csrf": {csrf}, "name": {"ada"}, "password": {password}}
	req, _ := http.NewRequest("POST", a.base+"/signin", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "parley_form", Value: csrf})
	if forwarded != "" {
		req.Header.Set("X-Forwarded-For", forwarded)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestTrustedProxies: the sign-in throttle counts failures per account and
// client. X-Forwarded-For names the client only when the direct peer is a
// trusted proxy, and then its right-most address that is not a proxy.
func TestTrustedProxies(t *testing.T) {
	const wrong, right = "wrong password", "correct horse battery"
	fail5 := func(t *testing.T, a *api, forwarded string) {
		t.Helper()
		for range 5 {
			if got := signInFrom(t, a, forwarded, wrong); got != http.StatusUnauthorized {
				t.Fatalf("a wrong password answered %d, want 401", got)
			}
		}
	}
	for _, tc := range []struct {
		name      string
		trusted   string
		failFrom  string // X-Forwarded-For of five failures
		signFrom  string // X-Forwarded-For of ada's right password, next
		wantAfter int
	}{
		// Untrusted peer: the header is the client's own invention and is
		// ignored; both requests come from 127.0.0.1, which is throttled.
		{"untrusted peer, spoofed header ignored", "", "203.0.113.1", "203.0.113.2", http.StatusTooManyRequests},
		{"peer outside the trusted ranges", "10.0.0.0/8, 192.168.1.1", "203.0.113.1", "203.0.113.2", http.StatusTooManyRequests},
		// Trusted proxy: the header names the client; another client is
		// not locked out, the same one is.
		{"trusted proxy, another client", "127.0.0.0/8", "203.0.113.1", "203.0.113.2", http.StatusSeeOther},
		{"trusted proxy, same client", "127.0.0.1", "203.0.113.1", "203.0.113.1", http.StatusTooManyRequests},
		// A client behind the proxy forges an address on the left; the
		// proxy appends the real one, which is what counts.
		{"trusted proxy, forged left-most entry", "127.0.0.1", "203.0.113.1", "203.0.113.2, 203.0.113.1", http.StatusTooManyRequests},
		// Through two trusted proxies, the client is the first address
		// that is not one of them, from the right.
		{"two trusted hops", "127.0.0.1, 10.0.0.0/8", "203.0.113.1, 10.0.0.5", "203.0.113.2, 10.0.0.5", http.StatusSeeOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := startBehind(t, tc.trusted)
			fail5(t, a, tc.failFrom)
			if got := signInFrom(t, a, tc.signFrom, right); got != tc.wantAfter {
				t.Fatalf("ada's right password from %q after five failures from %q: %d, want %d", tc.signFrom, tc.failFrom, got, tc.wantAfter)
			}
		})
	}
}

func TestParseTrustedProxies(t *testing.T) {
	got, err := web.ParseTrustedProxies("10.0.0.0/8,192.168.1.7 ::1, 2001:db8::/32")
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"),
		netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("2001:db8::/32")}
	if err != nil || len(got) != len(want) {
		t.Fatalf("got %v, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("entry %d: %v, want %v", i, got[i], want[i])
		}
	}
	if _, err := web.ParseTrustedProxies("10.0.0.0/8, proxy.example"); err == nil {
		t.Fatal("a host name must be refused")
	}
}

// TestForwardedForOverEveryLine: X-Forwarded-For sent as two field lines
// is one list (RFC 9110 §5.3). A client behind a trusted proxy sends its
// own line naming an address of its choice; the proxy appends a second
// line with the address it saw. The throttle must count the second line's
// address: after five failures from 203.0.113.1 (forging 203.0.113.2 on a
// first line each time), its right password is still refused, and a
// client really at 203.0.113.2 is not locked out. The requests go over a
// raw socket, so the lines really are separate (net/http would join them).
func TestForwardedForOverEveryLine(t *testing.T) {
	a := startBehind(t, "127.0.0.1")
	lines := func(forged, real string) []string {
		return []string{"X-Forwarded-For: " + forged, "x-forwarded-for: " + real} // a name's case is no matter
	}
	for range 5 {
		if got := rawSignIn(t, a, lines("203.0.113.2", "203.0.113.1"), "wrong password"); got != http.StatusUnauthorized {
			t.Fatalf("a wrong password answered %d, want 401", got)
		}
	}
	if got := rawSignIn(t, a, lines("203.0.113.9", "203.0.113.1"), "correct horse battery"); got != http.StatusTooManyRequests {
		t.Fatalf("the throttled client, forging another first line: %d, want 429", got)
	}
	if got := rawSignIn(t, a, lines("198.51.100.7", "10.9.9.9, 203.0.113.2"), "correct horse battery"); got != http.StatusSeeOther {
		t.Fatalf("another client, whose address the throttled one forged: %d, want 303", got)
	}
}

// rawSignIn posts ada's sign-in form over a TCP connection of its own with
// these extra header lines, written as they are, and returns the status.
func rawSignIn(t *testing.T, a *api, header []string, password string) int {
	t.Helper()
	const csrf = "0000000000000000000000000000000000000000000000000000000000000000"
	body := url.Values{"_csrf": {csrf}, "name": {"ada"}, "password": {password}}.Encode()
	conn, err := net.Dial("tcp", strings.TrimPrefix(a.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := "POST /signin HTTP/1.1\r\nHost: parley.test\r\nConnection: close\r\n" +
		"Content-Type: application/x-www-form-urlencoded\r\nCookie: parley_form=" + csrf + "\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n" + strings.Join(header, "\r\n") + "\r\n\r\n" + body
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
