/* The error codes: one table (UP_ERRNO_MAP) gives each constant its value,
 * its text (up_strerror) and its name (up_err_name); values that are no
 * code get the documented fallbacks; up_last_error is per thread. */
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include <ultrapool/pool.h>

#include "check.h"

typedef struct entry {
    const char *name, *text;
    int value, constant;
} entry;

static const entry table[] = {
#define ENTRY(name, value, text) {"UP_" #name, text, value, UP_##name},
    UP_ERRNO_MAP(ENTRY)
#undef ENTRY
};
enum { COUNT = sizeof table / sizeof table[0] };

static void *fresh_thread(void *arg)
{
    (void)arg;
    /* Nothing failed on this thread yet, whatever failed on main. */
    CHECK_EQ(strcmp(up_last_error(), ""), 0);
    return NULL;
}

int main(void)
{
    CHECK_EQ(COUNT, 9);
    CHECK_EQ(UP_OK, 0);
    for (int i = 0; i < COUNT; i++) {
        const entry *e = &table[i];
        CHECK_EQ(e->constant, e->value);
        CHECK(i == 0 ? e->value == 0 : e->value < 0);
        CHECK_EQ(strcmp(up_err_name(e->value), e->name), 0);
        CHECK_EQ(strcmp(up_strerror(e->value), e->text), 0);
        CHECK(strcmp(e->text, "unknown error") != 0 && e->text[0] != '\0');
        for (int j = 0; j < i; j++) {
            CHECK(table[j].value != e->value);
            CHECK(strcmp(table[j].text, e->text) != 0);
        }
    }
    /* The codes the headers name, spelled out: the table holds them all. */
    CHECK_EQ(strcmp(up_err_name(UP_EINVAL), "UP_EINVAL"), 0);
    CHECK_EQ(strcmp(up_err_name(UP_EDEADLK), "UP_EDEADLK"), 0);
    CHECK_EQ(strcmp(up_strerror(UP_ETIMEDOUT), "timed out"), 0);

    const int strangers[] = {1, -9, INT_MIN, INT_MAX, -1000};
    for (size_t i = 0; i < sizeof strangers / sizeof strangers[0]; i++) {
        CHECK_EQ(strcmp(up_strerror(strangers[i]), "unknown error"), 0);
        CHECK_EQ(strcmp(up_err_name(strangers[i]), "UP_UNKNOWN"), 0);
    }

    /* A failing call leaves its detail on this thread only. */
    CHECK_EQ(up_submit(NULL, NULL, NULL), UP_EINVAL);
    CHECK(up_last_error()[0] != '\0');
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, fresh_thread, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK(up_last_error()[0] != '\0');
    printf("errors: %d codes, their names and texts, 5 values that are no code, "
           "the last error per thread\n",
           COUNT);
    return 0;
}
