/* The exported names of the layer interface (see layer/up_layer_abi.h):
 * thin calls into the internal functions, for libultrapool_par.so. */
#include <stdio.h>

#include "../layer/up_layer.h"
#include "../layer/up_layer_abi.h"

int up_layer_submit_copy_nogrow(up_pool *p, up_fn fn, const void *payload, size_t size)
{
    return up__submit_copy_nogrow(p, fn, payload, size);
}

unsigned up_layer_pool_workers(const up_pool *p) { return up__pool_workers(p); }

int up_layer_pool_stopped(const up_pool *p) { return up__pool_stopped(p); }

unsigned up_layer_pool_queued(up_pool *p, unsigned limit) { return up__pool_queued(p, limit); }

void up_layer_set_error_v(const char *fmt, va_list ap)
{
    /* The runtime's message buffer is 256 bytes; this one is as long, so
     * the text is cut at the same length as a direct call would cut it. */
    char msg[256];
    vsnprintf(msg, sizeof msg, fmt, ap);
    up__set_error("%s", msg);
}

unsigned up_layer_pool_spin(const up_pool *p) { return up__pool_spin(p); }

void *up_layer_self_parker(void) { return up__self_parker(); }

int up_layer_waiter_park(up_pool *p, void *pk, uint64_t timeout_ns)
{
    return up__waiter_park(p, pk, timeout_ns);
}

void up_layer_waiter_wake(void *pk) { up__waiter_wake(pk); }

int up_layer_help_enter(void) { return up__help_enter(); }

void up_layer_help_leave(void) { up__help_leave(); }

int up_layer_worker_at_loop(const up_pool *p) { return up__worker_at_loop(p); }

void up_layer_return_expected(up_pool *p, int n) { up__return_expected(p, n); }

void up_layer_return_mark(up_pool *p) { up__return_mark(p); }

void up_layer_set_cancel_hook(int (*fn)(void)) { up__set_cancel_hook(fn); }

void up_layer_set_pinned_hook(int (*fn)(void)) { up__set_pinned_hook(fn); }

int up_layer_parse_bool(const char *s, int *out) { return up__parse_bool(s, out); }

void up_layer_set_print_hook(void (*fn)(FILE *f)) { up__set_print_hook(fn); }

const char *up_layer_env(const char *name) { return up__env(name); }

int up_layer_struct_in(const char *who, const struct up__struct_kind *k, const void *in, void *out)
{
    return up__struct_in(who, k, in, out);
}
