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
// It is one process's setting: nothing is shared between servers.
package heapfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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
	t.arm()
}

// tuner runs after each collection: a cleanup attached to an object that
// only a later cycle finds unreachable, which arms the next.
type tuner struct {
	floor   uint64
	percent int
	sample  []metrics.Sample
}

type sentinel struct{ _ [16]byte } // too big for a tiny allocation shared with others

func (t *tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *tuner) { t.tune(); t.arm() }, t)
}

// tune sets GOGC for what the last cycle left live, when that moves it
// (setting it takes the heap's lock).
func (t *tuner) tune() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if p := Percent(t.sample[0].Value.Uint64(), t.floor); p != t.percent {
		debug.SetGCPercent(p)
		t.percent = p
	}
}
