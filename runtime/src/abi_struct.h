/* The structs a later version will grow: reading and writing them across
 * versions, in one place for every library (the runtime, the MPI mode,
 * and the parallel layer through up_layer.h).
 *
 * Every public struct a program allocates and passes to a library
 * (up_config, up_stats, up_mpi_opts, up_mpi_report, up_for_opts,
 * up_task_opts, up_taskloop_opts) begins with size_t size: sizeof the
 * struct as the program's compiler saw it, set by the call or macro that
 * fills it (up_config_init, UP_FOR_OPTS ...). The program and the library
 * may have been built against different versions, so the two sizes may
 * differ; as with Linux's extensible system call structs (openat2's
 * open_how, sched_setattr's sched_attr):
 *
 * - an input (the library reads it) is read with up__struct_in into a
 *   struct of the library's own size. A size below the 1.0 layout's (0
 *   among them: the size never set) or above UP__STRUCT_MAX is refused
 *   with UP_EINVAL and a message naming the call that fills it. A smaller
 *   size is a program built against an older version: the fields it lacks
 *   read as 0. A larger one is a program built against a newer version:
 *   accepted when every byte past the library's size is 0 (the newer
 *   fields left at their defaults), else refused with UP_EINVAL ("built
 *   against a newer ultrapool"), never silently ignored;
 * - an output (the library writes it) is written with up__struct_out: the
 *   smaller of the two sizes, never a byte past the program's struct, and
 *   size set to what was written;
 * - an init call (up_config_init, up_mpi_opts_init) fills the program's
 *   size with up__struct_init: the library's defaults, 0 in the bytes past
 *   the library's size, and size set to the program's size, so that a
 *   field the program then sets and the library lacks is refused, not
 *   ignored.
 *
 * The invariant that makes this safe, for every version after 1.0: a
 * field is only ever added at the end of its struct, at an offset at or
 * past the struct's 1.0 sizeof (never into 1.0's trailing padding: add a
 * named member for that padding first), and 0 is its default, the value
 * that means "as before the field existed". Nothing is removed, moved or
 * retyped. The 1.0 layout's end (UP__STRUCT_KIND's last_1_0) never
 * changes. docs/design.md, "Structs that grow". */
#ifndef UP_ABI_STRUCT_H
#define UP_ABI_STRUCT_H

#include <stddef.h>

/* One growable struct, as a library that reads it sees it. */
typedef struct up__struct_kind {
    const char *name; /* the type: "up_for_opts" */
    const char *fill; /* what fills one: "UP_FOR_OPTS(...)", "up_config_init()" */
    size_t size_1_0;  /* the end of its last 1.0 field: no program passes less */
    size_t size;      /* sizeof the type in this library */
} up__struct_kind;

/* The kind of type, whose last field in the 1.0 layout is last_1_0 (that
 * name never changes, whatever is added after it), made by fill_with. */
#define UP__STRUCT_KIND(type, last_1_0, fill_with)                                                 \
    {                                                                                              \
        .name = #type, .fill = fill_with,                                                          \
        .size_1_0 = offsetof(type, last_1_0) + sizeof(((type *)0)->last_1_0), .size = sizeof(type) \
    }

/* The most bytes a size field may say: a larger one is no struct's size
 * but garbage (a size never set), and the library must not read or write
 * that far. Linux's bound for the same purpose is a page. */
#define UP__STRUCT_MAX 4096

/* The size field of s, a struct of kind k, into *size: UP_OK, or UP_EINVAL
 * with "who: ..." in up_last_error() when it is below k's 1.0 layout (0
 * included) or above UP__STRUCT_MAX. For an output reached through an
 * input (up_mpi_opts.report), whose size the program sets. */
int up__struct_size(const char *who, const up__struct_kind *k, const void *s, size_t *size);

/* Reads the program's in, a struct of kind k, into out, a struct of the
 * library's size (k->size): the bytes both know copied, the rest of out 0,
 * out's size set to k->size. UP_EINVAL, out untouched, with "who: ..." in
 * up_last_error(): in's size refused by up__struct_size, or in is larger
 * than k->size and a byte past k->size is not 0. in must not be NULL. */
int up__struct_in(const char *who, const up__struct_kind *k, const void *in, void *out);

/* An init call: fills out, the program's struct of size bytes, from lib,
 * the library's filled struct of kind k: min(size, k->size) bytes of lib,
 * 0 past them, and out's size set to size. UP_EINVAL, out untouched, when
 * size is below k's 1.0 layout or above UP__STRUCT_MAX. out must not be
 * NULL. */
int up__struct_init(const char *who, const up__struct_kind *k, void *out, size_t size,
                    const void *lib);

/* An output: writes min(size, lib_size) bytes of lib, the library's
 * struct of lib_size bytes, to out, the program's struct of size bytes,
 * and sets out's size field to that count when it holds one (a count
 * below sizeof(size_t) writes only that part of it). Nothing past size
 * bytes is written; nothing at all for a size of 0. Returns the count. */
size_t up__struct_out(void *out, size_t size, const void *lib, size_t lib_size);

#endif
