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
		cfg.EnableIPValidation = true // c.IPs() skips what is not an address
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
	hops := c.IPs()
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(hops[i])
		if err != nil {
			continue
		}
		if !s.isTrusted(a.Unmap()) {
			return a.Unmap().String()
		}
	}
	// Only proxies in the chain: the left-most of them is as close to the
	// client as the headers tell.
	if len(hops) > 0 {
		return hops[0]
	}
	return peer
}

func (s *server) isTrusted(a netip.Addr) bool {
	for _, p := range s.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
