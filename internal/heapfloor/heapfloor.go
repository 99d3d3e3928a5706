// Package heapfloor keeps Go's collector from running many times a second
// over a small heap.
//
// The collector starts a cycle when the heap has grown by GOGC percent
// (100) of what the last cycle left live. A Parley server's live heap is
// about 4 MiB when it only answers posts, so at 1,700 posts/s it
// collected nine times a second, and each cycle also scanned and shrank
// every connection's goroutine stack, which the next request grew again:
// about a tenth of the server's CPU per post (docs/performance.md, "A
// floor under the heap").
//
// Floor raises GOGC while the live heap is small, so that the next cycle
// starts when the heap reaches the floor, and never above MaxPercent: the
// heap is let grow at most that much past what a cycle left live, however
// small. Once a cycle leaves half the floor or more live, GOGC is 100 and
// memory grows as without Floor (ten thousand waiting calls hold about
// 150 MiB).
//
// Measured, a floor held by the runtime's memory limit instead (GOGC off)
// saved half as much CPU, at 82 MiB of resident memory against this one's
// 55: the runtime returned memory to the system to stay under the limit
// and took it back again.
//
// A burst (ten thousand waiting calls admitted at once) leaves the
// opposite problem: its last cycle set a goal of twice what it held live
// then, and a process that then only waits allocates too little to reach
// it, so no cycle comes to find the burst's garbage, and its pages stay
// resident (259 MiB on a server holding 5,000 waiting calls, for as long
// as they waited). So when Idle passes after a cycle with no other, and
// the heap holds more than twice the floor, Floor runs one cycle and
// returns the free pages to the system (debug.FreeOSMemory) — once, until
// the program's own allocation brings the next cycle, and again only for
// a heap grown by the floor since (Idling).
//
// It is one process's setting: nothing is shared between servers.
package heapfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// MaxPercent bounds the GOGC Floor sets. A cycle's live heap may have
// grown by the time Floor sets GOGC from it (it runs after the cycle), so
// the heap's goal is at most MaxPercent past the newer live heap, not the
// floor.
const MaxPercent = 400

// Percent is the GOGC that lets a heap of live bytes grow to floor before
// the next cycle, live × (1 + GOGC/100) = floor, between 100 and
// MaxPercent.
func Percent(live, floor uint64) int {
	if live == 0 || floor <= 2*live {
		return 100
	}
	return int(min((floor-live)*100/live, MaxPercent))
}

// Set reports whether the operator chose the collector's settings: GOGC
// or GOMEMLIMIT in the environment. Floor then leaves them alone.
func Set() bool {
	_, gogc := os.LookupEnv("GOGC")
	_, limit := os.LookupEnv("GOMEMLIMIT")
	return gogc || limit
}

// Floor keeps GOGC at Percent(live heap, floor bytes) after every
// collection, until the process ends. It does nothing when floor is 0 or
// the operator set GOGC or GOMEMLIMIT (Set).
func Floor(floor uint64) {
	if floor == 0 || Set() {
		return
	}
	t := &tuner{floor: floor, percent: 100, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	t.idle = time.AfterFunc(time.Hour, t.settle)
	t.idle.Stop()
	t.arm()
}

// Idle is how long a process may go without a collection, after one of
// its own, before Floor returns what its heap holds beyond twice the
// floor.
const Idle = 5 * time.Second

// Idling reports whether a heap of held bytes (the heap's memory not
// returned to the system) is worth a collection of its own once the
// process idles: more than twice the floor, and more than the floor past
// what the last such collection left (settled), so that a heap that
// cannot shrink (ten thousand calls still waiting, their objects spread
// over many pages) is not collected again and again.
func Idling(held, settled, floor uint64) bool { return held > 2*floor && held > settled+floor }

// tuner runs after each collection: a cleanup attached to an object that
// only a later cycle finds unreachable, which arms the next.
type tuner struct {
	floor   uint64
	percent int
	sample  []metrics.Sample
	idle    *time.Timer // settle, Idle after the last cycle of the program's own

	mu      sync.Mutex    // forced, between the cleanup goroutine and idle's
	forced  bool          // the next cycle is settle's: it arms no idle
	settled atomic.Uint64 // the heap held after settle's last collection
}

type sentinel struct{ _ [16]byte } // too big for a tiny allocation shared with others

func (t *tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *tuner) { t.tune(); t.arm() }, t)
}

// tune sets GOGC for what the last cycle left live, when that moves it
// (setting it takes the heap's lock), and starts the idle wait again
// after a cycle of the program's own.
func (t *tuner) tune() {
	t.mu.Lock()
	if t.forced {
		t.forced = false
	} else {
		t.idle.Reset(Idle)
	}
	t.mu.Unlock()
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if p := Percent(t.sample[0].Value.Uint64(), t.floor); p != t.percent {
		debug.SetGCPercent(p)
		t.percent = p
	}
}

// settle runs when Idle has passed with no cycle since the program's last
// one: the heap's memory beyond twice the floor goes back to the system.
// A cycle that began meanwhile would have stopped the timer, so the one
// settle makes is the first since.
func (t *tuner) settle() {
	if !Idling(heldBytes(), t.settled.Load(), t.floor) {
		return
	}
	t.mu.Lock()
	t.forced = true
	t.mu.Unlock()
	debug.FreeOSMemory()
	t.settled.Store(heldBytes())
}

// heldBytes is the heap's memory not returned to the system: its objects,
// the unused room of its spans, and its free pages.
func heldBytes() uint64 {
	held := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(held)
	var n uint64
	for _, h := range held {
		if h.Value.Kind() == metrics.KindUint64 {
			n += h.Value.Uint64()
		}
	}
	return n
}
