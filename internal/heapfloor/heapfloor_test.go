package heapfloor_test

import (
	"runtime"
	"runtime/metrics"
	"sync"
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
	armFloor()
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

// floor is the tests' floor: Floor arms its tuner for the process's life,
// so every test shares one (armFloor).
const floor = 64 << 20

var armed sync.Once

func armFloor() { armed.Do(func() { heapfloor.Floor(floor) }) }

func TestIdling(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		held, settled uint64
		want          bool
	}{
		{259 * mib, 0, true},          // a burst's heap, kept while calls wait
		{40 * mib, 0, false},          // a server answering posts
		{49 * mib, 0, true},           // past twice the 24 MiB floor
		{107 * mib, 107 * mib, false}, // what the last settling could not return
		{120 * mib, 107 * mib, false}, // grown by less than the floor since
		{140 * mib, 107 * mib, true},  // grown by more
	} {
		if got := heapfloor.Idling(c.held, c.settled, 24*mib); got != c.want {
			t.Errorf("Idling(%d MiB held, %d MiB settled, 24 MiB) = %v, want %v", c.held/mib, c.settled/mib, got, c.want)
		}
	}
}

// A burst's heap, whose last cycle found it live, is collected and its
// pages returned once the process has allocated nothing for Idle: no
// cycle of the program's would ever come to find it garbage.
func TestAnIdleBurstIsReturned(t *testing.T) {
	if heapfloor.Set() {
		t.Skip("GOGC or GOMEMLIMIT is set in the environment: Floor leaves the collector alone")
	}
	armFloor()
	burst := make([][]byte, 0, 4096)
	for range cap(burst) {
		b := make([]byte, 64<<10)
		b[0], b[len(b)-1] = 1, 1
		burst = append(burst, b)
	}
	runtime.GC() // found live: the heap's goal is now twice the burst
	runtime.KeepAlive(burst)
	burst = nil
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	before := s[1].Value.Uint64()
	for deadline := time.Now().Add(time.Minute); ; {
		metrics.Read(s)
		if s[0].Value.Uint64() < floor {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the burst, %d MiB of objects are held and %d cycles ran", s[0].Value.Uint64()>>20, s[1].Value.Uint64()-before)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if s[1].Value.Uint64() == before {
		t.Fatal("the burst's objects went with no cycle")
	}
}
