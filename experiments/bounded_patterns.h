/* Ways to run n tasks with at most `limit` of them active at once, all
 * behind one signature so the same driver can run each: the plain-C
 * patterns (bounded_plain.c) and ultrapool's tools (bounded_up.c). A run
 * includes whatever the pattern sets up and tears down per batch (threads
 * of a fixed pool, a group, a channel); a pool that stands for the runtime
 * itself (ultrapool's shared pool) is created once by the driver. */
#ifndef UP_BOUNDED_PATTERNS_H
#define UP_BOUNDED_PATTERNS_H

#include <ultrapool/pool.h>

/* A task returns 0, or an error the group patterns report. */
typedef int (*bp_task)(void *arg);

/* Slots of the task ring of the fixed-thread patterns (plain and over an
 * ultrapool channel): the size the micro benchmark's textbook pool uses.
 * The limit is the number of threads, not the ring. */
#define BP_RING 1024

typedef struct bp_pattern {
    const char *name;
    const char *kind; /* "plain C" or "ultrapool" */
    const char *what; /* one line: how the limit is enforced */
    /* Runs n calls of task(arg), at most limit at once; 0, a task's error
     * (group patterns), or -1 when the pattern itself failed. */
    int (*run)(unsigned n, unsigned limit, bp_task task, void *arg);
} bp_pattern;

extern const bp_pattern bp_plain_patterns[];
extern const int bp_plain_count;
extern const bp_pattern bp_up_patterns[];
extern const int bp_up_count;

/* The shared pool the ultrapool group and semaphore patterns run on. */
void bp_set_shared_pool(up_pool *p);

#endif
