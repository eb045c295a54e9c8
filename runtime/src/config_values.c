/* The values of configuration variables, read and written: whole
 * numbers, durations with a unit, sizes with a binary multiple, booleans
 * (docs/env.md, "Writing values"). What a value means for each variable,
 * and its range, is config.c's business. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config.h"

/* Parses a whole decimal number; returns the index after the digits, -1
 * when there is no digit, -2 when the number does not fit in 64 bits. */
static int parse_digits(const char *s, uint64_t *out)
{
    int i = 0;
    uint64_t v = 0;
    if (s[0] < '0' || s[0] > '9')
        return -1;
    for (; s[i] >= '0' && s[i] <= '9'; i++) {
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -2;
        v = v * 10 + d;
    }
    *out = v;
    return i;
}

static int mul_checked(uint64_t v, uint64_t m, uint64_t *out)
{
    if (m && v > UINT64_MAX / m)
        return -2;
    *out = v * m;
    return 0;
}

/* "500ms", "2s", "100us", "750ns", "1m", "0"; a bare number other than 0
 * is refused because its unit would be a guess. */
int up__parse_duration(const char *s, uint64_t *out)
{
    uint64_t v;
    int n = parse_digits(s, &v);
    if (n < 0)
        return n;
    const char *u = s + n;
    uint64_t m;
    if (*u == '\0')
        m = v == 0 ? 1 : 0;
    else if (!strcmp(u, "ns"))
        m = 1;
    else if (!strcmp(u, "us"))
        m = UP__US;
    else if (!strcmp(u, "ms"))
        m = UP__MS;
    else if (!strcmp(u, "s"))
        m = UP__SEC;
    else if (!strcmp(u, "m") || !strcmp(u, "min"))
        m = 60 * UP__SEC;
    else if (!strcmp(u, "h"))
        m = 3600 * UP__SEC;
    else
        m = 0;
    if (m == 0)
        return -1;
    return mul_checked(v, m, out);
}

/* "65536", "256k", "8M", "1G" (binary multiples). */
int up__parse_size(const char *s, uint64_t *out)
{
    uint64_t v;
    int n = parse_digits(s, &v);
    if (n < 0)
        return n;
    const char *u = s + n;
    uint64_t m = 0;
    if (*u == '\0')
        m = 1;
    else if (!strcmp(u, "k") || !strcmp(u, "K") || !strcmp(u, "KiB"))
        m = UP__KIB;
    else if (!strcmp(u, "M") || !strcmp(u, "MiB"))
        m = UP__KIB * UP__KIB;
    else if (!strcmp(u, "G") || !strcmp(u, "GiB"))
        m = UP__KIB * UP__KIB * UP__KIB;
    if (m == 0)
        return -1;
    return mul_checked(v, m, out);
}

int up__parse_number(const char *s, uint64_t *out)
{
    int n = parse_digits(s, out);
    if (n < 0)
        return n;
    return s[n] == '\0' ? 0 : -1;
}

/* The one boolean parser: every boolean variable goes through it. */
int up__parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on", "y"};
    static const char *const no[] = {"0", "false", "no", "off", "n"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (!strcasecmp(s, yes[i])) {
            *out = 1;
            return 0;
        }
        if (!strcasecmp(s, no[i])) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

/* ---- printing values -------------------------------------------------- */

/* A duration in the largest unit that divides it exactly, in the form the
 * parser reads back: 1s, 250us, 90s, 720h. */
void up__format_duration(uint64_t ns, char *buf, size_t size)
{
    static const struct {
        uint64_t mul;
        const char *unit;
    } units[] = {
        {3600 * UP__SEC, "h"}, {60 * UP__SEC, "m"}, {UP__SEC, "s"}, {UP__MS, "ms"}, {UP__US, "us"}};
    if (ns == 0) {
        snprintf(buf, size, "0");
        return;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (ns % units[i].mul == 0) {
            snprintf(buf, size, "%" PRIu64 "%s", ns / units[i].mul, units[i].unit);
            return;
        }
    snprintf(buf, size, "%" PRIu64 "ns", ns);
}

void up__format_size(uint64_t bytes, char *buf, size_t size)
{
    if (bytes && bytes % (UP__KIB * UP__KIB * UP__KIB) == 0)
        snprintf(buf, size, "%" PRIu64 "G", bytes / (UP__KIB * UP__KIB * UP__KIB));
    else if (bytes && bytes % (UP__KIB * UP__KIB) == 0)
        snprintf(buf, size, "%" PRIu64 "M", bytes / (UP__KIB * UP__KIB));
    else if (bytes && bytes % UP__KIB == 0)
        snprintf(buf, size, "%" PRIu64 "k", bytes / UP__KIB);
    else
        snprintf(buf, size, "%" PRIu64, bytes);
}
