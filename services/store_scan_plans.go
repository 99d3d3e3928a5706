package services

import (
	"fmt"
	"reflect"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// pgx plans how to scan each column anew for every query it runs: the
// plans of a post's four statements were a sixth of its allocations and
// 4 % of its server CPU. The fixed statements scan through plans kept with
// the statement instead (fixedSQL.plans, scanKept): the first row planned
// fills the slot, later rows of the same columns and destination types
// reuse it, and a row whose columns or destinations differ (another query
// mode, another Go type) is planned anew and replaces it.
//
// The plans come from the type map of the connection that read the row
// and are used on every connection: Parley registers no types of its own,
// so every connection's map holds pgx's built-in types alone and plans
// alike. pgx's scan plans keep no state between scans (a Rows of pgx's own
// reuses them row after row), so goroutines share them.

// planSlot holds a statement's kept plans.
type planSlot struct{ p atomic.Pointer[columnPlans] }

// columnPlans is how to scan one statement's columns into one set of
// destination types.
type columnPlans struct {
	oids    []uint32
	formats []int16
	types   []reflect.Type
	plans   []pgtype.ScanPlan
}

// scanKept scans row into dest as row.Scan does, through the plans kept
// in slot; with no slot, as row.Scan.
func scanKept(row pgx.Row, slot *planSlot, dest ...any) error {
	if slot == nil {
		return row.Scan(dest...)
	}
	return row.Scan(&keptScan{slot: slot, dest: dest})
}

// keptScan is a pgx.RowScanner: pgx hands it the row when it is the one
// destination.
type keptScan struct {
	slot *planSlot
	dest []any
}

func (k *keptScan) ScanRow(rows pgx.Rows) error {
	fields, values := rows.FieldDescriptions(), rows.RawValues()
	if len(fields) != len(k.dest) || len(values) != len(k.dest) {
		return fmt.Errorf("the row has %d columns for %d destinations", len(fields), len(k.dest))
	}
	plans := k.slot.p.Load()
	if plans == nil || !plans.fit(fields, k.dest) {
		plans = planColumns(rows.Conn().TypeMap(), fields, k.dest)
		k.slot.p.Store(plans)
	}
	for i, d := range k.dest {
		if d == nil {
			continue
		}
		if err := plans.plans[i].Scan(values[i], d); err != nil {
			return pgx.ScanArgError{ColumnIndex: i, FieldName: fields[i].Name, Err: err}
		}
	}
	return nil
}

// fit says whether p scans these columns into these destinations.
func (p *columnPlans) fit(fields []pgconn.FieldDescription, dest []any) bool {
	if len(p.plans) != len(dest) {
		return false
	}
	for i, f := range fields {
		if p.oids[i] != f.DataTypeOID || p.formats[i] != f.Format || p.types[i] != reflect.TypeOf(dest[i]) {
			return false
		}
	}
	return true
}

func planColumns(m *pgtype.Map, fields []pgconn.FieldDescription, dest []any) *columnPlans {
	p := &columnPlans{oids: make([]uint32, len(dest)), formats: make([]int16, len(dest)),
		types: make([]reflect.Type, len(dest)), plans: make([]pgtype.ScanPlan, len(dest))}
	for i, f := range fields {
		p.oids[i], p.formats[i], p.types[i] = f.DataTypeOID, f.Format, reflect.TypeOf(dest[i])
		if dest[i] != nil {
			p.plans[i] = m.PlanScan(f.DataTypeOID, f.Format, dest[i])
		}
	}
	return p
}
