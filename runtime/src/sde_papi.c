/* The pool's counters exported through libsde (PAPI's Software Defined
 * Events). Each event is registered once per process, under the library
 * name ULTRAPOOL, with a callback: PAPI calls it when it reads or starts an
 * event set, so the hot paths of the pool pay nothing. The callback sums
 * up_pool_stats() over the live pools and adds what destroyed pools had
 * counted, under one mutex that only registration, destruction and reads
 * take. */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <sde_lib.h>

#include "pool_internal.h"
#include "sde.h"

typedef struct event {
    const char *name;
    const char *description;
    size_t offset; /* of the field in up_stats */
    int wide;      /* 1: a uint64_t field summed; 0: an unsigned field */
    int peak;      /* a maximum over pools rather than a sum */
    int instant;   /* a level (PAPI_SDE_INSTANT), not a count */
} event;

#define COUNT(n, f, d)                                                                             \
    {                                                                                              \
        n, d, offsetof(up_stats, f), 1, 0, 0                                                       \
    }
static const event events[] = {
    COUNT("tasks_submitted", submitted, "Tasks accepted by the pool's submit calls."),
    COUNT("tasks_executed", executed, "Tasks that ran to completion."),
    COUNT("tasks_helped", helped,
          "Tasks run by waiting submitters: queued ones at a full queue, and their own."),
    COUNT("tasks_inlined", inlined, "Of the helped tasks, the submitters' own."),
    COUNT("overloads", overloads, "Submits refused with UP_EOVERLOAD."),
    COUNT("steals", steals, "Tasks taken from another worker's deque."),
    COUNT("workers_spawned", spawned, "Worker threads started."),
    COUNT("workers_retired", retired, "Worker threads that retired after idling."),
    COUNT("parks", parks, "Times an idle worker went to sleep."),
    COUNT("wakes", wakes, "Wake-ups sent to parked workers."),
    COUNT("tasks_released", released, "Stackless waiting tasks taken to run when released."),
    COUNT("tasks_cancelled", cancelled, "Stackless waiting tasks a destroy released."),
    COUNT("tasks_resumed", tasks_resumed, "Stackful tasks resumed after parking."),
    {"tasks_waiting", "Stackless tasks waiting on events and timers now (summed over pools).",
     offsetof(up_stats, waiting), 1, 0, 1},
    {"tasks_parked", "Stackful tasks parked now (summed over pools).",
     offsetof(up_stats, tasks_parked), 1, 0, 1},
    {"workers", "Worker threads now (summed over pools).", offsetof(up_stats, workers), 0, 0, 1},
    {"workers_peak", "Most worker threads one pool ever had.", offsetof(up_stats, workers_peak), 0,
     1, 1},
};
#define NEVENTS (sizeof events / sizeof events[0])

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct up_pool **live;      /* (mu) */
static size_t nlive, cap;          /* (mu) */
static long long retired[NEVENTS]; /* (mu) final counts of destroyed pools */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static long long field(const up_stats *st, const event *e)
{
    const char *base = (const char *)st + e->offset;
    return e->wide ? (long long)*(const uint64_t *)base : (long long)*(const unsigned *)base;
}

static long long combine(const event *e, long long acc, long long v)
{
    if (e->peak)
        return v > acc ? v : acc;
    return acc + v;
}

static long long read_event(void *param)
{
    size_t i = (size_t)(uintptr_t)param;
    const event *e = &events[i];
    pthread_mutex_lock(&mu);
    long long v = e->instant && !e->peak ? 0 : retired[i];
    for (size_t k = 0; k < nlive; k++) {
        up_stats st;
        up_pool_stats(live[k], &st);
        v = combine(e, v, field(&st, e));
    }
    pthread_mutex_unlock(&mu);
    return v;
}

/* The descriptions stay in the table above and are not handed to
 * papi_sde_describe_counter(): libsde 7.0 loses the name it copies there
 * (a leak LeakSanitizer reports in every program using the pool). */
static void register_events(void)
{
    papi_handle_t h = papi_sde_init("ULTRAPOOL");
    for (size_t i = 0; i < NEVENTS; i++) {
        int mode = PAPI_SDE_RO | (events[i].instant ? PAPI_SDE_INSTANT : PAPI_SDE_DELTA);
        papi_sde_register_counter_cb(h, events[i].name, mode, PAPI_SDE_long_long, read_event,
                                     (void *)(uintptr_t)i);
    }
}

void up__sde_register(struct up_pool *p)
{
    pthread_once(&once, register_events);
    pthread_mutex_lock(&mu);
    if (nlive == cap) {
        size_t ncap = cap ? 2 * cap : 8;
        struct up_pool **n = realloc(live, ncap * sizeof *n);
        if (!n) { /* the pool works on; only its SDE view is lost */
            pthread_mutex_unlock(&mu);
            return;
        }
        live = n;
        cap = ncap;
    }
    live[nlive++] = p;
    pthread_mutex_unlock(&mu);
}

void up__sde_unregister(struct up_pool *p)
{
    pthread_mutex_lock(&mu);
    for (size_t k = 0; k < nlive; k++) {
        if (live[k] != p)
            continue;
        up_stats st;
        up_pool_stats(p, &st);
        for (size_t i = 0; i < NEVENTS; i++)
            if (!events[i].instant || events[i].peak)
                retired[i] = combine(&events[i], retired[i], field(&st, &events[i]));
        live[k] = live[--nlive];
        break;
    }
    pthread_mutex_unlock(&mu);
}
