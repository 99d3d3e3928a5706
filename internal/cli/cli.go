// Package cli holds what Parley's two commands share: the product's
// `parley` and the lab's `parley-lab`. A command is a table of
// subcommands that feeds both dispatch and help; flags are parsed anywhere
// after the command words and fall back to PARLEY_* environment variables;
// Config opens the database and the forum. Exit status: 0 on success, 1
// when the command failed or was refused, 2 for a mistake on the command
// line.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"parley/services"
)

// Command is one subcommand: its name, the line help shows for it, and
// what runs it with the arguments after its name. A name may be several
// words ("bench seed"): the command whose words the arguments start with,
// the longest such, runs.
type Command struct {
	Name    string
	Summary string // help's text; continuation lines are indented by the table
	Run     func(args []string) error
	// Default marks the command that runs when none is named (serve).
	Default bool
}

// Program is a command line program made of subcommands.
type Program struct {
	Name     string // as typed: "parley"
	Intro    string // help's opening line
	Usage    string // help's usage lines, one per form
	Trailer  string // help's closing text (flags shared by the commands)
	Commands []Command
}

// Main dispatches args to a subcommand and returns the exit status.
func (p Program) Main(args []string) int {
	if len(args) > 0 && isHelp(args[0]) {
		p.Help(os.Stdout)
		return 0
	}
	if c, rest, ok := p.find(args); ok {
		return p.exitCode(c.Run(rest))
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return p.exitCode(Usagef("no command given"))
	}
	return p.exitCode(Usagef("unknown command %q", args[0]))
}

// find picks the command args name, and the arguments after its name; with
// no command word, the default command.
func (p Program) find(args []string) (Command, []string, bool) {
	var best Command
	bestLen := -1
	for _, c := range p.Commands {
		words := strings.Fields(c.Name)
		if len(words) > bestLen && len(words) <= len(args) && slices.Equal(words, args[:len(words)]) {
			best, bestLen = c, len(words)
		}
	}
	if bestLen >= 0 {
		return best, args[bestLen:], true
	}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return Command{}, nil, false
	}
	for _, c := range p.Commands {
		if c.Default {
			return c, args, true
		}
	}
	return Command{}, nil, false
}

// Help writes the program's help: usage, then the commands table.
func (p Program) Help(w io.Writer) {
	fmt.Fprintf(w, "%s\n\nUsage:\n%s\nCommands:\n", p.Intro, p.Usage)
	for _, c := range p.Commands {
		lines := strings.Split(strings.TrimSpace(c.Summary), "\n")
		fmt.Fprintf(w, "  %-14s %s\n", c.Name, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(w, "  %-14s %s\n", "", strings.TrimSpace(l))
		}
	}
	if p.Trailer != "" {
		fmt.Fprintf(w, "\n%s", p.Trailer)
	}
}

func isHelp(arg string) bool {
	switch arg {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}

// UsageError is a mistake on the command line (exit status 2). An empty
// one means the flag package has already explained it.
type UsageError string

func (e UsageError) Error() string { return string(e) }

// Usagef makes a UsageError.
func Usagef(format string, args ...any) error {
	return UsageError(fmt.Sprintf(format, args...))
}

// exitCode reports err on stderr and returns the exit status it calls for.
// A refusal is shown by its message alone: it is written for people, and
// the wrapping prefixes the services add are for logs.
func (p Program) exitCode(err error) int {
	var usage UsageError
	var refusal *services.Refusal
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		if usage != "" {
			fmt.Fprintf(os.Stderr, "%s: %s\nRun '%s help' for usage.\n", p.Name, string(usage), p.Name)
		}
		return 2
	case errors.As(err, &refusal):
		fmt.Fprintf(os.Stderr, "%s: %s\n", p.Name, refusal.Message)
		return 1
	default:
		fmt.Fprintf(os.Stderr, "%s: %v\n", p.Name, err)
		return 1
	}
}
