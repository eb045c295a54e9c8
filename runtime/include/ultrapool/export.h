/** @file
 * ultrapool: the mark of the public ABI.
 *
 * The libraries are compiled with hidden symbol visibility, so that only
 * what the public headers declare is exported from libultrapool.so and
 * libultrapool_par.so; every internal function (up__*) stays inside its
 * library. UP_API marks each public declaration as exported. It is the same
 * whether the library is being built or used, static or shared: on ELF and
 * Mach-O a default-visibility declaration is what both sides need. */
#ifndef ULTRAPOOL_EXPORT_H
#define ULTRAPOOL_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define UP_API __attribute__((visibility("default")))
#else
#define UP_API
#endif

#endif
