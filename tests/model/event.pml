/* An event's waiter list (runtime/src/event.c): waiters push records with
 * a CAS on the head word, a setter exchanges the head for SET and releases
 * the chain it got, a resetter swaps SET back to EMPTY, and a destroy's
 * sweep swaps a chain for EMPTY and releases it cancelled. The claim: every
 * record is released exactly once, whatever the interleaving, and a waiter
 * that finds the event set releases its own record at once.
 *
 * The head word is 0 (EMPTY), 1 (SET) or 2 + i (record i is the newest
 * waiter); next[i] is record i's link (0: the end of the chain). Records
 * are not reused here: a push never fails because of reuse (a Treiber push
 * has no ABA problem: a CAS that succeeds links to whatever the head holds
 * now), and the list is only ever taken whole, never popped one by one.
 *
 *   spin -a event.pml && cc -O2 -DSAFETY -o pan pan.c && ./pan */
#define N 3
#define EMPTY 0
#define SET 1

byte head = EMPTY;
byte next[N];
byte released[N];
byte done = 0; /* waiters finished */

/* Walks a detached chain and releases each record once. */
inline release_chain(h, k) {
    k = h;
    do
    :: k >= 2 -> released[k - 2]++; k = next[k - 2]
    :: else -> break
    od
}

proctype waiter(byte i) {
    byte h, k;
    h = head;
    do
    :: h == SET ->
        released[i]++; /* set since we looked: ours to release */
        break
    :: else ->
        next[i] = h;
        atomic {
            if
            :: head == h -> assert(h != SET); head = 2 + i; h = 255 /* never behind SET */
            :: else -> h = head /* the CAS failed: it returns the head */
            fi
        }
        if
        :: h == 255 -> break
        :: else -> skip
        fi
    od;
    done++
}

proctype setter() {
    byte old, k, rounds = 2;
    do
    :: rounds > 0 ->
        atomic { old = head; head = SET }; /* exchange */
        release_chain(old, k);
        atomic { if :: head == SET -> head = EMPTY :: else -> skip fi }; /* reset */
        rounds--
    :: rounds == 0 -> break
    od
}

/* A destroy's sweep: a chain is swapped for EMPTY and released. */
proctype sweeper() {
    byte h, k;
    h = head;
    do
    :: h >= 2 ->
        atomic {
            if
            :: head == h -> head = EMPTY; k = 1
            :: else -> h = head; k = 0
            fi
        }
        if
        :: k == 1 -> release_chain(h, k); break
        :: else -> skip
        fi
    :: else -> break
    od
}

init {
    byte i, k, old;
    atomic {
        run setter();
        run sweeper();
        for (i : 0 .. N - 1) { run waiter(i) }
    }
    (done == N && _nr_pr == 1);
    /* The final set the program makes: releases what still waits. */
    old = head;
    head = SET;
    release_chain(old, k);
    for (i : 0 .. N - 1) {
        assert(released[i] == 1)
    }
}
