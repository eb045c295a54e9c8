/* The file an image whose name contains a given text was loaded from (the
 * OpenMP backend module a test selected, for one), as the dynamic loader
 * reports it. Header-only, so that the consumer project built against
 * the installed tree (tests/consumer) uses it too. */
#ifndef UP_TEST_LOADED_IMAGE_H
#define UP_TEST_LOADED_IMAGE_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#if defined(__linux__) || defined(__FreeBSD__)
#include <link.h> /* dl_iterate_phdr: needs _GNU_SOURCE on glibc */

typedef struct loaded_image_query {
    const char *needle;
    char *out;
    size_t size;
} loaded_image_query;

static inline int loaded_image_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    loaded_image_query *q = arg;
    if (info->dlpi_name && strstr(info->dlpi_name, q->needle)) {
        snprintf(q->out, q->size, "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

/* Writes the file into out, "" when no image matches or the loader cannot
 * tell (other systems). */
static inline void loaded_image(const char *needle, char *out, size_t size)
{
    loaded_image_query q = {needle, out, size};
    out[0] = '\0';
    dl_iterate_phdr(loaded_image_visit, &q);
}
#else
static inline void loaded_image(const char *needle, char *out, size_t size)
{
    (void)needle, (void)size;
    out[0] = '\0';
}
#endif

#endif
