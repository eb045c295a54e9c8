/* A model of the idle protocol with the work map (runtime/src/workmap.h),
 * for spin: the protocol of worker.pml in a pool with many shards, where
 * idle workers see a far shard's tasks only through its map bit.
 *
 * What it checks: no lost wake-up and no stranded task. Submitters publish
 * into a shard that no worker probes directly, mark its bit and read the
 * idle word; workers search by reading the bit, probing the shard when it
 * is set and, finding it empty, clearing the bit and looking again (which
 * sets it back when a task arrived meanwhile); a parking worker's last look
 * and a retiring worker's look read the bit instead of the queue. Whatever
 * the interleaving, when nothing can move every published task has run.
 *
 * Mapping to the C code (each step one seq_cst operation or one critical
 * section, as in worker.pml):
 *   queued       the far shard's queue positions
 *   marked       its bit in the map (with the top word: the same pattern,
 *                one level up, so one bit models both)
 *   spinning, parked, listed, token, nworkers: as in worker.pml
 * The bit's "load, then set if clear" of up__work_mark is two steps here;
 * the clear (fetch_and) and the second look of up__work_recheck are two
 * more.
 *
 * Run: spin -a workmap.pml && cc -O2 -DSAFETY -DCOLLAPSE -o pan pan.c && ./pan -m1000000
 * (scripts/modelcheck does, with a seeded bug: the recheck left out). */

#define W 2        /* workers (wake_one below names each) */
#define S 2        /* submitters */
#define T 1        /* tasks per submitter (2 also passes: 22M states, a minute) */
#define FLOOR 1    /* shard_min_workers */

byte queued = 0;
bool marked = false;
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
        if                             /* up__work_mark: load the bit ... */
        :: !marked -> marked = true          /* ... and set it if clear (fetch_or) */
        :: else -> skip
        fi;
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
    bool found;
    atomic { spinning++ };
loop:
    /* find_work through the map: read the bit; set: probe the shard; empty:
     * clear the bit, look again, set it back if a task is there (and take
     * it on the next round). */
    found = false;
    if
    :: marked ->
        if
        :: atomic { queued > 0 -> queued--; executed++; found = true }
        :: else ->
            marked = false;                                /* fetch_and */
            if
            :: queued > 0 -> marked = true                 /* the second look */
            :: else -> skip
            fi
        fi
    :: else -> skip
    fi;
    if
    :: found ->
        if
        :: searching ->
            searching = false;
            atomic { spinning--; victim = spinning };   /* fetch_sub; was it the last? */
            if
            :: victim == 0 && marked && parked > 0 -> wake_one()
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
        /* last look: the map's top word */
        if
        :: marked ->
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
                :: marked -> spinning++; goto loop
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
