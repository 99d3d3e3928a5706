package testkit

import (
	"syscall"
	"testing"
	"time"
)

// CPUPerOp starts counting this process's CPU time (user and system); the
// function it returns reports it per operation as cpu-ns/op. On
// PostgreSQL a call's ns/op is mostly the database's round trips, while
// cpu-ns/op is what the server itself pays, and it moves less with the
// machine's load than ns/op does.
func CPUPerOp(b *testing.B) func() {
	start := ProcessCPU()
	return func() { b.ReportMetric(float64(ProcessCPU()-start)/float64(b.N), "cpu-ns/op") }
}

// ProcessCPU is the CPU time this process has used (user and system).
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
