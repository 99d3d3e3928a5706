package main

import "syscall"

// fdReserve is how many file descriptors serve keeps beside its
// connections: the database pool, the SQLite file and its journal, the
// listener, logs, and some slack.
const fdReserve = 64

// fitConns lowers the connection cap so that connections can never take
// the process's last file descriptors: past the cap fasthttp still accepts,
// answers 503 and closes, which needs a descriptor; without one, accept
// itself fails. The cap is the open-file limit less the database pool and
// fdReserve, and never below 16.
func fitConns(want, dbConns int) int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur > 1<<24 {
		return want // unknown or practically unlimited
	}
	fit := int(lim.Cur) - dbConns - fdReserve
	return max(min(want, fit), 16)
}
