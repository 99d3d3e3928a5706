package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"parley/internal/cli"
	"parley/services"
)

// runExport writes the forum as a bundle (services/store_bundle.go): to --out,
// or to stdout. A file appears whole or not at all: it is written beside
// its name and renamed when complete.
func runExport(args []string) error {
	fs := cli.NewFlagSet("parley export", "parley export [--db URL] [--out FILE]")
	out := fs.String("out", "", "write the bundle to `FILE` instead of stdout")
	var cfg cli.Config
	cfg.DBFlag(fs)
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	ctx := context.Background()
	forum, closeDB, err := cfg.Forum(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	if *out == "" {
		h, err := forum.Export(ctx, os.Stdout)
		if err == nil {
			fmt.Fprintln(os.Stderr, bundleSummary("exported", h))
		}
		return err
	}
	h, err := exportFile(ctx, forum, *out)
	if err != nil {
		return err
	}
	fmt.Println(bundleSummary("exported", h) + " to " + *out)
	return nil
}

func exportFile(ctx context.Context, forum *services.Forum, path string) (services.BundleHeader, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return services.BundleHeader{}, err
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	h, err := forum.Export(ctx, tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return h, err
}

// runImport loads a bundle into an empty database, migrating it first:
// like serve and demo, import works on a database made for it.
func runImport(args []string) error {
	fs := cli.NewFlagSet("parley import", "parley import [--db URL] FILE   (FILE - reads stdin)")
	var cfg cli.Config
	cfg.DBFlag(fs)
	positional, err := cli.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return cli.Usagef("import: name one bundle FILE (or - for stdin)")
	}
	var in io.Reader = os.Stdin
	if positional[0] != "-" {
		f, err := os.Open(positional[0])
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	ctx := context.Background()
	forum, _, closeDB, err := cfg.Migrated(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	h, err := forum.Import(ctx, in)
	if err != nil {
		return err
	}
	fmt.Println(bundleSummary("imported", h) + " into " + cfg.DBKind())
	return nil
}

// bundleSummary counts a bundle's rows by table.
func bundleSummary(verb string, h services.BundleHeader) string {
	s := fmt.Sprintf("%s %d rows (schema version %d):", verb, h.Rows(), h.SchemaVersion)
	for _, t := range h.Tables {
		s += fmt.Sprintf(" %s %d", t.Name, t.Rows)
	}
	return s
}
