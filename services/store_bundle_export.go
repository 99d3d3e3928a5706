package services

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"gorm.io/gorm"

	"parley/migrations"
	"parley/models"
)

// Export writes the whole forum to w as a bundle (see store_bundle.go), from one
// consistent snapshot, streaming: memory stays constant however large the
// forum. It refuses a schema with a table the bundle neither carries nor
// leaves out. Writers are not held up: on PostgreSQL the snapshot is a
// read-only repeatable-read transaction, on SQLite a read transaction
// beside the write-ahead log.
func (f *Forum) Export(ctx context.Context, w io.Writer) (BundleHeader, error) {
	var header BundleHeader
	err := f.readSnapshot(ctx, func(tx *gorm.DB) error {
		var err error
		if header, err = exportHeader(ctx, tx); err != nil {
			return err
		}
		out := bufio.NewWriterSize(w, 1<<16)
		line, err := json.Marshal(header)
		if err != nil {
			return err
		}
		if _, err := out.Write(append(line, '\n')); err != nil {
			return err
		}
		for _, t := range header.Tables {
			if err := exportRows(tx, out, t); err != nil {
				return fmt.Errorf("table %s: %w", t.Name, err)
			}
		}
		return out.Flush()
	})
	if err != nil {
		return BundleHeader{}, fmt.Errorf("export: %w", err)
	}
	return header, nil
}

// readSnapshot runs fn in a read transaction that sees one state of the
// database throughout.
func (f *Forum) readSnapshot(ctx context.Context, fn func(tx *gorm.DB) error) error {
	db := f.db.WithContext(ctx)
	if models.IsPostgresDB(db) {
		return db.Transaction(func(tx *gorm.DB) error {
			if err := bulkSession(tx); err != nil {
				return err
			}
			return fn(tx)
		}, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	}
	// SQLite's transactions begin immediate (see models.Open), which would
	// hold every writer off for the whole export; a deferred one reads a
	// snapshot of the write-ahead log instead. database/sql knows nothing
	// of it, so it runs on one connection held for the purpose.
	return db.Connection(func(conn *gorm.DB) error {
		if err := conn.Exec("BEGIN DEFERRED").Error; err != nil {
			return err
		}
		defer conn.Exec("ROLLBACK")
		return fn(conn)
	})
}

// exportHeader describes the tables to export, after checking that the
// schema has no table the bundle would lose.
func exportHeader(ctx context.Context, tx *gorm.DB) (BundleHeader, error) {
	version, err := migrations.Current(ctx, tx)
	if err != nil {
		return BundleHeader{}, err
	}
	tables, err := tx.Migrator().GetTables()
	if err != nil {
		return BundleHeader{}, fmt.Errorf("list tables: %w", err)
	}
	if err := checkCoverage(tables); err != nil {
		return BundleHeader{}, err
	}
	header := BundleHeader{Format: BundleFormat, SchemaVersion: version}
	for _, name := range bundleTables {
		if !slices.Contains(tables, name) {
			return BundleHeader{}, fmt.Errorf("table %s is missing: run 'parley migrate'", name)
		}
		cols, err := columnsOf(tx, name)
		if err != nil {
			return BundleHeader{}, err
		}
		t := BundleTable{Name: name}
		for _, c := range cols {
			t.Columns = append(t.Columns, c.name)
		}
		if err := tx.Raw("SELECT COUNT(*) FROM " + quoteIdent(name)).Scan(&t.Rows).Error; err != nil {
			return BundleHeader{}, fmt.Errorf("count %s: %w", name, err)
		}
		header.Tables = append(header.Tables, t)
	}
	return header, nil
}

// exportRows writes a table's rows, one line each, in the order of their
// id.
func exportRows(tx *gorm.DB, out *bufio.Writer, t BundleTable) error {
	cols, err := columnsOf(tx, t.Name)
	if err != nil {
		return err
	}
	order := "id"
	if !slices.Contains(t.Columns, "id") {
		order = quoteIdents(t.Columns)
	}
	rows, err := tx.Raw("SELECT " + quoteIdents(t.Columns) + " FROM " + quoteIdent(t.Name) + " ORDER BY " + order).Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	prefix, _ := json.Marshal(t.Name)
	prefix = append(append([]byte(`{"table":`), prefix...), `,"row":{`...)
	var n int64
	var line []byte // reused: a row is written before the next is read
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		line = append(line[:0], prefix...)
		for i, c := range cols {
			if i > 0 {
				line = append(line, ',')
			}
			key, _ := json.Marshal(c.name)
			value, err := encodeValue(c.kind, vals[i])
			if err != nil {
				return fmt.Errorf("column %s: %w", c.name, err)
			}
			line = append(append(append(line, key...), ':'), value...)
		}
		if _, err := out.Write(append(line, "}}\n"...)); err != nil {
			return err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n != t.Rows {
		return fmt.Errorf("%d rows read, %d counted in the same snapshot", n, t.Rows)
	}
	return nil
}
