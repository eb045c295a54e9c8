/* Uses the installed library: one pool, a thousand tasks, all run. */
#include <stdatomic.h>
#include <stdio.h>

#include <ultrapool/pool.h>

static atomic_int ran;
static void task(void *arg)
{
    (void)arg;
    atomic_fetch_add(&ran, 1);
}

int main(void)
{
    up_pool *p;
    if (up_pool_create(&p, NULL) != UP_OK)
        return 1;
    for (int i = 0; i < 1000; i++)
        if (up_submit_wait(p, task, NULL) != UP_OK)
            return 1;
    if (up_pool_destroy(p) != UP_OK || atomic_load(&ran) != 1000)
        return 1;
    printf("consumer: 1000 tasks ran through the installed library\n");
    return 0;
}
