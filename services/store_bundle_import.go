package services

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"parley/migrations"
	"parley/models"
)

// Import loads a bundle (see store_bundle.go) into this database, which must be
// migrated and empty, in one transaction: the whole forum or, on any error,
// nothing. It reads the bundle as a stream, a line at a time, and inserts
// a batch of rows at a time.
//
// Everything keeps its identity: ids, states of record, log positions —
// so the since cursors agents kept stay valid — token hashes and password
// hashes. Afterwards new ids follow the imported ones (PostgreSQL's
// sequences are set to them; SQLite's AUTOINCREMENT follows by itself),
// and new log positions come after every imported one (raiseLog).
//
// It refuses a database that holds a forum (ErrNotEmpty), a bundle from a
// newer schema (ErrBundleNewer) or one older than the first bundles
// (ErrBundleOlder), a bundle whose rows do not match its header, a line
// longer than any row takes (bundleLineMaxBytes: it is refused when the
// reader passes the bound, never held whole), and a row the protocol would
// never have stored (store_bundle_checks.go: a *BundleRowError naming the
// table, row and field).
func (f *Forum) Import(ctx context.Context, r io.Reader) (BundleHeader, error) {
	lines := newBundleLines(r, f.lineMax())
	var header BundleHeader
	line, err := lines.next()
	if err == nil {
		err = json.Unmarshal(line, &header)
	}
	if err != nil {
		return BundleHeader{}, fmt.Errorf("import: read the header: %w", err)
	}
	if header.Format != BundleFormat {
		return BundleHeader{}, fmt.Errorf("import: not a Parley bundle of format %s (parley_bundle is %q)", BundleFormat, header.Format)
	}
	err = f.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := bulkSession(tx); err != nil {
			return err
		}
		kinds, err := checkImportable(ctx, tx, header)
		if err != nil {
			return err
		}
		deferred, err := deferForeignKeys(tx)
		if err != nil {
			return err
		}
		checker := f.rowChecker()
		for _, t := range header.Tables {
			if err := importRows(tx, lines, checker, t, kinds[t.Name]); err != nil {
				var bad *BundleRowError
				if errors.As(err, &bad) {
					return err // it names the table
				}
				return fmt.Errorf("table %s: %w", t.Name, err)
			}
		}
		if _, err := lines.next(); !errors.Is(err, io.EOF) {
			return errors.New("the bundle holds more rows than its header counts")
		}
		if err := checkForum(tx); err != nil {
			return err
		}
		if err := checkForeignKeys(tx, deferred); err != nil {
			return err
		}
		if err := resetSequences(tx); err != nil {
			return err
		}
		return raiseLog(tx)
	})
	if err != nil {
		return BundleHeader{}, fmt.Errorf("import: %w", err)
	}
	return header, nil
}

// checkImportable checks the database and the header against each other
// and returns, for each table, the kinds of the bundle's columns as this
// schema declares them.
func checkImportable(ctx context.Context, tx *gorm.DB, h BundleHeader) (map[string][]column, error) {
	current, err := migrations.Current(ctx, tx)
	if err != nil {
		return nil, err
	}
	latest, err := migrations.Latest(models.Dialect(tx))
	if err != nil {
		return nil, err
	}
	switch {
	case current != latest:
		return nil, fmt.Errorf("the database is at schema version %d, this build's is %d: run 'parley migrate'", current, latest)
	case h.SchemaVersion > current:
		return nil, fmt.Errorf("%w (bundle %d, this build %d)", ErrBundleNewer, h.SchemaVersion, current)
	case h.SchemaVersion < 1:
		return nil, fmt.Errorf("the header names no schema version")
	case h.SchemaVersion < max(FirstBundleSchema, migrations.LastRowStep()):
		step := migrations.LastRowStep()
		return nil, fmt.Errorf("%w (the bundle is at schema version %d): this build imports bundles from schema version %d on, as the first bundles were written at %d "+
			"and migration %d is the last to rewrite stored rows (%s), which import would copy as they are; "+
			"migrate the source database with this build ('parley migrate') and export it again",
			ErrBundleOlder, h.SchemaVersion, max(FirstBundleSchema, step), FirstBundleSchema, step, migrations.RowSteps[step])
	}
	for _, t := range bundleTables {
		var rows int64
		if err := tx.Raw("SELECT COUNT(*) FROM (SELECT 1 FROM " + quoteIdent(t) + " LIMIT 1) s").Scan(&rows).Error; err != nil {
			return nil, err
		}
		if rows > 0 {
			return nil, fmt.Errorf("%w (table %s has rows)", ErrNotEmpty, t)
		}
	}
	kinds := map[string][]column{}
	last := -1
	for _, t := range h.Tables {
		at := slices.Index(bundleTables, t.Name)
		if at <= last || t.Rows < 0 || len(t.Columns) == 0 {
			return nil, fmt.Errorf("the header lists table %q out of place, twice, unknown or without columns", t.Name)
		}
		last = at
		target, err := columnsOf(tx, t.Name)
		if err != nil {
			return nil, err
		}
		for _, name := range t.Columns {
			i := slices.IndexFunc(target, func(c column) bool { return c.name == name })
			if i < 0 || slices.ContainsFunc(kinds[t.Name], func(c column) bool { return c.name == name }) {
				return nil, fmt.Errorf("column %s.%s is not in this schema, or listed twice", t.Name, name)
			}
			kinds[t.Name] = append(kinds[t.Name], target[i])
		}
	}
	return kinds, nil
}

// importRows reads a table's rows from the bundle and inserts them in
// batches of multi-row INSERTs.
func importRows(tx *gorm.DB, lines *bundleLines, checker *rowChecker, t BundleTable, cols []column) error {
	perBatch := min(500, 30000/len(cols)) // under both databases' limits on bound values
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	args := make([]any, 0, perBatch*len(cols))
	row := make(map[string]any, len(cols))
	for n := int64(1); n <= t.Rows; n++ {
		raw, err := lines.next()
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		var line bundleLine
		if err == nil {
			err = json.Unmarshal(raw, &line)
		}
		if err != nil {
			return fmt.Errorf("row %d of %d: %w", n, t.Rows, err)
		}
		if line.Table != t.Name || len(line.Row) != len(cols) {
			return fmt.Errorf("row %d of %d: a row of %q with %d columns, want %d", n, t.Rows, line.Table, len(line.Row), len(cols))
		}
		clear(row)
		for _, c := range cols {
			raw, ok := line.Row[c.name]
			if !ok {
				return fmt.Errorf("row %d lacks column %s", n, c.name)
			}
			v, err := decodeValue(c.kind, raw)
			if err != nil {
				return fmt.Errorf("row %d, column %s: %w", n, c.name, err)
			}
			args = append(args, v)
			row[c.name] = v
		}
		if err := checker.checkRow(t.Name, n, row); err != nil {
			return err
		}
		if len(args) == cap(args) || n == t.Rows {
			if err := insertRows(tx, t.Name, names, args); err != nil {
				return fmt.Errorf("rows up to %d: %w", n, err)
			}
			args = args[:0]
		}
	}
	return nil
}

// insertRows inserts rows of values, straight through the transaction's
// connection: GORM's statement builder would re-read every value and log
// a long statement in full.
func insertRows(tx *gorm.DB, table string, cols []string, args []any) error {
	var sql strings.Builder
	sql.WriteString("INSERT INTO " + quoteIdent(table) + " (" + quoteIdents(cols) + ") VALUES ")
	pg := models.IsPostgresDB(tx)
	for i := range args {
		switch {
		case i%len(cols) == 0 && i > 0:
			sql.WriteString("), (")
		case i%len(cols) == 0:
			sql.WriteString("(")
		default:
			sql.WriteString(", ")
		}
		if pg {
			sql.WriteString("$" + strconv.Itoa(i+1))
		} else {
			sql.WriteString("?")
		}
	}
	sql.WriteString(")")
	_, err := tx.Statement.ConnPool.ExecContext(tx.Statement.Context, sql.String(), args...)
	return err
}

// deferForeignKeys lets the transaction hold, until it ends, rows whose
// references come later in the bundle: where references loop between
// tables or point forward within one. SQLite defers every foreign key of
// the transaction at the cost of a counter. PostgreSQL checks each
// reference when its statement ends unless the constraint is deferrable:
// the constraints that can point forward are made so for this transaction
// only (checkForeignKeys makes them as they were before it commits), and
// the others stay as they are, as their checks would queue up in memory.
func deferForeignKeys(tx *gorm.DB) ([][2]string, error) {
	if !models.IsPostgresDB(tx) {
		return nil, tx.Exec("PRAGMA defer_foreign_keys = ON").Error
	}
	rows, err := tx.Raw(`SELECT cl.relname, c.conname, rf.relname
		FROM pg_constraint c JOIN pg_class cl ON cl.oid = c.conrelid JOIN pg_class rf ON rf.oid = c.confrelid
		WHERE c.contype = 'f' AND NOT c.condeferrable AND cl.relnamespace = current_schema()::regnamespace
		ORDER BY cl.relname, c.conname`).Rows()
	if err != nil {
		return nil, fmt.Errorf("foreign keys: %w", err)
	}
	var deferred [][2]string
	for rows.Next() {
		var table, constraint, refers string
		if err := rows.Scan(&table, &constraint, &refers); err != nil {
			rows.Close()
			return nil, err
		}
		if at := slices.Index(bundleTables, table); at >= 0 && slices.Index(bundleTables, refers) >= at {
			deferred = append(deferred, [2]string{table, constraint})
		}
	}
	rows.Close()
	for _, d := range deferred {
		if err := tx.Exec("ALTER TABLE " + quoteIdent(d[0]) + " ALTER CONSTRAINT " + quoteIdent(d[1]) + " DEFERRABLE INITIALLY DEFERRED").Error; err != nil {
			return nil, fmt.Errorf("defer %s: %w", d[1], err)
		}
	}
	return deferred, nil
}

// checkForeignKeys checks the deferred references now, and on PostgreSQL
// makes their constraints as they were.
func checkForeignKeys(tx *gorm.DB, deferred [][2]string) error {
	if !models.IsPostgresDB(tx) {
		var broken int64
		if err := tx.Raw("SELECT COUNT(*) FROM pragma_foreign_key_check").Scan(&broken).Error; err != nil {
			return err
		}
		if broken > 0 {
			return fmt.Errorf("%d rows refer to rows the bundle does not hold", broken)
		}
		return nil
	}
	if err := tx.Exec("SET CONSTRAINTS ALL IMMEDIATE").Error; err != nil {
		return fmt.Errorf("the bundle's references do not hold: %w", err)
	}
	for _, d := range deferred {
		if err := tx.Exec("ALTER TABLE " + quoteIdent(d[0]) + " ALTER CONSTRAINT " + quoteIdent(d[1]) + " NOT DEFERRABLE").Error; err != nil {
			return fmt.Errorf("restore %s: %w", d[1], err)
		}
	}
	return nil
}

// resetSequences sets each PostgreSQL sequence behind an id column to the
// highest id imported, so that the next row takes the next id.
func resetSequences(tx *gorm.DB) error {
	if !models.IsPostgresDB(tx) {
		return nil
	}
	var serials []struct{ Table, Column string }
	if err := tx.Raw(`SELECT table_name AS "table", column_name AS "column" FROM information_schema.columns
		WHERE table_schema = current_schema() AND column_default LIKE 'nextval(%'`).Scan(&serials).Error; err != nil {
		return fmt.Errorf("sequences: %w", err)
	}
	for _, s := range serials {
		if !slices.Contains(bundleTables, s.Table) {
			continue
		}
		err := tx.Exec("SELECT setval(pg_get_serial_sequence(?, ?), MAX("+quoteIdent(s.Column)+")) FROM "+quoteIdent(s.Table)+
			" HAVING MAX("+quoteIdent(s.Column)+") IS NOT NULL", quoteIdent(s.Table), s.Column).Error
		if err != nil {
			return fmt.Errorf("sequence of %s.%s: %w", s.Table, s.Column, err)
		}
	}
	return nil
}

// raiseLog makes every log position taken from now on greater than every
// position imported (see positionsPerTx): on SQLite the counter moves to
// the highest; on PostgreSQL the transaction-id offset grows until this
// server's next transaction id lands above it. Positions live in
// events.seq, threads.turn_seq and threads.activity_seq.
func raiseLog(tx *gorm.DB) error {
	var highest int64
	err := tx.Raw(`SELECT COALESCE(MAX(p), 0) FROM (
		SELECT MAX(seq) AS p FROM events UNION ALL SELECT MAX(turn_seq) FROM threads UNION ALL SELECT MAX(activity_seq) FROM threads) s`).
		Scan(&highest).Error
	if err != nil {
		return fmt.Errorf("highest log position: %w", err)
	}
	if !models.IsPostgresDB(tx) {
		return tx.Exec("UPDATE log_sequence SET value = MAX(value, ?) WHERE id = 1", highest).Error
	}
	var xid int64
	if err := tx.Raw("SELECT pg_current_xact_id()::text::bigint").Scan(&xid).Error; err != nil {
		return fmt.Errorf("transaction id: %w", err)
	}
	// Every later transaction has an id above xid, so its first position
	// is at least (xid + 1 + offset) × positionsPerTx.
	if offset := highest/positionsPerTx - xid; offset > 0 {
		return tx.Exec("UPDATE log_sequence SET value = GREATEST(value, ?) WHERE id = 1", offset).Error
	}
	return nil
}
