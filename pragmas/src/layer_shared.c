/* The layer interface (runtime/layer/up_layer.h) for the shared library
 * libultrapool_par.so only. The shared runtime hides its up__ functions, so
 * these definitions forward to the names it exports for this purpose
 * (runtime/layer/up_layer_abi.h). They are hidden here too: the parallel
 * library exports only what <ultrapool/parallel.h> declares. The static
 * parallel library does not contain this file; it calls the runtime's
 * functions directly. */
#include <stdarg.h>

#include "up_layer.h"
#include "up_layer_abi.h"

int up__submit_copy_nogrow(up_pool *p, up_fn fn, const void *payload, size_t size)
{
    return up_layer_submit_copy_nogrow(p, fn, payload, size);
}

unsigned up__pool_workers(const up_pool *p) { return up_layer_pool_workers(p); }

int up__pool_stopped(const up_pool *p) { return up_layer_pool_stopped(p); }

unsigned up__pool_queued(up_pool *p, unsigned limit) { return up_layer_pool_queued(p, limit); }

void up__set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    up_layer_set_error_v(fmt, ap);
    va_end(ap);
}

unsigned up__pool_spin(const up_pool *p) { return up_layer_pool_spin(p); }

up__parker *up__self_parker(void) { return up_layer_self_parker(); }

int up__waiter_park(up_pool *p, up__parker *pk, uint64_t timeout_ns)
{
    return up_layer_waiter_park(p, pk, timeout_ns);
}

void up__waiter_wake(up__parker *pk) { up_layer_waiter_wake(pk); }

int up__help_enter(void) { return up_layer_help_enter(); }

void up__help_leave(void) { up_layer_help_leave(); }

int up__worker_at_loop(const up_pool *p) { return up_layer_worker_at_loop(p); }

void up__return_expected(up_pool *p, int n) { up_layer_return_expected(p, n); }

void up__return_mark(up_pool *p) { up_layer_return_mark(p); }

void up__set_cancel_hook(int (*fn)(void)) { up_layer_set_cancel_hook(fn); }

void up__set_pinned_hook(int (*fn)(void)) { up_layer_set_pinned_hook(fn); }

int up__parse_bool(const char *s, int *out) { return up_layer_parse_bool(s, out); }

void up__set_print_hook(void (*fn)(FILE *f)) { up_layer_set_print_hook(fn); }

const char *up__env(const char *name) { return up_layer_env(name); }

int up__struct_in(const char *who, const up__struct_kind *k, const void *in, void *out)
{
    return up_layer_struct_in(who, k, in, out);
}
