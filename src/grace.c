/* SPDX-License-Identifier: MIT */
/*
** grace.c - grace periods: the writer's fence (membarrier, where the
** kernel has it, else full fences on both sides), waiting for the records
** seen inside a read-side section to leave it, a spinning waiter's turn
** (atab__relax, which fork's waits in thread.c take too), whether the
** caller is alone on a table (atab__alone), and the grace period that
** waits for every record inside a section (atab__synchronize); with the
** state the readers' inline side (thread.h) reads: the fence's, and the
** record this thread used last. The records themselves are thread.c's.
** It calls no other file of the library, so the test hook every file
** may call (hooks.h: ATAB__PAUSE) is defined here, below them all.
*/
#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "table.h"

/* ---- memory barriers ---- */

int atab__membarrier_state;   /* 0 unknown, 1 usable, -1 not available */
_Thread_local atab__tls_pair atab__tls_last ATAB__TLS;
_Thread_local atab__tls_pair atab__tls_slots[ATAB__TLS_SLOTS] ATAB__TLS;

#ifdef ATAB_TEST_HOOKS
atab__hook_fn atab__test_hook;
#endif

int atab__have_membarrier(void)
{
    int s = __atomic_load_n(&atab__membarrier_state, __ATOMIC_ACQUIRE);
    if (s)
        return s > 0;
#if ATAB__NEVER_MEMBARRIER
    s = -1;
#else
    s = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0 ? 1 : -1;
#endif
    __atomic_store_n(&atab__membarrier_state, s, __ATOMIC_RELEASE);
    return s > 0;
}

/* How long the fallback fence waits when the kernel has no barrier for it
** either: longer than a scheduler tick at 100 Hz. */
#define FALLBACK_WAIT_NS 20000000L

int atab__fence_fallback(atab_table *t)
{
    (void)t;   /* the pause point's, in test builds */
    ATAB__PAUSE("fence:fallback", t);
#if ATAB__NEVER_MEMBARRIER
    return 0;   /* every side fences for itself */
#else
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0) == 0)
        return 1;
    struct timespec d = {0, FALLBACK_WAIT_NS}, left;
    while (nanosleep(&d, &left) != 0 && errno == EINTR)
        d = left;
    return 2;
#endif
}

/* The writer's half of the handshake: after it, every reader either is
** seen inside its section or sees what the writer stored before. Once
** registered, membarrier fails only for a bad command (or a sandbox that
** forbids it from then on); should it fail anyway, readers are told to
** fence for themselves from then on: the state for every path, and t's
** fast_id for the hit path (each table's writers clear theirs the first
** time they see the state), and the readers of t that entered their
** sections with no fence before they were told pass the fallback fence,
** which every writer makes until one has finished (t->fence_served). */
int atab__writer_fence(atab_table *t)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (atab__have_membarrier()) {
        if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) == 0)
            return 1;
        __atomic_store_n(&atab__membarrier_state, -1, __ATOMIC_SEQ_CST);
    }
    if (__atomic_load_n(&atab__membarrier_state, __ATOMIC_SEQ_CST) < 0 &&
        !__atomic_load_n(&t->fence_served, __ATOMIC_ACQUIRE)) {
        /* every writer until one fallback since the store of FENCED is done
        ** makes one: it cannot tell a reader's section entered with no
        ** fence from one that is out */
        __atomic_store_n(&t->fast_id, ATAB__FENCED, __ATOMIC_SEQ_CST);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        int served = atab__fence_fallback(t) != 0;
        __atomic_store_n(&t->fence_served, 1, __ATOMIC_RELEASE);
        return served;
    }
    return 0;
}

void atab__relax(unsigned *spins)
{
    if (++*spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else {
        sched_yield();
    }
}

/* ---- grace periods ---- */

#define WAIT_BATCH 32   /* records a grace period waits for at once */

/* Is r inside the section it was in when a grace period began (or a flush
** asked for its cache)? Marks a record found inside (thread.h: seq), and
** says 0 once that section has ended: the record is outside, or inside
** another one (the mark is gone). A record another waiter marked is
** waited for too: its section began before this look. */
static int still_in(atab__rec *r, int *marked)
{
    uint64_t s = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
    if (*marked)
        return s == ATAB__SEQ_MARKED;
    while (s == ATAB__SEQ_IN &&
           !__atomic_compare_exchange_n(&r->seq, &s, ATAB__SEQ_MARKED, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
        ;
    *marked = s != ATAB__SEQ_OUT;   /* marked now, or by another waiter */
    return *marked;
}

/* Waits until r is seen outside a section, or has left the one it was in. */
void atab__wait_out(atab__rec *r)
{
    int marked = 0;
    unsigned spins = 0;
    while (still_in(r, &marked))
        atab__relax(&spins);
}

/* Waits until each of in[0..n) has left the section it was seen in, all
** at once: a reader preempted inside its section holds up the wait for one
** turn of the scheduler, not one turn for each. */
static void wait_out_all(atab__rec **in, size_t n)
{
    unsigned spins = 0;
    int marked[WAIT_BATCH] = {0};
    while (n) {
        for (size_t i = 0; i < n;) {
            if (!still_in(in[i], &marked[i])) {
                in[i] = in[--n];
                marked[i] = marked[n];
            } else {
                i++;
            }
        }
        if (n)
            atab__relax(&spins);
    }
}

int atab__alone(atab_table *t)
{
    const atab__rec *own = atab__tls_last.id == t->id ? atab__tls_last.rec : NULL;
    pthread_mutex_lock(&t->reg_lock);
    const atab__rec *r = t->recs;
    int alone = !r || (r == own && !r->next);
    pthread_mutex_unlock(&t->reg_lock);
    return alone;
}

void atab__synchronize(atab_table *t)
{
    atab__rec *in[WAIT_BATCH];
    if (atab__alone(t))
        return;   /* no reader but the caller, outside its sections */
    uint64_t ticket = __atomic_fetch_add(&t->gp_begun, 1, __ATOMIC_SEQ_CST);
    atab__writer_fence(t);
    pthread_mutex_lock(&t->reg_lock);
    for (atab__rec *r = t->recs; r;) {
        size_t n = 0;
        for (; r && n < WAIT_BATCH; r = r->next)   /* the records inside a section now */
            if (__atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) != ATAB__SEQ_OUT)
                in[n++] = r;
        wait_out_all(in, n);
    }
    pthread_mutex_unlock(&t->reg_lock);
    ATAB__PAUSE("gp:served", t);
    uint64_t served = __atomic_load_n(&t->gp_served, __ATOMIC_RELAXED);
    while (served <= ticket &&
           !__atomic_compare_exchange_n(&t->gp_served, &served, ticket + 1, 1,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
}
