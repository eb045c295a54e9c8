/* A task as the runtime stores it: a function and either one pointer
 * argument or a small payload copied by value. It fits, with the queue's
 * sequence word, in one cache line, so a submit never allocates. */
#ifndef UP_TASK_H
#define UP_TASK_H

#include <stdint.h>
#include <string.h>

#include <ultrapool/pool.h>

#define UP__TASK_WORDS (UP_PAYLOAD_MAX / 8)

typedef struct up__task {
    up_fn fn;
    uint64_t size; /* 0: words[0] holds the argument pointer; else payload bytes */
    uint64_t words[UP__TASK_WORDS];
} up__task;

_Static_assert(UP_PAYLOAD_MAX % 8 == 0, "payload is stored as whole words");
_Static_assert(sizeof(up__task) <= 56, "a task and its sequence word must fit one cache line");

static inline void up__task_set_arg(up__task *t, up_fn fn, void *arg)
{
    t->fn = fn;
    t->size = 0;
    t->words[0] = (uint64_t)(uintptr_t)arg;
}

static inline void up__task_set_copy(up__task *t, up_fn fn, const void *payload, size_t size)
{
    t->fn = fn;
    t->size = size;
    memcpy(t->words, payload, size);
}

/* Runs a task. A copied payload is handed to the function as a pointer to
 * an aligned copy on this stack, valid while the function runs. */
static inline void up__task_run(const up__task *t)
{
    if (t->size == 0) {
        t->fn((void *)(uintptr_t)t->words[0]);
    } else {
        _Alignas(16) uint64_t copy[UP__TASK_WORDS];
        memcpy(copy, t->words, (size_t)t->size);
        t->fn(copy);
    }
}

#endif
