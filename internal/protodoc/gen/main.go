// Command gen rewrites the generated tables of docs/protocol.md in place
// from the server's Go values (see package protodoc). It runs from
// `go generate ./internal/protodoc`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"parley/internal/protodoc"
)

func main() {
	doc := flag.String("doc", "docs/protocol.md", "the document to rewrite")
	flag.Parse()
	if err := run(*doc); err != nil {
		fmt.Fprintln(os.Stderr, "protodoc:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	doc, err := protodoc.Generate(context.Background(), old)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if string(doc) == string(old) {
		return nil
	}
	return os.WriteFile(path, doc, 0o644)
}
