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

/* The units of durations and of sizes, largest first, one table each for
 * the parser and the printer: the parser takes every name, the printer
 * the first whose multiple divides the value exactly (so of two names of
 * one multiple, the first is the one printed). Each table ends with a
 * multiple of 1, so the printer always finds one. */
typedef struct unit {
    const char *name;
    uint64_t mul;
} unit;

/* "500ms", "2s", "100us", "750ns", "1m", "0"; a bare number other than 0
 * is refused because its unit would be a guess. */
static const unit duration_units[] = {{"h", 3600 * UP__SEC},
                                      {"m", 60 * UP__SEC},
                                      {"min", 60 * UP__SEC},
                                      {"s", UP__SEC},
                                      {"ms", UP__MS},
                                      {"us", UP__US},
                                      {"ns", 1}};

/* "65536", "256k", "8M", "1G" (binary multiples); "" is a bare number. */
#define MIB (UP__KIB * UP__KIB)
#define GIB (UP__KIB * MIB)
static const unit size_units[] = {{"G", GIB},     {"GiB", GIB},   {"M", MIB},       {"MiB", MIB},
                                  {"k", UP__KIB}, {"K", UP__KIB}, {"KiB", UP__KIB}, {"", 1}};

#define UNITS(t) (t), sizeof(t) / sizeof(t)[0]

/* A whole number and one of the n units of t after it (a bare 0 needs
 * none): 0, -1 when malformed, -2 when it does not fit in 64 bits. */
static int parse_with_unit(const char *s, const unit *t, size_t n, uint64_t *out)
{
    uint64_t v;
    int k = parse_digits(s, &v);
    if (k < 0)
        return k;
    uint64_t m = 0;
    if (v == 0 && s[k] == '\0')
        m = 1;
    else
        for (size_t i = 0; i < n && m == 0; i++)
            if (!strcmp(s + k, t[i].name))
                m = t[i].mul;
    if (m == 0)
        return -1;
    return mul_checked(v, m, out);
}

int up__parse_duration(const char *s, uint64_t *out)
{
    return parse_with_unit(s, UNITS(duration_units), out);
}

int up__parse_size(const char *s, uint64_t *out)
{
    return parse_with_unit(s, UNITS(size_units), out);
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

/* v in the largest of the n units of t that divides it exactly, in the
 * form the parser reads back: 1s, 250us, 90s, 720h; 8M, 4097. */
static void format_with_unit(uint64_t v, const unit *t, size_t n, char *buf, size_t size)
{
    if (v == 0) {
        snprintf(buf, size, "0");
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (v % t[i].mul == 0) {
            snprintf(buf, size, "%" PRIu64 "%s", v / t[i].mul, t[i].name);
            return;
        }
    /* Not reached while each table ends with a unit of 1; a table that
     * did not would still print the bare number. */
    snprintf(buf, size, "%" PRIu64, v);
}

void up__format_duration(uint64_t ns, char *buf, size_t size)
{
    format_with_unit(ns, UNITS(duration_units), buf, size);
}

void up__format_size(uint64_t bytes, char *buf, size_t size)
{
    format_with_unit(bytes, UNITS(size_units), buf, size);
}
