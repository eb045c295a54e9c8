/* The layer interface of up_layer.h as the shared runtime exports it.
 *
 * The libraries are built with hidden visibility, and no up__ symbol
 * leaves a shared library. The static parallel library reaches the
 * functions of up_layer.h directly (a static link ignores visibility); the
 * shared one, libultrapool_par.so, links libultrapool.so and cannot see
 * them. So libultrapool.so exports each under an up_layer_ name, and
 * pragmas/src/layer_shared.c (built into libultrapool_par.so only)
 * defines the up__ names on top of these.
 *
 * This is an internal ABI between the two libraries of one release: no
 * installed header declares it, and it may change in any release.
 * libultrapool_par.so.N needs the libultrapool.so.N of the same version.
 * So these names are in the version node ULTRAPOOL_INTERNAL_<version>,
 * named after the exact release (cmake/Abi.cmake), which
 * libultrapool_par.so and libgomp.so.1 ask for: the loader refuses to pair
 * them with a libultrapool.so of another release. runtime/CMakeLists.txt
 * reads the names for that node from this file: one declaration each,
 * "UP_API <type> up_layer_<name>(...);". */
#ifndef UP_LAYER_ABI_H
#define UP_LAYER_ABI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <ultrapool/pool.h>

UP_API int up_layer_submit_copy_nogrow(up_pool *p, up_fn fn, const void *payload, size_t size);
UP_API unsigned up_layer_pool_workers(const up_pool *p);
UP_API int up_layer_pool_stopped(const up_pool *p);
UP_API unsigned up_layer_pool_queued(up_pool *p, unsigned limit);
/* up__set_error with its arguments already gathered. */
UP_API void up_layer_set_error_v(const char *fmt, va_list ap);
/* The waits of the layer (up_layer.h: up__pool_spin ... up__waiter_wake). */
UP_API unsigned up_layer_pool_spin(const up_pool *p);
UP_API void *up_layer_self_parker(void);
UP_API int up_layer_waiter_park(up_pool *p, void *pk, uint64_t timeout_ns);
UP_API void up_layer_waiter_wake(void *pk);
/* The one bound on helping depth (help.h). */
UP_API int up_layer_help_enter(void);
UP_API void up_layer_help_leave(void);
/* up_layer.h: up__worker_at_loop. */
UP_API int up_layer_worker_at_loop(const up_pool *p);
/* up_layer.h: up__return_expected and up__return_mark. */
UP_API void up_layer_return_expected(up_pool *p, int n);
UP_API void up_layer_return_mark(up_pool *p);
/* up_cancelled()'s taskgroup half (up_layer.h: up__set_cancel_hook). */
UP_API void up_layer_set_cancel_hook(int (*fn)(void));
/* up_layer.h: up__set_pinned_hook. */
UP_API void up_layer_set_pinned_hook(int (*fn)(void));
/* up_layer.h: up__parse_bool and up__set_print_hook. */
UP_API int up_layer_parse_bool(const char *s, int *out);
UP_API void up_layer_set_print_hook(void (*fn)(FILE *f));
/* up_layer.h: up__env. */
UP_API const char *up_layer_env(const char *name);
/* up_layer.h: up__struct_in (abi_struct.h). */
struct up__struct_kind;
UP_API int up_layer_struct_in(const char *who, const struct up__struct_kind *k, const void *in,
                              void *out);

#endif
