// Command massive is experiments/massive/massive.c with goroutines: it
// launches N goroutines from one goroutine that all wait on one channel,
// holds them, closes the channel and waits until every one has run, with
// the same status lines, EXECUTION DELAY lines, memory figure, checks and
// RESULT line as the C program, so that the driver reads both alike.
//
// Standard library only. Exit status: 0 when every goroutine ran exactly
// once, 1 when one was lost, duplicated or panicked, 2 for bad options or
// too little memory.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A goroutine blocked on a channel is its stack (2 KiB to start) plus its
// descriptor and the channel's wait record; the seed measured about
// 3 KiB. The memory check uses that figure.
const expectedBytes = 3 * 1024

type counter struct {
	v atomic.Uint64
	_ [56]byte // its own cache line
}

var (
	t0                        time.Time
	launched, started, exited counter
	panicked                  counter
	tickCount, tLate          atomic.Int64
	// The worst lateness during the launch and hold, and during the drain.
	tickWorst [2]atomic.Int64
	phase     atomic.Int32
	printMu   sync.Mutex
)

func countStr(v uint64) string {
	s := strconv.FormatUint(v, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func bytesStr(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	u := 0
	for b >= 1024 && u < 4 {
		b /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%.0f %s", b, units[u])
	}
	return fmt.Sprintf("%.1f %s", b, units[u])
}

func secsStr(s float64) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%.1fs", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", int(s/60), int(math.Mod(s, 60)))
	}
	return fmt.Sprintf("%dh%02dm%02ds", int(s/3600), int(math.Mod(s/60, 60)), int(math.Mod(s, 60)))
}

func say(format string, a ...interface{}) {
	printMu.Lock()
	defer printMu.Unlock()
	fmt.Printf("%8s %s\n", secsStr(time.Since(t0).Seconds()), fmt.Sprintf(format, a...))
}

func rssBytes() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

func meminfo(field string) uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, field+":") {
			kib, _ := strconv.ParseUint(strings.Fields(line[len(field)+1:])[0], 10, 64)
			return kib * 1024
		}
	}
	return 0
}

func kernelBytes() uint64 { return meminfo("KernelStack") + meminfo("PageTables") }

// parseCount accepts a whole number >= 1, plainly or as 1e8, up to 2^53.
func parseCount(s string) (uint64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 1) || v > 9007199254740992 || v != math.Floor(v) {
		return 0, false
	}
	return uint64(v), true
}

func bad(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "massive-go: "+format+"\n(massive-go -help lists the options)\n", a...)
	os.Exit(2)
}

func tick(period time.Duration, prev *time.Time) {
	now := time.Now()
	gap := now.Sub(*prev)
	*prev = now
	tickCount.Add(1)
	late := gap - period
	if late <= 0 {
		return
	}
	draining, what := 0, "launch"
	if phase.Load() >= phDrain {
		draining, what = 1, "drain"
	}
	if int64(late) > tickWorst[draining].Load() {
		tickWorst[draining].Store(int64(late))
	}
	if late > 10*time.Millisecond {
		tLate.Add(1)
		say("EXECUTION DELAY: %.3f s between ticks, expected %.3f s (%.0f ms late, %s)",
			gap.Seconds(), period.Seconds(), float64(late)/1e6, what)
	}
}

// waitCount polls until c reaches target; false when it did not move for stall.
func waitCount(c *counter, target uint64, stall time.Duration) (time.Time, bool) {
	last, moved := c.v.Load(), time.Now()
	for {
		v, now := c.v.Load(), time.Now()
		if v >= target {
			return now, true
		}
		if v != last {
			last, moved = v, now
		} else if now.Sub(moved) > stall {
			return now, false
		}
		time.Sleep(200 * time.Microsecond)
	}
}

const (
	phLaunch = iota
	phDrain
	phDone
)

func main() {
	nArg := flag.String("n", "1e7", "goroutines that wait, 1e7 or 10000000")
	tickerMs := flag.Int("ticker-ms", 1000, "period of the ticker goroutine")
	statusMs := flag.Int("status-ms", 1000, "period of the status lines")
	holdMs := flag.Int("hold-ms", 1500, "how long the goroutines are held before the release")
	stallS := flag.Int("stall-s", 60, "give up when no goroutine starts or exits for this long")
	reserveMib := flag.Int("reserve-mib", 0,
		"stop launching when MemAvailable falls below this (0: the larger of 1 GiB and a tenth of MemTotal)")
	flag.Parse()
	if flag.NArg() > 0 {
		bad("unexpected argument '%s'", flag.Arg(0))
	}
	n, ok := parseCount(*nArg)
	if !ok {
		bad("-n: a whole number >= 1 (1e7 and 10000000 both work), not '%s'", *nArg)
	}
	for _, v := range []int{*tickerMs, *statusMs, *holdMs, *stallS, *reserveMib} {
		if v < 0 || v > 3600000 {
			bad("periods and sizes: 0 to 3600000, not %d", v)
		}
	}
	if *tickerMs < 1 || *statusMs < 1 {
		bad("-ticker-ms and -status-ms: at least 1")
	}
	total, avail := meminfo("MemTotal"), meminfo("MemAvailable")
	floor := uint64(*reserveMib) << 20
	if floor == 0 {
		floor = total / 10
		if floor < 1<<30 {
			floor = 1 << 30
		}
	}
	per := float64(expectedBytes + 1)
	budget := 0.0
	if avail > floor {
		budget = float64(avail - floor)
	}
	if avail > 0 && float64(n)*per > budget {
		fit := budget / per
		mag := 1.0
		if fit >= 1 {
			mag = math.Pow(10, math.Floor(math.Log10(fit)))
		}
		fmt.Fprintf(os.Stderr, "massive-go: -n %s needs about %s (%.0f bytes per goroutine), more than the\n"+
			"%s this machine can give (MemAvailable %s less a reserve of %s).\nTry -n %.0fe%.0f or less.\n",
			countStr(n), bytesStr(float64(n)*per), per, bytesStr(budget), bytesStr(float64(avail)),
			bytesStr(float64(floor)), math.Floor(fit/mag), math.Log10(mag))
		os.Exit(2)
	}
	// The check array is touched now, so that its pages are in the RSS
	// before the baseline.
	hits := make([]byte, n)
	for i := range hits {
		hits[i] = 0
	}
	period := time.Duration(*tickerMs) * time.Millisecond
	t0 = time.Now()
	fmt.Printf("massive goroutines: %s goroutines waiting on one channel, launched from one goroutine; "+
		"ticker %d ms, status every %d ms (%s, GOMAXPROCS %d)\n",
		countStr(n), *tickerMs, *statusMs, runtime.Version(), runtime.GOMAXPROCS(0))

	stopTicker := make(chan struct{})
	tickerDone := make(chan struct{})
	go func() {
		defer close(tickerDone)
		t := time.NewTicker(period)
		defer t.Stop()
		prev := time.Now()
		for {
			select {
			case <-t.C:
				tick(period, &prev)
			case <-stopTicker:
				return
			}
		}
	}()
	var peakRss, peakWaiting uint64
	var peakL, peakS, peakX float64
	statusDone := make(chan struct{})
	go func() {
		defer close(statusDone)
		t := time.NewTicker(time.Duration(*statusMs) * time.Millisecond)
		defer t.Stop()
		prevT := time.Now()
		var prevL, prevS, prevX uint64
		for phase.Load() != phDone {
			now := <-t.C
			l, s, x, rss := launched.v.Load(), started.v.Load(), exited.v.Load(), rssBytes()
			dt := now.Sub(prevT).Seconds()
			lr, sr, xr := float64(l-prevL)/dt, float64(s-prevS)/dt, float64(x-prevX)/dt
			waiting := uint64(0)
			if s > x {
				waiting = s - x
			}
			if rss > peakRss {
				peakRss = rss
			}
			if waiting > peakWaiting {
				peakWaiting = waiting
			}
			peakL, peakS, peakX = math.Max(peakL, lr), math.Max(peakS, sr), math.Max(peakX, xr)
			switch phase.Load() {
			case phLaunch:
				say("waiting: %s launched: %s launch-rate: %s/s started: %s start-rate: %s/s rss: %s",
					countStr(waiting), countStr(l), countStr(uint64(lr)), countStr(s), countStr(uint64(sr)),
					bytesStr(float64(rss)))
			case phDrain:
				w := uint64(0)
				if l > x {
					w = l - x
				}
				say("waiting: %s exited: %s exit-rate: %s/s rss: %s", countStr(w), countStr(x),
					countStr(uint64(xr)), bytesStr(float64(rss)))
			}
			prevT, prevL, prevS, prevX = now, l, s, x
		}
	}()

	release := make(chan struct{})
	waiter := func(i uint64) {
		defer func() {
			if r := recover(); r != nil {
				panicked.v.Add(1)
			}
		}()
		started.v.Add(1)
		<-release
		hits[i]++
		exited.v.Add(1)
	}
	say("Launching %s goroutines...", countStr(n))
	rss0, kern0 := rssBytes(), kernelBytes()
	tLaunch := time.Now()
	why := ""
	var i uint64
	for i = 0; i < n; i++ {
		if i&65535 == 0 {
			if a := meminfo("MemAvailable"); a > 0 && a < floor {
				why = fmt.Sprintf("memory: MemAvailable fell to %s, below the %s reserve",
					bytesStr(float64(a)), bytesStr(float64(floor)))
				break
			}
		}
		go waiter(i)
		launched.v.Store(i + 1)
	}
	count := i
	tLaunched := time.Now()
	if count < n {
		say("Launch stopped at %s of %s goroutines: %s", countStr(count), countStr(n), why)
	}
	stall := time.Duration(*stallS) * time.Second
	tStarted, okStart := waitCount(&started, count, stall)
	if !okStart {
		say("Gave up: no goroutine reached its wait for %d s", *stallS)
	}
	rss1, kern1 := rssBytes(), kernelBytes()
	perTask := (float64(rss1) - float64(rss0)) / float64(count)
	kernTask := (float64(kern1) - float64(kern0)) / float64(count)
	launchS := tLaunched.Sub(tLaunch).Seconds()
	startS := tStarted.Sub(tLaunch).Seconds()
	say("Launch complete: %s goroutines in %.3f s; all waiting after %.3f s", countStr(count), launchS, startS)
	say("Memory: RSS %s -> %s, %.1f bytes per waiting goroutine (kernel stacks and page tables: "+
		"%.1f bytes per goroutine, system-wide)", bytesStr(float64(rss0)), bytesStr(float64(rss1)),
		perTask, kernTask)
	if okStart {
		say("Holding them for %.1f s (ticker events)", float64(*holdMs)/1000)
		time.Sleep(time.Duration(*holdMs) * time.Millisecond)
	}
	phase.Store(phDrain)
	say("Releasing...")
	tRelease := time.Now()
	close(release)
	tSet := time.Now()
	tDrained, okDrain := waitCount(&exited, count, stall)
	okDrain = okDrain && okStart
	releaseS := tSet.Sub(tRelease).Seconds()
	drainS := tDrained.Sub(tRelease).Seconds()
	x := exited.v.Load()
	if okDrain {
		say("Drain complete: %s exited in %.3f s (the release call took %.3f s)", countStr(x), drainS, releaseS)
	} else {
		say("Gave up: no goroutine exited for %d s", *stallS)
	}
	phase.Store(phDone)
	<-statusDone
	close(stopTicker)
	<-tickerDone
	var lost, dup uint64
	for k := uint64(0); k < count; k++ {
		switch {
		case hits[k] == 0:
			lost++
		case hits[k] > 1:
			dup++
		}
	}
	for k := count; k < n; k++ {
		if hits[k] != 0 {
			dup++
		}
	}
	launchRate, startRate, exitRate := 0.0, 0.0, 0.0
	if launchS > 0 {
		launchRate = float64(count) / launchS
	}
	if startS > 0 && okStart {
		startRate = float64(count) / startS
	}
	if drainS > 0 && okDrain {
		exitRate = float64(x) / drainS
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil && uint64(ru.Maxrss)*1024 > peakRss {
		peakRss = uint64(ru.Maxrss) * 1024
	}
	if okStart && count > peakWaiting {
		peakWaiting = count
	}
	peakL, peakS, peakX = math.Max(peakL, launchRate), math.Max(peakS, startRate), math.Max(peakX, exitRate)
	worstLaunch, worstDrain := float64(tickWorst[0].Load())/1e6, float64(tickWorst[1].Load())/1e6
	worstMs := math.Max(worstLaunch, worstDrain)
	totalS := time.Since(t0).Seconds()
	say("Maxima observed: rss %s, waiting %s, launch-rate %s/s, start-rate %s/s, exit-rate %s/s, ticker late %.1f ms (launch and hold %.1f ms, drain %.1f ms)",
		bytesStr(float64(peakRss)), countStr(peakWaiting), countStr(uint64(peakL)), countStr(uint64(peakS)),
		countStr(uint64(peakX)), worstMs, worstLaunch, worstDrain)
	p := panicked.v.Load()
	say("launched: %s exited: %s ticks: %d (%d late) lost: %d duplicated: %d panicked: %d",
		countStr(count), countStr(x), tickCount.Load(), tLate.Load(), lost, dup, p)
	fail := lost > 0 || dup > 0 || p > 0 || !okDrain
	if fail {
		say("massive goroutines FAILED")
	} else {
		say("massive goroutines completed successfully")
	}
	fmt.Printf("RESULT mode=goroutines n=%d launched=%d bytes_per_task=%.1f kernel_bytes_per_task=%.1f "+
		"launch_per_s=%.0f start_per_s=%.0f exit_per_s=%.0f launch_s=%.4f release_s=%.4f drain_s=%.4f "+
		"worst_tick_ms=%.2f worst_tick_launch_ms=%.2f worst_tick_drain_ms=%.2f ticks=%d total_s=%.3f lost=%d duplicated=%d panicked=%d peak_rss_bytes=%d stop=\"%s\"\n",
		n, count, perTask, kernTask, launchRate, startRate, exitRate, launchS, releaseS, drainS,
		worstMs, worstLaunch, worstDrain, tickCount.Load(), totalS, lost, dup, p, peakRss, strings.ReplaceAll(why, "\"", "'"))
	if fail {
		os.Exit(1)
	}
}
