// Command parley-conform checks whether a server speaks Parley v1
// (docs/protocol.md), and each profile its manifest lists, by talking to
// it only through its bindings: HTTP/JSON, MCP over Streamable HTTP, and
// MCP over stdio when given a command. It is written from the protocol
// text, not from this repository's server: it imports none of services,
// web, mcp or models (TestKitIsBlackBox), so another implementation can
// run it as it stands. docs/conformance.md tells how.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
)

type options struct {
	url, provision, tokens, junit, only, mcpStdio string
	profiles                                      []string
	json, fast                                    bool
	bindings                                      []string
	peer                                          peerOptions
	oauth                                         oauthOptions
}

// peerOptions name a second forum whose signed statements the kit
// presents as attestation evidence (§15 rule 6).
type peerOptions struct{ url, provision, tokens string }

// oauthOptions name the OAuth-protected MCP endpoint and a client the
// operator registered for the kit (§2.1, errata 2).
type oauthOptions struct{ resource, client, redirect string }

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("parley-conform", flag.ContinueOnError)
	var o options
	var profiles, bindings string
	fs.StringVar(&o.url, "url", "", "the server's base `URL`, e.g. http://127.0.0.1:8080")
	fs.StringVar(&o.provision, "provision", "", "a `command` that issues a token: the kit appends --handle NAME --rights LIST [--owner NAME] or --human NAME and reads the token from its last output line")
	fs.StringVar(&o.tokens, "tokens", "", "a JSON `file` of pre-made tokens instead of --provision (see docs/conformance.md)")
	fs.BoolVar(&o.json, "json", false, "write the results as JSON on stdout instead of lines")
	fs.StringVar(&o.junit, "junit", "", "also write a JUnit XML report to `file`")
	fs.StringVar(&o.only, "only", "", "run only this `section` (manifest, bindings, envelope, acts, states, record, authority, identity, self_reply, reading, limits, rates, refusals, oauth, or a profile's name)")
	fs.StringVar(&profiles, "profile", "", "test only these profiles (comma-separated `names`); default every profile the manifest lists")
	fs.BoolVar(&o.fast, "fast", false, "skip the checks that wait for time to pass (reply_by, valid_until, waits)")
	fs.StringVar(&o.mcpStdio, "mcp-stdio", "", "also test MCP over stdio, running this `command` with PARLEY_TOKEN set")
	fs.StringVar(&bindings, "bindings", "http,mcp", "the `bindings` to test: http, mcp (Streamable HTTP at /mcp); mcp-stdio is added by --mcp-stdio")
	fs.StringVar(&o.peer.url, "peer-url", "", "the base `URL` of a second forum whose signed statements are presented as attestation evidence (§15 rule 6); the tested server must trust its keys")
	fs.StringVar(&o.peer.provision, "peer-provision", "", "a `command` issuing tokens on the peer, as --provision does")
	fs.StringVar(&o.peer.tokens, "peer-tokens", "", "a JSON `file` of tokens on the peer (roles alice and bob) instead of --peer-provision")
	fs.StringVar(&o.oauth.resource, "oauth-resource", "", "the `URL` of the MCP endpoint that takes OAuth access tokens; default the one /mcp's 401 names, if any")
	fs.StringVar(&o.oauth.client, "oauth-client", "", "the `id` of an OAuth client registered for the kit, to check authorization requests")
	fs.StringVar(&o.oauth.redirect, "oauth-redirect-uri", "", "a redirect `URI` registered for --oauth-client")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.url == "" || (o.provision == "") == (o.tokens == "") {
		fmt.Fprintln(os.Stderr, "parley-conform needs --url and one of --provision or --tokens")
		return 2
	}
	o.url = strings.TrimRight(o.url, "/")
	if profiles != "" {
		o.profiles = strings.Split(profiles, ",")
	}
	for _, b := range strings.Split(bindings, ",") {
		if b != "" {
			o.bindings = append(o.bindings, b)
		}
	}
	if o.mcpStdio != "" {
		o.bindings = append(o.bindings, "mcp-stdio")
	}
	results, err := conform(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "parley-conform:", err)
		return 2
	}
	if err := report(o, results); err != nil {
		fmt.Fprintln(os.Stderr, "parley-conform:", err)
		return 2
	}
	for _, r := range results {
		if !r.Pass && !r.Skipped {
			return 1
		}
	}
	return 0
}

func runTag() string {
	b := make([]byte, 3)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// conform runs every selected check over every binding.
func conform(o options) ([]result, error) {
	h := &httpBinding{base: o.url}
	mr, err := h.Call("", "get_manifest", nil)
	if err != nil {
		return nil, fmt.Errorf("read the manifest: %w", err)
	}
	if !mr.OK() {
		return nil, fmt.Errorf("read the manifest: %s", mr)
	}
	manifest := mr.Body
	listed := map[string]bool{}
	for _, p := range list(manifest, "profiles") {
		listed[str(p, "name")] = true
	}
	wanted := func(profile string) bool {
		if !listed[profile] {
			return false
		}
		if len(o.profiles) == 0 {
			return true
		}
		for _, p := range o.profiles {
			if p == profile {
				return true
			}
		}
		return false
	}
	limits := map[string]float64{}
	for k, v := range obj(manifest, "limits") {
		if f, ok := v.(float64); ok {
			limits[k] = f
		}
	}
	tag := runTag()
	var shared map[string]*ident
	if o.tokens != "" {
		if shared, err = readTokens(o.tokens); err != nil {
			return nil, err
		}
		if err := resolve(h, shared); err != nil {
			return nil, err
		}
	}
	peer := &peerForum{opts: o.peer, prefix: "cf" + tag + "p"}
	var results []result
	for i, name := range o.bindings {
		var b Binding
		switch name {
		case "http":
			b = h
		case "mcp":
			b = &mcpHTTP{base: o.url}
		case "mcp-stdio":
			b = &mcpStdio{command: o.mcpStdio}
		default:
			return nil, fmt.Errorf("unknown binding %q", name)
		}
		ids := shared
		prefix := fmt.Sprintf("cf%s%c", tag, 'a'+i)
		fresh := func(name, rights string) (string, error) {
			// An identity no other check uses: its rate-limit buckets
			// and waiting calls are its own.
			if shared != nil {
				if id, ok := shared[name]; ok {
					return id.Token, nil
				}
				return "", errSkip("the tokens file has no role %s (rights %s) for this check", name, rights)
			}
			return provision(o.provision, []string{"--handle", prefix + "-" + name, "--rights", rights})
		}
		if ids == nil {
			// Each binding gets identities of its own, so that one
			// binding's turns never stand in another's inbox.
			if ids, err = provisionAll(o.provision, prefix, wanted("witness")); err != nil {
				return nil, err
			}
		}
		if err := resolve(h, ids); err != nil {
			return nil, err
		}
		k := &kit{b: b, base: o.url, manifest: manifest, limits: limits, ids: ids, run: tag + "-" + name, seq: new(atomic.Int64),
			fresh: fresh, opts: o, peer: peer}
		for _, c := range checks() {
			profile := ""
			if isProfile(c.section) {
				profile = c.section
			}
			if o.only != "" && c.section != o.only {
				continue
			}
			if profile != "" && !wanted(profile) {
				continue
			}
			res := result{Section: c.section, Name: c.name, Ref: c.ref, Binding: name}
			switch {
			case c.slow && o.fast:
				res.Skipped, res.Evidence = true, "--fast"
			case c.httpy && name != "http":
				res.Skipped, res.Evidence = true, "HTTP only"
			default:
				err := runCheck(c, k)
				var skip skipError
				switch {
				case errors.As(err, &skip):
					res.Skipped, res.Evidence = true, string(skip)
				case err != nil:
					res.Evidence = err.Error()
				default:
					res.Pass = true
				}
			}
			results = append(results, res)
			if !o.json {
				printLine(res)
			}
		}
		b.Close()
	}
	return results, nil
}

func isProfile(section string) bool {
	switch section {
	case "dialectic", "feed", "guard", "witness":
		return true
	}
	return false
}

// runCheck runs one check; a panic in its helpers is its failure.
func runCheck(c check, k *kit) (err error) {
	defer func() {
		if p := recover(); p != nil {
			switch v := p.(type) {
			case error:
				err = v
			default:
				err = fmt.Errorf("%v", v)
			}
		}
	}()
	return c.fn(k)
}
