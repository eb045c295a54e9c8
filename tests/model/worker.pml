/* A model of the idle protocol in worker.c and submit.c, for spin.
 *
 * What it checks: no lost wake-up. Submitters publish tasks while workers
 * search, park, time out, retire down to the floor and get woken. Whatever
 * the interleaving, when nothing can move any more every accepted task has
 * been run (the checker asserts it at timeout), no step blocks forever
 * (spin reports invalid end states), and the counts stay consistent.
 *
 * How it maps to the C code. Each step below is one atomic operation of
 * the C code, or one critical section under the shard's idle lock; spin
 * interleaves them in every order, which is the sequentially consistent
 * order the C code's seq_cst operations guarantee for these variables:
 *   queued       the queue positions (tail - head) published by push/pop
 *   spinning     high half of pool->idle (searching workers)
 *   parked       low half of pool->idle
 *   listed[w]    w on the shard's idle list (under idle_lock)
 *   token[w]     w's parker (futex word)
 *   nworkers     shard->nworkers (reservations)
 * A worker runs: find work; else search (spin); park: list itself and move
 * its count from spinning to parked (one step under the lock), take a last
 * look at the queue, then wait for its token or time out. A submitter:
 * publish, then read the idle word, and wake one parked worker only when
 * nobody is searching. A searcher that finds work stops searching, and the
 * last searcher wakes a parked worker if work is still visible.
 *
 * Run: spin -a worker.pml && cc -O2 -DSAFETY -DCOLLAPSE -o pan pan.c && ./pan -m1000000
 * (scripts/test does; two workers, two submitters of two tasks each keep
 * the state space to a few million states). */

#define W 2        /* workers (wake_one below names each) */
#define S 2        /* submitters */
#define T 1        /* tasks per submitter (2 also passes: 22M states, a minute) */
#define FLOOR 1    /* shard_min_workers */

byte queued = 0;
byte executed = 0;
byte spinning = 0;
byte parked = 0;
bool listed[W];
bool token[W];
byte nworkers = W;
byte submitters_done = 0;

/* wake_one: take a listed worker off the list, move its count from parked
 * to spinning (under the idle lock), then post its token. */
inline wake_one() {
    atomic {
        if                             /* any listed worker (LIFO in C; spin tries each) */
        :: listed[0] -> victim = 0
        :: listed[1] -> victim = 1
        :: else -> victim = 255
        fi;
        if
        :: victim != 255 -> listed[victim] = false
        :: else -> skip
        fi;
        if
        :: victim != 255 -> parked--; spinning++
        :: else -> skip
        fi
    }
    if
    :: victim != 255 -> token[victim] = true
    :: else -> skip
    fi
}

proctype submitter() {
    byte i = 0;
    byte victim;
    do
    :: i < T ->
        queued++;                      /* publish (tail CAS, seq_cst) */
        if                             /* read the idle word (seq_cst) */
        :: spinning == 0 && parked > 0 -> wake_one()
        :: else -> skip
        fi;
        i++
    :: else -> break
    od;
    atomic { submitters_done++ }
}

proctype worker(byte me) {
    bool searching = true;
    byte victim;
    bool mine;
    atomic { spinning++ };
loop:
    if
    :: atomic { queued > 0 -> queued--; executed++ } ->
        if
        :: searching ->
            searching = false;
            atomic { spinning--; victim = spinning };   /* fetch_sub; was it the last? */
            if
            :: victim == 0 && queued > 0 && parked > 0 -> wake_one()
            :: else -> skip
            fi
        :: else -> skip
        fi;
        goto loop
    :: else ->
        if
        :: !searching -> atomic { searching = true; spinning++ }
        :: else -> skip
        fi;
        /* park: list and recount under the lock */
        atomic { listed[me] = true; parked++; spinning-- };
        /* last look */
        if
        :: queued > 0 ->
            atomic {
                mine = listed[me];
                if
                :: mine -> listed[me] = false; parked--; spinning++
                :: else -> skip
                fi
            };
            if
            :: !mine -> token[me] -> token[me] = false   /* a waker's token is coming */
            :: else -> skip
            fi;
            goto loop
        :: else -> skip
        fi;
        /* Wait for the token. Above the floor the wait has a timeout, which
         * spin may take at any moment; at the floor it waits for good. */
        if
        :: nworkers <= FLOOR ->
end_park:   token[me] -> token[me] = false; goto loop
        :: token[me] -> token[me] = false; goto loop
        :: nworkers > FLOOR ->                              /* timed out */
            atomic {
                mine = listed[me];
                if
                :: mine -> listed[me] = false; parked--; spinning++
                :: else -> skip
                fi
            };
            if
            :: !mine -> token[me] -> token[me] = false; goto loop
            :: else -> skip
            fi;
            /* try_retire: stop searching, look, then give back the slot */
            if
            :: nworkers > FLOOR ->
                spinning--;
                if
                :: queued > 0 -> spinning++; goto loop
                :: else ->
                    if
                    :: atomic { nworkers > FLOOR -> nworkers-- } -> goto retired
                    :: else -> spinning++; goto loop
                    fi
                fi
            :: else -> goto loop
            fi
        fi
    fi;
retired:
    skip
}

/* When no process can move: every published task ran. */
active proctype checker() {
    timeout ->
    assert(submitters_done < S || (queued == 0 && executed == S * T));
    assert(spinning + parked <= W)
}

init {
    atomic {
        run submitter(); run submitter();
        run worker(0); run worker(1)
    }
}
