/* The deque's instance for the pool's tasks (records of up__task). The
 * algorithm, its invariant and why its orderings hold are in deque.h,
 * where the operations are inline so that each record shape gets code
 * with its header size known. */
#include "deque.h"

int up__deque_init(up__deque *d, int64_t capacity)
{
    return up__deque_init_records(d, capacity, UP__TASK_HDR);
}

int up__deque_push(up__deque *d, const up__task *t)
{
    return up__deque_push_record(d, t, UP__TASK_HDR);
}

int up__deque_push_sb(up__deque *d, const up__task *t)
{
    return up__deque_push_record_as(d, t, UP__TASK_HDR, 1);
}

int up__deque_pop(up__deque *d, up__task *out)
{
    return up__deque_pop_record(d, out, UP__TASK_HDR);
}

int up__deque_steal(up__deque *d, up__task *out)
{
    return up__deque_steal_record(d, out, UP__TASK_HDR);
}
