package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/term"

	"parley/internal/cli"
	"parley/services"
)

// runUser dispatches "parley user add".
func runUser(args []string) error {
	if len(args) == 0 || args[0] != "add" {
		return cli.Usagef("user needs a subcommand: add")
	}
	return userAdd(args[1:])
}

// userAdd creates a human account.
func userAdd(args []string) error {
	fs := cli.NewFlagSet("parley user add", "parley user add NAME [--db URL]   (password: env PARLEY_PASSWORD, else stdin)")
	var cfg cli.Config
	cfg.DBFlag(fs)
	positional, err := cli.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return cli.Usagef("user add takes one NAME")
	}
	name := positional[0]
	ctx := context.Background()
	// Open first: a wrong --db fails before anyone types a password.
	forum, closeDB, err := cfg.Forum(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	password, err := readPassword(name)
	if err != nil {
		return err
	}
	if err := forum.AddUser(ctx, name, password); err != nil {
		return err
	}
	fmt.Printf("added %s:%s\n", services.HumanRealm, name)
	return nil
}

// readPassword takes the password from PARLEY_PASSWORD, else one line of
// stdin; on a terminal it prompts on stderr, reads without echo, and asks
// twice, since a typo cannot be seen.
func readPassword(name string) (string, error) {
	if p, ok := os.LookupEnv("PARLEY_PASSWORD"); ok {
		return p, nil
	}
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		line, err := bufio.NewReader(os.Stdin).ReadString('\n')
		if err != nil && (!errors.Is(err, io.EOF) || line == "") {
			return "", fmt.Errorf("read password from stdin (or set PARLEY_PASSWORD): %w", err)
		}
		return strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"), nil
	}
	first, err := readSilently(fd, fmt.Sprintf("Password for %s:%s: ", services.HumanRealm, name))
	if err != nil {
		return "", err
	}
	again, err := readSilently(fd, "Repeat the password: ")
	if err != nil {
		return "", err
	}
	if first != again {
		return "", errors.New("the passwords differ")
	}
	return first, nil
}

// readSilently reads one line from the terminal without echo. An interrupt
// meanwhile would leave the terminal silent, so it restores it first.
func readSilently(fd int, prompt string) (string, error) {
	state, err := term.GetState(fd)
	if err != nil {
		return "", err
	}
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt, syscall.SIGTERM)
	defer func() {
		signal.Stop(interrupted)
		close(interrupted)
	}()
	go func() {
		if _, ok := <-interrupted; ok {
			term.Restore(fd, state)
			fmt.Fprintln(os.Stderr)
			os.Exit(130)
		}
	}()
	fmt.Fprint(os.Stderr, prompt)
	b, err := term.ReadPassword(fd)
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	return string(b), nil
}
