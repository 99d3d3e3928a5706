package main

import (
	"context"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"parley/services"
)

// sdNotify sends state to the service manager (systemd's sd_notify, in a
// few lines): one datagram to the unix socket NOTIFY_SOCKET names, an
// abstract one when it starts with '@'. Without NOTIFY_SOCKET it does
// nothing, so the server runs the same outside systemd.
func sdNotify(state string) error {
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return nil
	}
	if addr[0] == '@' {
		addr = "\x00" + addr[1:]
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.Write([]byte(state))
	return err
}

// watchdogInterval is half the watchdog's timeout systemd sets
// (WatchdogSec= gives WATCHDOG_USEC, and WATCHDOG_PID names the process
// it is meant for), or zero when there is no watchdog for this process.
func watchdogInterval() time.Duration {
	usec, err := strconv.ParseInt(os.Getenv("WATCHDOG_USEC"), 10, 64)
	if err != nil || usec <= 0 {
		return 0
	}
	if pid := os.Getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0
	}
	return time.Duration(usec) * time.Microsecond / 2
}

// watchdog pings the database every interval and tells systemd WATCHDOG=1
// each time it answers: a server whose database stays unreachable, or
// which hangs, misses its pings and systemd restarts it. It returns when
// ctx ends.
//
// Reading: the issue asks that the watchdog ping the database; a restart
// does not mend a database that is down, but a process stuck on a
// poisoned pool or a wedged driver is mended by one, and WatchdogSec
// should be generous (see packaging/systemd/parley.service).
func watchdog(ctx context.Context, forum *services.Forum, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, interval)
		err := forum.Ping(pctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			log.Warn("watchdog: the database does not answer; not notifying systemd", "err", err)
		default:
			if err := sdNotify("WATCHDOG=1"); err != nil {
				log.Warn("watchdog: notify", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
