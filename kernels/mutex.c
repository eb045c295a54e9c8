#include "mutex.h"

#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t counter; /* (lock) */

void up_k_mutex_inc(void)
{
    pthread_mutex_lock(&lock);
    counter++;
    pthread_mutex_unlock(&lock);
}

uint64_t up_k_mutex_count(void)
{
    pthread_mutex_lock(&lock);
    uint64_t n = counter;
    pthread_mutex_unlock(&lock);
    return n;
}

void up_k_mutex_reset(void)
{
    pthread_mutex_lock(&lock);
    counter = 0;
    pthread_mutex_unlock(&lock);
}

enum { VERIFY_THREADS = 4, VERIFY_EACH = 20000 };

static void *hammer(void *arg)
{
    (void)arg;
    for (int i = 0; i < VERIFY_EACH; i++)
        up_k_mutex_inc();
    return NULL;
}

int up_k_mutex_verify(void)
{
    pthread_t t[VERIFY_THREADS];
    up_k_mutex_reset();
    int started = 0;
    for (; started < VERIFY_THREADS; started++)
        if (pthread_create(&t[started], NULL, hammer, NULL) != 0)
            break;
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    int ok =
        started == VERIFY_THREADS && up_k_mutex_count() == (uint64_t)VERIFY_THREADS * VERIFY_EACH;
    up_k_mutex_reset();
    return ok ? 0 : -1;
}
