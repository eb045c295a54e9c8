/* The structs a later version will grow (abi_struct.h): the one reader,
 * filler and writer of every library's public structs. */
#include "abi_struct.h"

#include <string.h>

#include "pool_internal.h" /* up__set_error, UP_EINVAL */

int up__struct_size(const char *who, const up__struct_kind *k, const void *s, size_t *size)
{
    size_t n;
    memcpy(&n, s, sizeof n); /* the first member of every such struct */
    if (n == 0)
        up__set_error("%s: %s.size is 0 (never set): fill the struct with %s", who, k->name,
                      k->fill);
    else if (n < k->size_1_0)
        up__set_error("%s: %s.size is %zu, below the %zu bytes of any ultrapool's %s: fill the "
                      "struct with %s",
                      who, k->name, n, k->size_1_0, k->name, k->fill);
    else if (n > UP__STRUCT_MAX)
        up__set_error("%s: %s.size is %zu, no struct's size (never set?): fill the struct "
                      "with %s",
                      who, k->name, n, k->fill);
    else {
        *size = n;
        return UP_OK;
    }
    return UP_EINVAL;
}

int up__struct_in(const char *who, const up__struct_kind *k, const void *in, void *out)
{
    size_t n;
    if (up__struct_size(who, k, in, &n) != UP_OK)
        return UP_EINVAL;
    const unsigned char *b = in;
    for (size_t i = k->size; i < n; i++)
        if (b[i]) {
            up__set_error("%s: %s of %zu bytes sets byte %zu, past the %zu bytes this ultrapool "
                          "knows: the program was built against a newer ultrapool and sets a "
                          "field this one lacks",
                          who, k->name, n, i, k->size);
            return UP_EINVAL;
        }
    size_t known = n < k->size ? n : k->size;
    memcpy(out, in, known);
    memset((unsigned char *)out + known, 0, k->size - known); /* 0: every added field's default */
    memcpy(out, &k->size, sizeof k->size);
    return UP_OK;
}

int up__struct_init(const char *who, const up__struct_kind *k, void *out, size_t size,
                    const void *lib)
{
    if (size < k->size_1_0 || size > UP__STRUCT_MAX) {
        up__set_error("%s: a size of %zu bytes is no %s's (%zu to %d): call it through its "
                      "macro, %s",
                      who, size, k->name, k->size_1_0, UP__STRUCT_MAX, k->fill);
        return UP_EINVAL;
    }
    size_t known = size < k->size ? size : k->size;
    memcpy(out, lib, known);
    memset((unsigned char *)out + known, 0, size - known); /* fields only the program knows */
    memcpy(out, &size, sizeof size);
    return UP_OK;
}

size_t up__struct_out(void *out, size_t size, const void *lib, size_t lib_size)
{
    size_t n = size < lib_size ? size : lib_size;
    memcpy(out, lib, n);
    if (n >= sizeof n)
        memcpy(out, &n, sizeof n);
    return n;
}
