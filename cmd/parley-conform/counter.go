package main

import "sync/atomic"

type atomicCounter = atomic.Int64
