// The Go runner of the cross-library benchmark: the same workloads, the
// same command line and the same result line as the C runners (see
// experiments/harness.h), for raw goroutines (the "goroutines" column of
// the Go tables) and, when built with -tags goultrapool and its module
// can be fetched, for the Go library itself.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A peer runs tasks submitted from many goroutines.
type peer struct {
	name, about string
	start       func() // before a run
	submit      func(task func())
	finish      func() // after the run's tasks have all been counted
	workersPeak func() int
	version     func() string
}

// runnerName is the executable's family name in the result lines.
var runnerName = "bench_go"

var peers = []*peer{{
	name:   "goroutines",
	about:  "a goroutine per task (go task())",
	start:  func() {},
	submit: func(task func()) { go task() },
	finish: func() {},
	version: func() string {
		return runtime.Version()
	},
}}

// How finished tasks are counted (--completion; docs/benchmarks.md,
// "Counting finished tasks"). striped: done, one padded counter per
// submitter, so the count itself does not become a contended cache line.
// shared: one sync.WaitGroup on a cache line of its own, Add(tasks) before
// the run and Done() by every task, as the Go benchmark these tables
// mirror counts its tasks (it calls Add(1) per submit as well, which here
// would be a second shared write per task that the C runners do not make).
type stripe struct {
	n uint64
	_ [56]byte
}

var done []stripe

type latch struct {
	_  [64]byte
	wg sync.WaitGroup
	_  [64]byte
}

// sharedCompletion is set by --completion shared.
var sharedCompletion bool

// maxLatch is the most tasks the shared mode counts: a WaitGroup's
// counter is 32 bits wide and signed.
const maxLatch = 1<<31 - 1

// completionName is the mode as the result line records it.
func completionName() string {
	if sharedCompletion {
		return "shared"
	}
	return "striped"
}

func doneSum() uint64 {
	var s uint64
	for i := range done {
		s += atomic.LoadUint64(&done[i].n)
	}
	return s
}

type measurement struct {
	nsPerOp, wallS, cpuUse      float64
	peakThreads, peakGoroutines int
	nvcsw, nivcsw, maxrssKB     int64
}

func cpuSeconds(ru *syscall.Rusage) float64 {
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)*1e-6
}

// threadCount reads num_threads from /proc/self/stat; -1 where absent.
func threadCount() int {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return -1
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 18 {
		return -1
	}
	n, err := strconv.Atoi(f[17])
	if err != nil {
		return -1
	}
	return n
}

func measure(p *peer, w *workload, submitters int, tasks uint64) measurement {
	done = make([]stripe, submitters)
	// The shared mode's latch, new for every run. A watcher goroutine
	// waits on it and closes released, which the main goroutine polls
	// every millisecond as it polls the stripes: both modes end the clock
	// alike, and differ only in how each task counts itself.
	l := new(latch)
	released := make(chan struct{})
	if sharedCompletion {
		l.wg.Add(int(tasks))
		go func() {
			l.wg.Wait()
			close(released)
		}()
	}
	finished := func() bool {
		if !sharedCompletion {
			return doneSum() >= tasks
		}
		select {
		case <-released:
			return true
		default:
			return false
		}
	}
	var m measurement
	var ru0, ru1 syscall.Rusage
	stop := make(chan struct{})
	sampled := make(chan [2]int)
	go func() {
		peakT, peakG := -1, 0
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if n := threadCount(); n > peakT {
				peakT = n
			}
			if g := runtime.NumGoroutine(); g > peakG {
				peakG = g
			}
			select {
			case <-stop:
				sampled <- [2]int{peakT, peakG}
				return
			case <-tick.C:
			}
		}
	}()
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	var ready sync.WaitGroup
	gate := make(chan struct{})
	ready.Add(submitters)
	for i := 0; i < submitters; i++ {
		share := tasks / uint64(submitters)
		if uint64(i) < tasks%uint64(submitters) {
			share++
		}
		go func(i int, share uint64) {
			c := &done[i].n
			rng := uint64(i+1) * 0x9e3779b97f4a7c15
			ready.Done()
			<-gate
			if sharedCompletion {
				for k := uint64(0); k < share; k++ {
					r := splitmix(&rng)
					p.submit(func() {
						w.run(r)
						l.wg.Done()
					})
				}
				return
			}
			for k := uint64(0); k < share; k++ {
				r := splitmix(&rng)
				p.submit(func() {
					w.run(r)
					atomic.AddUint64(c, 1)
				})
			}
		}(i, share)
	}
	// The clock starts once every submitter is ready and before any submits.
	ready.Wait()
	t0 := time.Now()
	close(gate)
	for !finished() {
		time.Sleep(time.Millisecond)
	}
	wall := time.Since(t0)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	close(stop)
	peaks := <-sampled
	m.wallS = wall.Seconds()
	m.nsPerOp = float64(wall.Nanoseconds()) / float64(tasks)
	m.cpuUse = (cpuSeconds(&ru1) - cpuSeconds(&ru0)) / (m.wallS * float64(runtime.NumCPU()))
	m.peakThreads, m.peakGoroutines = peaks[0], peaks[1]
	m.nvcsw = int64(ru1.Nvcsw - ru0.Nvcsw)
	m.nivcsw = int64(ru1.Nivcsw - ru0.Nivcsw)
	m.maxrssKB = int64(ru1.Maxrss)
	return m
}

func findPeer(name string) *peer {
	for _, p := range peers {
		if p.name == name {
			return p
		}
	}
	return nil
}

func emit(kind string, v interface{}) {
	b, _ := json.Marshal(v)
	fmt.Printf("%s %s\n", kind, b)
}

func main() {
	list := flag.Bool("list", false, "list the peers")
	peerName := flag.String("peer", "", "peer")
	workloadName := flag.String("workload", "", "workload")
	submitters := flag.Int("submitters", 0, "submitter goroutines")
	tasks := flag.Uint64("tasks", 0, "tasks in the measured run")
	calibrate := flag.Float64("calibrate", 0, "find the task count for runs of this many seconds")
	completion := flag.String("completion", "striped",
		"how finished tasks are counted: striped (a counter per submitter) or shared (one sync.WaitGroup)")
	flag.Parse()
	switch *completion {
	case "striped":
	case "shared":
		sharedCompletion = true
	default:
		fmt.Fprintf(os.Stderr, "%s: --completion must be striped or shared, not '%s'\n", runnerName, *completion)
		os.Exit(2)
	}
	cores := runtime.NumCPU()
	if *list {
		for _, p := range peers {
			emit("PEER", map[string]interface{}{"runner": runnerName, "peer": p.name, "about": p.about,
				"version": p.version(), "s_independent": 0})
		}
		emit("RUNNER", map[string]interface{}{"runner": runnerName, "papi": "none", "likwid": 0, "cores": cores})
		return
	}
	p, w := findPeer(*peerName), findWorkload(*workloadName)
	if p == nil || w == nil || *submitters <= 0 || (*tasks == 0 && *calibrate <= 0) {
		fmt.Fprintln(os.Stderr, "usage: bench_go --list | --peer P --workload W --submitters S (--tasks N | --calibrate SEC) [--completion striped|shared]")
		os.Exit(2)
	}
	if err := verifyWorkloads(); err != nil {
		fmt.Fprintln(os.Stderr, "bench_go:", err)
		os.Exit(1)
	}
	p.start()
	if *calibrate > 0 {
		// As the C harness: grow fourfold until a probe lasts a third of
		// the target and 2.5 times the one before, so fixed costs are small.
		n, prev := uint64(1), 0.0
		var m measurement
		for {
			m = measure(p, w, *submitters, n)
			if (m.wallS >= *calibrate/3 && prev > 0 && m.wallS >= 2.5*prev) || n >= 1<<32 ||
				(sharedCompletion && n*4 > maxLatch) {
				break
			}
			prev = m.wallS
			n *= 4
		}
		p.finish()
		want := uint64(*calibrate * 1e9 / m.nsPerOp)
		if want < 1 {
			want = 1
		}
		emit("CALIBRATE", map[string]interface{}{"tasks": want, "probe_ns_per_op": m.nsPerOp})
		return
	}
	if sharedCompletion && *tasks > maxLatch {
		fmt.Fprintf(os.Stderr, "%s: --completion shared counts at most %d tasks (a WaitGroup's counter)\n", runnerName, maxLatch)
		os.Exit(2)
	}
	warmup := *tasks / 10
	if warmup == 0 {
		warmup = 1
	}
	measure(p, w, *submitters, warmup)
	resetWorkload()
	m := measure(p, w, *submitters, *tasks)
	// Every task counted exactly once. The WaitGroup cannot be read, but
	// checks itself: its Wait ended, so the count came down to zero, and a
	// Done below zero panics, which fails the run.
	check := "ok"
	if err := checkWorkload(w, *tasks); err != nil {
		check = err.Error()
	} else if !sharedCompletion && doneSum() != *tasks {
		check = "the completion count does not equal the number of tasks"
	}
	// Goroutines beyond main, the sampler, the submitters and, in the
	// shared mode, the latch's watcher.
	workers, source := m.peakGoroutines-1-1-*submitters, "sampled"
	if sharedCompletion {
		workers--
	}
	if p.workersPeak != nil {
		workers, source = p.workersPeak(), "peer"
	}
	p.finish()
	hw := map[string]interface{}{}
	for _, n := range []string{"PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_L1_DCM", "PAPI_L2_DCM", "PAPI_L3_TCM", "PAPI_BR_MSP"} {
		hw[n] = nil
	}
	emit("RESULT", map[string]interface{}{
		"runner": runnerName, "peer": p.name, "workload": w.name, "completion": completionName(),
		"submitters": *submitters, "cores": cores, "tasks": *tasks, "warmup_tasks": warmup,
		"ns_per_op": m.nsPerOp, "wall_s": m.wallS, "cpu_use": m.cpuUse, "peak_threads": m.peakThreads,
		"peak_workers": workers, "workers_source": source, "nvcsw": m.nvcsw, "nivcsw": m.nivcsw,
		"maxrss_kb": m.maxrssKB, "papi": hw, "papi_note": "not read from Go", "papi_scope": "",
		"sde": nil, "wait": sleepWait(w), "check": check,
	})
	if check != "ok" {
		os.Exit(1)
	}
}
