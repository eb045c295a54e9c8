/* likwid Marker API regions around each measured run, so `likwid-perfctr
 * -m -g GROUP runner ...` reports the run alone. Real when the build found
 * likwid (UP_HAVE_LIKWID) and the program runs under likwid-perfctr (which
 * sets LIKWID_MODE); otherwise every call does nothing. */
#ifndef UP_BENCH_MARKERS_H
#define UP_BENCH_MARKERS_H

#if defined(UP_HAVE_LIKWID)
#define LIKWID_PERFMON
#include <likwid-marker.h>
#include <stdlib.h>

static int markers_on;

static inline void markers_init(void)
{
    markers_on = getenv("LIKWID_MODE") != NULL;
    if (markers_on) {
        LIKWID_MARKER_INIT;
        LIKWID_MARKER_REGISTER("run");
    }
}
static inline void markers_start(void)
{
    if (markers_on)
        LIKWID_MARKER_START("run");
}
static inline void markers_stop(void)
{
    if (markers_on)
        LIKWID_MARKER_STOP("run");
}
static inline void markers_close(void)
{
    if (markers_on)
        LIKWID_MARKER_CLOSE;
}
static inline int markers_built(void) { return 1; }
#else
static inline void markers_init(void) {}
static inline void markers_start(void) {}
static inline void markers_stop(void) {}
static inline void markers_close(void) {}
static inline int markers_built(void) { return 0; }
#endif

#endif
