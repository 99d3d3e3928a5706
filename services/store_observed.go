package services

import (
	"reflect"
	"sync"

	"gorm.io/gorm"
)

// A statement of a pgAction's batches, and the admission's, used to pass
// GORM's row or raw callbacks before pgx sent it (passRow), so that the
// tests' injected faults and statement counts saw it like every other.
// In a server nothing but GORM's own callback is registered there, and
// readying a statement for them (a *gorm.DB of its own, its text copied
// into GORM's builder, the callbacks walked) was a fifth of a post's
// allocated bytes and more than a tenth of its server CPU in
// BenchmarkPost. Such a statement now skips them whenever nothing could
// see it pass: unobserved.

// unobserved reports whether db's row and raw callbacks are GORM's own
// alone (gorm:row, gorm:raw), so that a statement that would only pass
// them can go to pgx without them; false as soon as anything else is
// registered on either (a test's fault or count), and false when GORM's
// processor is not the shape read here (another GORM version): the
// statements then pass the callbacks as before. TestUnobservedFollowsCallbacks
// holds it to GORM's actual processors.
func unobserved(db *gorm.DB) bool {
	cb := db.Callback()
	return ownCallbackOnly(cb.Row()) && ownCallbackOnly(cb.Raw())
}

// ownCallbackOnly reports whether a GORM processor (what Callback().Row()
// answers) runs one function: GORM's own. GORM exposes no list of a
// processor's callbacks, so the length of its compiled list (the
// unexported fns, read by reflection) is taken.
func ownCallbackOnly(processor any) bool {
	v := reflect.ValueOf(processor)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return false
	}
	v = v.Elem()
	i, ok := processorFns(v.Type())
	if !ok {
		return false
	}
	return v.Field(i).Len() == 1
}

// processorFns answers the index of a GORM processor's compiled callbacks
// in its type: a field fns of type []func(*gorm.DB); false when the type
// has none. It is looked up once per type.
func processorFns(t reflect.Type) (int, bool) {
	if i, ok := fnsIndex.Load(t); ok {
		return i.(int), i.(int) >= 0
	}
	i := -1
	if t.Kind() == reflect.Struct {
		if f, ok := t.FieldByName("fns"); ok && len(f.Index) == 1 && f.Type == reflect.TypeFor[[]func(*gorm.DB)]() {
			i = f.Index[0]
		}
	}
	fnsIndex.Store(t, i)
	return i, i >= 0
}

var fnsIndex sync.Map // reflect.Type → int, -1 for none
