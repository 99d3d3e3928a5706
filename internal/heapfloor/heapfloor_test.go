package heapfloor_test

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"parley/internal/heapfloor"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, floor uint64
		want        int
	}{
		{8 * mib, 24 * mib, 200},                  // 8 MiB may grow to 24 before the next cycle
		{4 * mib, 24 * mib, heapfloor.MaxPercent}, // a server answering posts: 20 past 4, bounded
		{1 * mib, 24 * mib, heapfloor.MaxPercent}, // at start
		{12 * mib, 24 * mib, 100},                 // half the floor: GOGC's own rule reaches it
		{150 * mib, 24 * mib, 100},                // ten thousand waiting calls: as without it
		{0, 24 * mib, 100},                        // nothing measured yet
	} {
		if got := heapfloor.Percent(c.live, c.floor); got != c.want {
			t.Errorf("Percent(%d MiB, %d MiB) = %d, want %d", c.live/mib, c.floor/mib, got, c.want)
		}
	}
}

func TestOperatorsSettingWins(t *testing.T) {
	t.Setenv("GOGC", "100")
	if !heapfloor.Set() {
		t.Fatal("GOGC set, but Set says the operator chose nothing")
	}
}

// After a collection GOGC follows the live heap: raised while it is small,
// 100 again once a cycle leaves half the floor live, raised again when
// that is let go.
func TestFloorFollowsTheLiveHeap(t *testing.T) {
	if heapfloor.Set() {
		t.Skip("GOGC or GOMEMLIMIT is set in the environment: Floor leaves the collector alone")
	}
	const floor = 64 << 20
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	await := func(what string, want func(gogc uint64) bool) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; {
			runtime.GC() // the tuner runs after a cycle, on the cleanup goroutine
			metrics.Read(s)
			if want(s[0].Value.Uint64()) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: GOGC %d", what, s[0].Value.Uint64())
			}
			runtime.Gosched()
		}
	}
	heapfloor.Floor(floor)
	await("a small heap", func(g uint64) bool { return g > 100 })
	held := make([]byte, floor*3/4)
	for i := range held {
		held[i] = 1 // live, and in memory
	}
	await("with 48 MiB live", func(g uint64) bool { return g == 100 })
	runtime.KeepAlive(held)
	held = nil
	await("once it is let go", func(g uint64) bool { return g > 100 })
}
