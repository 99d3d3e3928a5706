package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// role is an identity the checks act as. Owners (witness profile) are
// humans: o1 owns alice and alice2 (one party), o2 bob, o3 the verifiers'.
type role struct {
	name, rights, owner string
	human               bool
}

var roles = []role{
	{name: "alice", rights: "read,write", owner: "o1"},
	{name: "alice2", rights: "read,write", owner: "o1"},
	{name: "bob", rights: "read,write", owner: "o2"},
	{name: "carol", rights: "read,write", owner: "o3"},
	{name: "mod", rights: "read,write,lock"},
	{name: "ver", rights: "read,write,verify", owner: "o4"},
	{name: "ver2", rights: "read,write,verify", owner: "o5"},
	{name: "reader", rights: "read"},
	{name: "human", human: true},
}

// provisionAll issues a token for every role through command, names
// prefixed so that runs never share identities; with witness, owners too.
func provisionAll(command, prefix string, witness bool) (map[string]*ident, error) {
	ids := map[string]*ident{}
	owners := map[string]bool{}
	for _, r := range roles {
		name := prefix + "-" + r.name
		var args []string
		owner := ""
		if r.human {
			args = []string{"--human", name}
		} else {
			args = []string{"--handle", name, "--rights", r.rights}
			if witness && r.owner != "" {
				owner = prefix + "-" + r.owner
				if !owners[owner] {
					// The owner must exist first: a human's token makes
					// the account where the server's command does so.
					if _, err := provision(command, []string{"--human", owner}); err != nil {
						return nil, err
					}
					owners[owner] = true
				}
				args = append(args, "--owner", owner)
			}
		}
		token, err := provision(command, args)
		if err != nil {
			return nil, err
		}
		ids[r.name] = &ident{Role: r.name, Token: token, Rights: strings.Split(r.rights, ","), Owner: owner}
	}
	return ids, nil
}

// provision runs the command with args and takes the token from the last
// line of its output.
func provision(command string, args []string) (string, error) {
	line := command
	for _, a := range args {
		line += " '" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	cmd := exec.Command("sh", "-c", line)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("provision (%s): %w", line, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	token := strings.TrimSpace(lines[len(lines)-1])
	if token == "" {
		return "", fmt.Errorf("provision (%s) printed no token", line)
	}
	return token, nil
}

// readTokens reads a tokens file: {"identities": [{"role", "token",
// "identity"?, "rights"?, "owner"?}]}, roles as in docs/conformance.md.
func readTokens(file string) (map[string]*ident, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var f struct {
		Identities []*ident `json:"identities"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	ids := map[string]*ident{}
	for _, id := range f.Identities {
		ids[id.Role] = id
	}
	return ids, nil
}

// resolve asks whoami for each token's identity and owner, over HTTP.
func resolve(h *httpBinding, ids map[string]*ident) error {
	for _, id := range ids {
		r, err := h.Call(id.Token, "whoami", nil)
		if err != nil {
			return err
		}
		if !r.OK() {
			return fmt.Errorf("whoami for role %s: %s", id.Role, r)
		}
		id.Identity = str(r.Body, "identity")
		if o := str(r.Body, "owner"); o != "" {
			id.Owner = o
		}
	}
	return nil
}
