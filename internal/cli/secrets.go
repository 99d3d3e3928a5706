package cli

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// Secrets are the flags whose value may be a secret: a database URL with
// its password, a bearer token. Each also reads its value from a file,
// named by --NAME-file or by its environment variable with _FILE added
// (PARLEY_DATABASE_URL_FILE), so that the secret stays out of the process
// list and the environment (a container's or systemd's credentials, a
// Kubernetes secret mounted as a file). A secret flag added later needs
// only its name here; ParseFlags does the rest for every command.
var Secrets = []string{"db", "db-listen-url", "db-read-url", "metrics-token"}

// fileSuffix names the flag and the variable that hold a secret's file.
const fileSuffix = "-file"

// addSecretFileFlags defines --NAME-file beside each secret flag of fs,
// once (a flag set may be parsed again).
func addSecretFileFlags(fs *flag.FlagSet) {
	for _, name := range Secrets {
		if fs.Lookup(name) == nil || fs.Lookup(name+fileSuffix) != nil {
			continue
		}
		env := ""
		if key, ok := EnvVars[name]; ok {
			env = " (env " + key + "_FILE)"
		}
		fs.String(name+fileSuffix, "", "read --"+name+" from this `file`, its trailing newline dropped"+env)
	}
}

// readSecretFiles sets each secret flag from its file, if one is named.
// The command line ranks first, then the environment, as for every flag;
// naming both the value and a file at the same rank is a mistake, since
// one of them would be silently ignored. set holds the flags given on the
// command line; it gains those set from a file, so that their environment
// variables no longer apply.
func readSecretFiles(fs *flag.FlagSet, set map[string]bool) error {
	for _, name := range Secrets {
		if fs.Lookup(name) == nil {
			continue
		}
		fileFlag := name + fileSuffix
		path, from := fs.Lookup(fileFlag).Value.String(), "--"+fileFlag
		switch {
		case set[fileFlag] && set[name]:
			return Usagef("give --%s or --%s, not both", name, fileFlag)
		case set[name]:
			continue
		case !set[fileFlag]:
			key, ok := EnvVars[name]
			if !ok || os.Getenv(key+"_FILE") == "" {
				continue
			}
			if os.Getenv(key) != "" {
				return Usagef("set %s or %s_FILE, not both", key, key)
			}
			path, from = os.Getenv(key+"_FILE"), key+"_FILE"
		}
		v, err := readSecret(path)
		if err != nil {
			return Usagef("%s: %v", from, err)
		}
		if err := fs.Set(name, v); err != nil {
			// The value is never quoted: it is the secret.
			return Usagef("%s: the file's content is not a valid --%s", from, name)
		}
		set[name] = true
	}
	return nil
}

// readSecret reads a secret's file: its content without the trailing
// newline an editor or `echo` leaves. An empty file is refused rather than
// taken as "not set".
func readSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return v, nil
}
