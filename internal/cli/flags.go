package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

// EnvVars names the environment variable that stands in for each flag left
// off the command line. Resolving them after parsing, rather than using them
// as flag defaults, keeps a database URL's password out of -h output.
var EnvVars = map[string]string{
	"addr":                                "PARLEY_ADDR",
	"db":                                  "PARLEY_DATABASE_URL",
	"db-exec-mode":                        "PARLEY_DB_EXEC_MODE",
	"db-listen-url":                       "PARLEY_DATABASE_LISTEN_URL",
	"db-read-url":                         "PARLEY_DATABASE_READ_URL",
	"db-read-max-lag":                     "PARLEY_DB_READ_MAX_LAG",
	"realm":                               "PARLEY_REALM",
	"db-max-conns":                        "PARLEY_DB_MAX_CONNS",
	"max-conns":                           "PARLEY_MAX_CONNS",
	"read-timeout":                        "PARLEY_READ_TIMEOUT",
	"request-timeout":                     "PARLEY_REQUEST_TIMEOUT",
	"posts-per-minute":                    "PARLEY_POSTS_PER_MINUTE",
	"pprof":                               "PARLEY_PPROF",
	"heap-floor":                          "PARLEY_HEAP_FLOOR",
	"requests-per-minute":                 "PARLEY_REQUESTS_PER_MINUTE",
	"deadline-sweep":                      "PARLEY_DEADLINE_SWEEP",
	"trusted-proxies":                     "PARLEY_TRUSTED_PROXIES",
	"metrics":                             "PARLEY_METRICS",
	"metrics-allow":                       "PARLEY_METRICS_ALLOW",
	"metrics-token":                       "PARLEY_METRICS_TOKEN",
	"log-format":                          "PARLEY_LOG_FORMAT",
	"log-level":                           "PARLEY_LOG_LEVEL",
	"oauth-issuer":                        "PARLEY_OAUTH_ISSUER",
	"oauth-allow-private-client-metadata": "PARLEY_OAUTH_ALLOW_PRIVATE_CLIENT_METADATA",
	"verify-quorum":                       "PARLEY_VERIFY_QUORUM",
	"guard-recent-bodies-party":           "PARLEY_GUARD_RECENT_BODIES_PARTY",
}

// NewFlagSet makes the flag set of one subcommand, named as typed
// ("parley serve"). Errors are returned, not fatal, so that the program
// decides the exit status.
//
// Parsing adds a --NAME-file flag to each secret flag of the set (see
// Secrets), so a command gets them by defining the secret flag alone.
func NewFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// ParseFlags parses args and returns the positional arguments. Unlike
// flag.Parse it does not stop at the first of them, so flags may come
// anywhere after the command words; "--" ends the flags. A flag left off
// takes its value from its environment variable (EnvVars), if set.
func ParseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	addSecretFileFlags(fs)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, UsageError("") // the flag package has printed it
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if parsed := args[:len(args)-len(rest)]; len(parsed) > 0 && parsed[len(parsed)-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := readSecretFiles(fs, set); err != nil {
		return nil, err
	}
	for name, key := range EnvVars {
		if v := os.Getenv(key); v != "" && !set[name] && fs.Lookup(name) != nil {
			if err := fs.Set(name, v); err != nil {
				return nil, Usagef("%s: %v", key, err)
			}
		}
	}
	return positional, nil
}

// ParseNoArgs parses a command that takes flags only.
func ParseNoArgs(fs *flag.FlagSet, args []string) error {
	positional, err := ParseFlags(fs, args)
	if err == nil && len(positional) > 0 {
		err = Usagef("%s: unexpected argument %q", fs.Name(), positional[0])
	}
	return err
}
