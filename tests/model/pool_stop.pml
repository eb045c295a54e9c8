/* A model of stop racing submit (pool.c, mpmc.c, worker.c), for spin.
 *
 * What it checks: no lost task and no hang. Submitters race a stopper that
 * runs up_pool_stop_and_wait. A submit is accepted exactly when its
 * reservation (the tail CAS that expects the closed bit clear) succeeds; an
 * accepted task is then written and published. Workers take published
 * tasks in order, and once stopping they exit when the queue is drained by
 * positions (tail == head, reserved-but-unpublished slots count as queued).
 * When stop-and-wait returns, every accepted task has run and every
 * submit after the close was rejected; nothing blocks forever.
 *
 * Mapping: tail/head are the queue positions, closed is bit 63 of tail,
 * ready[i] is slot i's sequence word saying "published", stopping is
 * pool->stopping, live counts worker threads (pool->live under its mutex).
 *
 * The order in the stopper matters: with the flag raised before the close,
 * workers may see "stopping and empty" and exit, and then a submit slips
 * in before the close and is never run (spin finds it in a few steps; the
 * C code then relied on the waiting stop draining on its own thread).
 *
 * Run: spin -a pool_stop.pml && cc -O2 -DSAFETY -o pan pan.c && ./pan */

#define S 2     /* submitters */
#define T 2     /* submits each */
#define W 2     /* workers */
#define N (S * T)

byte tail = 0;
byte head = 0;
bool closed = false;
bool ready[N];
bool stopping = false;
byte accepted = 0;
byte rejected = 0;
byte executed = 0;
byte live = W;
bool stop_returned = false;

proctype submitter() {
    byte i = 0;
    byte pos;
    bool ok;
    do
    :: i < T ->
        atomic {                      /* the tail CAS: fails once closed */
            if
            :: !closed -> pos = tail; tail++; accepted++; ok = true
            :: else -> rejected++; ok = false
            fi
        };
        if
        :: ok -> ready[pos] = true    /* write the slot, publish its seq */
        :: else -> skip
        fi;
        i++
    :: else -> break
    od
}

proctype worker() {
loop:
    if
    :: atomic { head < tail && ready[head] -> head++ } ->  /* take (head CAS) */
        executed++;
        goto loop
    :: atomic { stopping && head == tail } ->               /* drained: exit */
        goto out
    :: else ->
        /* Idle: wait until a task is published or stop is requested (a
         * parked worker is woken by a submit or by stop's wake-all). */
end_idle:
        (head < tail && ready[head]) || stopping;
        goto loop
    fi;
out:
    atomic { live-- }
}

proctype stopper() {
    closed = true;     /* up_pool_stop: close the queue's tail, */
    stopping = true;   /* then raise the flag */
    live == 0;         /* stop_and_wait: until no worker is left */
    assert(executed == accepted);
    assert(head == tail);
    stop_returned = true
}

init {
    atomic {
        run submitter(); run submitter();
        run worker(); run worker();
        run stopper()
    }
}

/* Every submit got an answer, and the ones after the close were refused. */
active proctype checker() {
    timeout ->
    assert(stop_returned);
    assert(accepted + rejected == N)
}
