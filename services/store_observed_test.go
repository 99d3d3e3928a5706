package services

import (
	"testing"

	"gorm.io/gorm"

	"parley/migrations/dbtest"
)

// TestUnobservedFollowsCallbacks holds unobserved to GORM's processors as
// they are: a fresh database, and every session of it, has GORM's own row
// and raw callbacks alone; registering anything on either makes every
// session observed until it is removed. Should a GORM upgrade change the
// processor's shape, the first check fails here (unobserved would answer
// false everywhere, and the statements would pass the callbacks again).
func TestUnobservedFollowsCallbacks(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		session := db.Session(&gorm.Session{NewDB: true})
		if !unobserved(db) || !unobserved(session) {
			t.Fatal("a fresh database is observed: GORM's processor is not the shape unobserved reads")
		}
		noop := func(*gorm.DB) {}
		for _, kind := range []string{"row", "raw", "row after"} {
			var err error
			switch kind {
			case "row":
				err = db.Callback().Row().Before("gorm:row").Register("test:observe", noop)
			case "raw":
				err = db.Callback().Raw().Before("gorm:raw").Register("test:observe", noop)
			case "row after":
				err = db.Callback().Row().After("*").Register("test:observe", noop)
			}
			if err != nil {
				t.Fatal(err)
			}
			if unobserved(db) || unobserved(session) {
				t.Fatalf("%s callback registered: still unobserved", kind)
			}
			db.Callback().Row().Remove("test:observe")
			db.Callback().Raw().Remove("test:observe")
			if !unobserved(db) || !unobserved(session) {
				t.Fatalf("%s callback removed: still observed", kind)
			}
		}
		// A callback elsewhere (create) is not on a batched statement's way.
		if err := db.Callback().Create().Before("gorm:create").Register("test:observe", noop); err != nil {
			t.Fatal(err)
		}
		defer db.Callback().Create().Remove("test:observe")
		if !unobserved(db) {
			t.Fatal("a create callback made raw statements observed")
		}
	})
	if ownCallbackOnly(nil) || ownCallbackOnly(&struct{ fns int }{}) || !unobserved(dbtest.Fresh(t, "sqlite")) {
		t.Fatal("something other than GORM's processor taken for one")
	}
}
