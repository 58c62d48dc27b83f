/* SPDX-License-Identifier: MIT */
/*
** solo.c - the solo thread: the one thread whose short-key inserts take no
** shard lock, how it claims a table, how the bias passes to another thread
** or ends, and how a table is opened to a claim again. The protocol, and
** what each side reads, are described in table.h ("The solo thread");
** the solo insert itself is intern.c's (insert_block), the check under
** every lock table.h's (atab__shard_take).
*/
#include "table.h"

const char atab__solo_marks[2];

/* Gives t's bias to `mine`, this thread's record, or ends it when NULL
** (reg_lock held): no solo record; where a lock may be held or a solo
** insert be under way (`fence`), the new solo_tid stored, the writer's
** fence (where membarrier no longer serves, the fallback fence: the old
** solo thread's inserts have no fence of their own) and the wait for the
** old solo insert; then the new record, or no solo thread. */
static void solo_pass(atab_table *t, atab__rec *mine, int fence)
{
    atab__rec *old = t->solo_rec;
    __atomic_store_n(&t->solo_rec, NULL, __ATOMIC_SEQ_CST);
    if (mine)
        __atomic_store_n(&t->solo_tid, (const void *)&atab__tls_last, __ATOMIC_SEQ_CST);
    if (fence) {
        /* the old solo thread now either is seen in a solo insert, or sees
        ** solo_rec cleared in its next one and takes the lock; a lock held
        ** now shows in its word, and one taken later reads solo_tid */
        unsigned spins = 0;
        if (!atab__writer_fence(t) && !ATAB__NEVER_MEMBARRIER)
            (void)atab__fence_fallback(t);   /* its solo inserts take no fence of their own */
        while (old && __atomic_load_n(&old->solo_busy, __ATOMIC_ACQUIRE))
            atab__relax(&spins);
        if (!ATAB__NEVER_MEMBARRIER && !atab__have_membarrier())
            mine = NULL;   /* membarrier fails now: no bias (each move would wait on the fallback) */
    }
    if (mine)
        __atomic_store_n(&t->solo_rec, mine, __ATOMIC_RELEASE);
    else
        __atomic_store_n(&t->solo_tid, NULL, __ATOMIC_RELEASE);
}

/* Ends t's bias (reg_lock held). */
static void solo_end(atab_table *t)
{
    solo_pass(t, NULL, t->solo_rec != NULL);
}

/* Meets t's bias (a lock taken while another thread is solo, or none is):
** claims it, takes it over, or ends it. */
static void solo_meet(atab_table *t)
{
    atab__rec *mine = atab__rec_known(t->id);
    if (!ATAB__NEVER_MEMBARRIER && !atab__have_membarrier())
        mine = NULL;   /* no claim: the solo insert's fence needs membarrier */
    pthread_mutex_lock(&t->reg_lock);
    const void *solo = __atomic_load_n(&t->solo_tid, __ATOMIC_RELAXED);
    if (!solo || solo == (const void *)&atab__tls_last) {
        /* ended, or this thread's already */
    } else if (mine && solo == ATAB__SOLO_UNCLAIMED) {
        solo_pass(t, mine, 0);   /* every lock held was seen by a fence, or is dropped unwritten */
    } else if (mine && (solo == ATAB__SOLO_REOPENED || t->solo_moves < ATAB__SOLO_MOVES)) {
        t->solo_moves += solo != ATAB__SOLO_REOPENED;
        solo_pass(t, mine, 1);
    } else {
        solo_end(t);
    }
    pthread_mutex_unlock(&t->reg_lock);
}

/* atab__shard_take's way when solo_tid, read under sh's lock, is neither
** the caller's nor NULL: the lock dropped unwritten, the bias met, the
** lock taken again, until it is. */
void atab__solo_retake(atab_table *t, atab__shard *sh)
{
    const void *solo;
    do {
        atab__lock_drop(&sh->lock);
        solo_meet(t);
        atab__lock_take(&sh->lock);
        atab__solo_fence();
        solo = __atomic_load_n(&t->solo_tid, __ATOMIC_ACQUIRE);
    } while (solo && solo != (const void *)&atab__tls_last);
}

/* t's bias open to a claim, `mark` (reg_lock held, or a child's one thread). */
static void solo_open(atab_table *t, const void *mark)
{
    __atomic_store_n(&t->solo_rec, NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&t->solo_tid, mark, __ATOMIC_RELAXED);
}

void atab__solo_leave(atab_table *t, const atab__rec *r)
{
    if (t->solo_rec == r)
        solo_open(t, ATAB__SOLO_UNCLAIMED);
    else if (!t->solo_tid && (!t->recs || !t->recs->next))
        solo_open(t, ATAB__SOLO_REOPENED);
}

void atab__solo_fork(atab_table *t)
{
    const void *solo = __atomic_load_n(&t->solo_tid, __ATOMIC_RELAXED);
    if (solo && solo != ATAB__SOLO_UNCLAIMED && solo != ATAB__SOLO_REOPENED &&
        solo != (const void *)&atab__tls_last)
        solo_end(t);   /* its insert under way ends first */
}

void atab__solo_child(atab_table *t)
{
    if (t->solo_tid != (const void *)&atab__tls_last)
        solo_open(t, ATAB__SOLO_UNCLAIMED);
}
