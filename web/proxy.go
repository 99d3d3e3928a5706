package web

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Client addresses behind a reverse proxy.
//
// The sign-in throttle counts failures per account and client address. A
// server behind a proxy sees only the proxy's address, so it must read the
// client's from X-Forwarded-For — but only when the direct peer is a proxy
// the operator trusts (Options.TrustedProxies): anyone else can write that
// header, and would pick whose failures they count against.

// ParseTrustedProxies reads a list of addresses and CIDR ranges (a plain
// address is a /32 or /128), separated by commas or spaces.
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("trusted proxy %q is neither an address nor a CIDR range", f)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// proxyConfig sets Fiber's own proxy settings: the trusted-proxy check is
// always on, so headers that a proxy sets (X-Forwarded-For, and the
// X-Forwarded-Proto that decides whether cookies are Secure) count only
// from a trusted peer, and from nobody when none is configured.
func proxyConfig(cfg *fiber.Config, trusted []netip.Prefix) {
	cfg.EnableTrustedProxyCheck = true
	cfg.TrustedProxies = []string{}
	for _, p := range trusted {
		cfg.TrustedProxies = append(cfg.TrustedProxies, p.String())
	}
	if len(trusted) > 0 {
		cfg.ProxyHeader = fiber.HeaderXForwardedFor
		cfg.EnableIPValidation = true // c.IP(), for anything else that asks, skips what is not an address
	}
}

// clientIP is the address of the client a request came from. From an
// untrusted peer it is the peer, whatever the headers say. From a trusted
// proxy it is the right-most address in X-Forwarded-For that is not itself
// a trusted proxy: each proxy appends the address it received the request
// from, so the entries left of that are the client's to invent (Fiber's
// c.IP() takes the left-most one, which a client can forge).
func (s *server) clientIP(c *fiber.Ctx) string {
	peer := c.Context().RemoteIP().String()
	if len(s.trusted) == 0 || !c.IsProxyTrusted() {
		return peer
	}
	hops := forwardedFor(c)
	for i := len(hops) - 1; i >= 0; i-- {
		if !s.isTrusted(hops[i]) {
			return hops[i].String()
		}
	}
	// Only proxies in the chain: the left-most of them is as close to the
	// client as the headers tell.
	if len(hops) > 0 {
		return hops[0].String()
	}
	return peer
}

// forwardedFor is the chain of addresses X-Forwarded-For names, over all
// of its field lines in the order they came: RFC 9110 §5.3 makes several
// lines of one field a single comma-separated list. A proxy that appends
// a line of its own (HAProxy's option forwardfor) puts the address it saw
// last, behind whatever lines the client sent; Fiber's c.IPs() reads only
// the first line, the client's. Entries that are not addresses are skipped.
func forwardedFor(c *fiber.Ctx) []netip.Addr {
	var hops []netip.Addr
	for _, line := range c.Request().Header.PeekAll(fiber.HeaderXForwardedFor) {
		for _, f := range strings.Split(string(line), ",") {
			if a, err := netip.ParseAddr(strings.Trim(f, " \t")); err == nil {
				hops = append(hops, a.Unmap())
			}
		}
	}
	return hops
}

func (s *server) isTrusted(a netip.Addr) bool {
	for _, p := range s.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
