package main

import (
	"context"
	"fmt"

	"parley/internal/cli"
	"parley/migrations"
	"parley/models"
)

// runMigrate applies the migrations the database lacks and prints them.
func runMigrate(args []string) error {
	fs := cli.NewFlagSet("parley migrate", "parley migrate [--db URL]")
	var cfg cli.Config
	cfg.DBFlag(fs)
	if err := cli.ParseNoArgs(fs, args); err != nil {
		return err
	}
	ctx := context.Background()
	db, closeDB, err := cfg.Open()
	if err != nil {
		return err
	}
	defer closeDB()
	applied, err := migrations.Up(ctx, db)
	if err != nil {
		return err
	}
	list, err := migrations.List(models.Dialect(db))
	if err != nil {
		return err
	}
	names := map[int]string{}
	for _, m := range list {
		names[m.Version] = m.Name
	}
	for _, v := range applied {
		fmt.Printf("applied version %d (%s)\n", v, names[v])
	}
	if len(applied) == 0 {
		current, err := migrations.Current(ctx, db)
		if err != nil {
			return err
		}
		fmt.Printf("database is at version %d\n", current)
	}
	return cfg.CheckSchema(ctx, db)
}
