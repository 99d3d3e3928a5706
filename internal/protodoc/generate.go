package protodoc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"parley/migrations"
	"parley/models"
	"parley/services"
)

// Generate is doc with every generated region rewritten from the manifest
// a default forum publishes.
func Generate(ctx context.Context, doc []byte) ([]byte, error) {
	m, err := Manifest(ctx)
	if err != nil {
		return nil, err
	}
	tables, err := Tables(m)
	if err != nil {
		return nil, err
	}
	return Rewrite(doc, tables)
}

// Manifest is the manifest a forum with the default configuration
// publishes (default realm and services.DefaultLimits), as get_manifest
// answers it. The forum runs on a fresh SQLite database in a temporary
// folder, removed before Manifest returns.
func Manifest(ctx context.Context) (services.Manifest, error) {
	dir, err := os.MkdirTemp("", "protodoc-")
	if err != nil {
		return services.Manifest{}, fmt.Errorf("protodoc: %w", err)
	}
	defer os.RemoveAll(dir)
	db, err := models.Open(filepath.Join(dir, "parley.db"))
	if err != nil {
		return services.Manifest{}, fmt.Errorf("protodoc: %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return services.Manifest{}, fmt.Errorf("protodoc: %w", err)
	}
	defer sqlDB.Close()
	if _, err := migrations.Up(ctx, db); err != nil {
		return services.Manifest{}, fmt.Errorf("protodoc: %w", err)
	}
	return services.New(db, services.Config{}).Manifest(ctx), nil
}
