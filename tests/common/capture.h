/* Stderr into a temporary file between capture_start and capture_stop,
 * which restores it and returns what was written (up to 16 KiB). Checks
 * on the text run only after the stop, so that a failure is seen on the
 * real stderr. Test code, header-only; needs check.h. */
#ifndef UP_TEST_CAPTURE_H
#define UP_TEST_CAPTURE_H

#include <stdio.h>
#include <unistd.h>

#include "check.h"

static int saved_stderr = -1;
static FILE *capture_file;
static char captured[16384];

static void capture_start(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    CHECK(capture_file != NULL);
    saved_stderr = dup(2);
    CHECK_GE(saved_stderr, 0);
    CHECK_EQ(dup2(fileno(capture_file), 2), 2);
}

static const char *capture_stop(void)
{
    fflush(stderr);
    CHECK_EQ(dup2(saved_stderr, 2), 2);
    close(saved_stderr);
    rewind(capture_file);
    size_t n = fread(captured, 1, sizeof captured - 1, capture_file);
    captured[n] = '\0';
    fclose(capture_file);
    return captured;
}

#endif
