//go:build goultrapool

// The Go library the tables come from, as a peer: built only by the
// benchmark driver, and only when `go get` can fetch its module.
package main

import (
	"runtime/debug"

	ultrapool "github.com/maurice2k/ultrapool/v2"
)

func init() {
	var wp *ultrapool.WorkerPool[func()]
	// This executable runs the library alone; bench_go has the goroutines.
	runnerName = "bench_go_ultrapool"
	peers = []*peer{{
		name:  "go-ultrapool",
		about: "the Go library ultrapool v2, its defaults, AddTask",
		start: func() {
			wp = ultrapool.NewWorkerPool(func(task func()) { task() })
			wp.Start()
		},
		submit: func(task func()) { wp.AddTask(task) },
		finish: func() { wp.StopAndWait() },
		version: func() string {
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, m := range bi.Deps {
					if m.Path == "github.com/maurice2k/ultrapool/v2" {
						return m.Version
					}
				}
			}
			return "?"
		},
	}}
}
