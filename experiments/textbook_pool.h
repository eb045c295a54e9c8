/* The textbook thread pool every benchmark compares against: one bounded
 * ring of tasks behind one mutex and two condition variables, one worker
 * per core. Submitters block while the ring is full. */
#ifndef UP_TEXTBOOK_POOL_H
#define UP_TEXTBOOK_POOL_H

typedef struct tb_pool tb_pool;

tb_pool *tb_pool_create(unsigned workers, unsigned capacity);
void tb_submit(tb_pool *p, void (*fn)(void *), void *arg);
void tb_pool_destroy(tb_pool *p); /* runs what is queued, then joins */

#endif
