/* SPDX-License-Identifier: MIT */
/*
** sweep.c - the sweep protocol: how unused atoms and replaced slot arrays
** are unlinked under the shards' locks and freed after a grace period
** (grace.c: atab__synchronize). The queues themselves (taking one away,
** putting it back, the blocks kept for new atoms) are thread.c's; the
** slot arrays and their rebuilds table.c's (table.h).
**
** Sweeps. The thread that brings an atom's count to 0 queues it
** (thread.h); when its queue is full it sweeps it after its section: each
** atom still at 0 is killed (a CAS that a revival racing it may win
** instead) and unlinked under its shard's lock, and freed after one grace
** period (one a thread's cache once kept spares of is left for a full
** sweep: atom.h). A full sweep (atab_gc, or unqueued zeros past the
** threshold) gives the caches' spares back, empties the queues, then
** visits every shard under its lock. Readers are never stopped: a
** lock-free probe that meets a killed atom treats it as absent and goes to
** the lock, where the atom is already gone. A sweep shrinks the shards
** it leaves mostly empty, and frees what it unlinked, the arrays it
** replaced among them, after one grace period for the whole batch. A
** queue sweep beside other threads shares grace periods with them: its
** batch waits for the next one that any thread runs, and only a sweep
** whose batch before is still waiting runs its own (leave_waiting).
*/
#include <stdlib.h>

#include "sweep.h"
#include "probe.h"

#define RETIRE_LOCAL 256       /* a sweep's retire buffer on the stack */

/* ---- retired arrays ----
** An insert that grew a shard does not wait for a grace period: the array
** it replaced goes on the table's retired list (table.h), and the next
** grace period that runs anyway (a queue sweep's, a full sweep's; atab_gc
** runs one for the list alone) frees it. atab__free_unlinked takes the list
** before its grace period begins, so every array it frees was replaced
** before then, and no reader can still be on it after. Where the list is
** full or the array large, or the table has a memory limit (which the
** list's arrays would count against until then), the grower waits for a
** grace period of its own, as with no list, and frees the list's arrays
** with it (table.c keeps the list: atab__retire_array puts an array on
** it, atab__retired_take empties it). */

/* What a sweep unlinked and frees after one grace period: as many atoms
** as its buffer holds (on the stack, then grown from the table's allocator:
** one grace period, one membarrier, for a whole sweep), and the arrays it
** shrank. */
typedef struct retire {
    atab_atom **atoms;
    size_t n_atoms, cap;
    uint64_t arrays[4];
    size_t n_arrays;
    atab_atom *local[RETIRE_LOCAL];
} retire;

/* Room for one more atom, growing the buffer; -1 when it cannot grow
** (benign: the sweep frees what it holds, then goes on). */
static int retire_room(atab_table *t, retire *rt)
{
    if (rt->n_atoms < rt->cap)
        return 0;
    atab_status saved = atab_last_error();
    atab_atom **na = atab__alloc(t, 2 * rt->cap * sizeof *na);
    if (!na) {
        atab__set_error(saved);
        return -1;
    }
    memcpy(na, rt->atoms, rt->n_atoms * sizeof *na);
    if (rt->atoms != rt->local)
        atab__free(t, rt->atoms, rt->cap * sizeof *rt->atoms);
    rt->atoms = na;
    rt->cap *= 2;
    return 0;
}

/* The retired list is taken before the grace period begins (above). */
void atab__free_unlinked(atab_table *t, atab_atom *const *atoms, size_t n_atoms,
                         const uint64_t *arrays, size_t n_arrays, const atab_atom **q)
{
    uint64_t old[ATAB__RETIRED_MAX];
    size_t n_old = atab__retired_take(t, old);
    atab__synchronize(t);
    /* Before any block is freed: a thread that holds an atom later made at
    ** one of these addresses got it after this, so it reads the new count
    ** and takes no memo of an atom freed here (thread.h: made_frees). */
    if (n_atoms)
        __atomic_add_fetch(&t->frees, 1, __ATOMIC_RELAXED);
    for (size_t i = 0; i < n_old; i++)
        atab__free_arr(t, old[i]);
    if (q) {
        atab__recycle(t, q, atoms, n_atoms, 1);   /* and those waiting in q */
    } else {
        atab__atoms_free(t, atab__acct(t), atoms, n_atoms);
    }
    for (size_t i = 0; i < n_arrays; i++)
        atab__free_arr(t, arrays[i]);
}

/* Frees what a full sweep unlinked so far, and the retired arrays. */
static void retire_flush(atab_table *t, retire *rt)
{
    if (!rt->n_atoms && !rt->n_arrays && !__atomic_load_n(&t->n_retired, __ATOMIC_RELAXED))
        return;
    ATAB__PAUSE("sweep:free", t);
    atab__free_unlinked(t, rt->atoms, rt->n_atoms, rt->arrays, rt->n_arrays, NULL);
    rt->n_atoms = rt->n_arrays = 0;
}

/* Shrinks a locked shard that a sweep left under an eighth used into the
** smaller array that holds twice its atoms (none when it has none), the
** old one appended to arrays[*n] to free after a grace period: a shard
** that churns between sweeps keeps room for as many again as it holds, and
** is rebuilt again only once that more than doubles or falls under a
** third. Deleted slots are no reason: inserts reuse them, and they
** lengthen no probe (erase). Benign on failure: the shard keeps its array. */
static void shrink(atab_table *t, atab__shard *sh, uint64_t *arrays, size_t *n)
{
    if (!atab__is_array(*sh->arr) || 8 * (size_t)sh->used >= atab__shard_cap(sh))
        return;
    unsigned code = sh->used ? atab__code_for(2 * (size_t)sh->used) : 0;
    if (code && atab__code_groups[code] >= atab__arr_of(*sh->arr).ngroups)
        return;
    atab_status saved = atab_last_error();
    uint64_t old = atab__rebuild(t, sh, code);
    atab__set_error(saved);
    if (old != UINT64_MAX && atab__is_array(old))
        arrays[(*n)++] = old;
}

/* Sweeps one shard: kills and unlinks its atoms at count 0 (while the
** retire buffer has room; else the caller frees and comes back), then
** shrinks it, whether or not it freed any here (queue sweeps retire at
** most 4 arrays each, and may leave emptied shards their arrays). Returns
** how many it freed. */
static size_t sweep_shard(atab_table *t, atab__shard *sh, retire *rt)
{
    size_t freed = 0;
    atab__shard_take(t, sh);
    atab__arr v = atab__arr_of(*sh->arr);
    for (size_t i = 0; i < atab__arr_cap(v) && retire_room(t, rt) == 0; i++) {
        if (!atab__slot_full(v, i))
            continue;
        atab_atom *a = (atab_atom *)atab__slot_atom(*atab__slot_ptr(v, i));
        if (atab_is_static(a) || atab__count(a) != 0)
            continue;
        ATAB__PAUSE("sweep:kill", a);
        if (!atab__count_kill(a))
            continue;   /* revived just now */
        atab__erase(sh, v, i);
        rt->atoms[rt->n_atoms++] = a;
        freed++;
    }
    shrink(t, sh, rt->arrays, &rt->n_arrays);
    atab__shard_drop(sh);
    return freed;
}

/* Frees every atom at count 0, shard by shard; sweep_lock is held. */
static size_t sweep(atab_table *t)
{
    retire rt;
    size_t freed = 0, got;
    rt.atoms = rt.local;
    rt.cap = RETIRE_LOCAL;
    rt.n_atoms = rt.n_arrays = 0;
    __atomic_add_fetch(&t->sweeps, 1, __ATOMIC_SEQ_CST);   /* odd: atab_foreach */
    /* spares back, queues emptied: every count is what holders hold; and
    ** no cache takes spares again until the kills below are done (a spare
    ** made meanwhile, which a double release then took off the count,
    ** would name an atom this sweep frees) */
    atab__flush_counts(t, 1, NULL, NULL);
    /* Every atom at 0 now is this sweep's to free (the flush counted those
    ** it brought to 0); those that reach 0 from here on count afresh. */
    __atomic_store_n(&t->unused, 0, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        do {
            got = sweep_shard(t, &t->shards[i], &rt);
            freed += got;
            if (rt.n_atoms == rt.cap || rt.n_arrays == 4)
                retire_flush(t, &rt);
        } while (got && rt.n_atoms == 0);   /* the buffer filled: this shard again */
    }
    atab__flush_end(t);   /* the caches are their owners' again */
    retire_flush(t, &rt);
    if (rt.atoms != rt.local)
        atab__free(t, rt.atoms, rt.cap * sizeof *rt.atoms);
    atab__chunks_gc(t);   /* the chunks this sweep emptied */
    __atomic_add_fetch(&t->sweeps, 1, __ATOMIC_SEQ_CST);
    return freed;
}

size_t atab_gc(atab_table *t)
{
    if (!t)
        return 0;
    pthread_mutex_lock(&t->sweep_lock);
    size_t freed = sweep(t);
    pthread_mutex_unlock(&t->sweep_lock);
    return freed;
}

/* Kills queued atom a of hash h where it is still at 0, and unlinks it
** from the locked shard's array v (the caller counts it off sh->used):
** found first, in its group A's slots (where most keys are), each compared
** whole with the slot a's insert made (tag and address), and erased with
** what that one read of the group says; else by the probe. Returns 1 when
** it killed and unlinked a, 0 when a was revived (left as it is), -1 when
** a is in no slot of v: another table's atom, released to this one (a
** misuse that its count could not show), never killed. */
ATAB__INLINE int kill_queued(atab__arr v, uint64_t h, const atab_atom *a)
{
    size_t g = atab__h_group(h, v.ngroups), at;
    uint8_t *ctrl = atab__group_ctrl(v, g);
    atab__group gr = atab__group_read(v, g, atab__h_ctrl(h));
    const uint64_t *slots = (const uint64_t *)(const void *)(ctrl + ATAB__GROUP);
    uint64_t want = atab__slot_make(a, h);
    for (uint32_t m = gr.match; m; m &= m - 1) {
        unsigned j = (unsigned)__builtin_ctz(m);
        if (__atomic_load_n(&slots[j], __ATOMIC_RELAXED) == want) {   /* the lock's writes */
            if (!atab__count_kill_queued(a))
                return 0;
            atab__erase_in_group(ctrl, j, gr.empty != 0);
            return 1;
        }
    }
    if (!atab__probe(v, h, atab__match_atom, a, &at))
        return -1;
    if (!atab__count_kill_queued(a))
        return 0;
    atab__erase_slot(v, at);
    return 1;
}

/* Unlinks queued atom a of hash h, killed already, from the locked shard's
** array v, as kill_queued finds it. Non-zero when it was there. */
static int unlink_killed(atab__arr v, uint64_t h, const atab_atom *a)
{
    size_t at;
    if (!atab__probe(v, h, atab__match_atom, a, &at))
        return 0;
    atab__erase_slot(v, at);
    return 1;
}

/* Grace periods shared between sweeps. Where other threads are on the
** table, a queue sweep leaves the carved atoms it unlinked (q[0..n), NULL
** for those it only took off) waiting in q (thread.h: atab__pend), with no
** grace period of its own, when the batch its last sweep left there has
** been served since by a grace period some thread ran (or there is none):
** that batch's blocks are then kept for new atoms, as a sweep's are after
** its grace period. Non-zero when it did; else the caller runs one grace
** period, which serves both batches. Not with a memory limit (waiting
** atoms would count against it), nor for an atom that is an allocation of
** its own, nor alone on the table, where a grace period costs nothing.
** The arrays the sweep shrank (arrays[0..*n_arrays)) go on the retired
** list; those that do not are left in arrays[] for the caller's grace
** period, which then serves the atoms too. `alone`: what atab__alone said
** as the sweep began. Either answer is safe when it has changed since:
** the caller's grace period (atab__synchronize) asks again, and atoms
** left waiting only wait longer. */
static int leave_waiting(atab_table *t, const atab_atom **q, uint32_t n, uint64_t *arrays,
                         size_t *n_arrays, int alone)
{
    atab__pend *p = atab__queue_pend(q, t->queue_cap);
    if (!t->pend_cap || (p->n && !atab__gp_served(t, p->snap)) || alone)
        return 0;
    size_t left = 0;
    for (size_t i = 0; i < *n_arrays; i++)
        if (!atab__retire_array(t, arrays[i]))
            arrays[left++] = arrays[i];
    if ((*n_arrays = left) != 0)
        return 0;
    if (p->n)
        atab__recycle(t, q, NULL, 0, 1);
    for (uint32_t i = 0; i < n; i++) {
        atab_atom *a = (atab_atom *)q[i];
        if (!a)
            continue;
        if (!atab__carved(atab_len(a))) {
            p->n = 0;   /* all of q's for the caller's grace period */
            return 0;
        }
        p->atoms[p->n++] = a;
    }
    p->snap = atab__gp_snap(t);
    return 1;
}

/* Takes the atoms on queue block q's list from i (an index + 1: its head),
** all of locked shard sh, off the queue: each is found first; one still at
** 0 is then killed and unlinked, one revived is only taken off (its q
** entry cleared), as is one at 0 that a cache kept spares of (counted in
** *spared), and one not found, another table's atom, is only taken off
** and counted in *foreign (a misuse), never killed. Returns how many it
** killed. */
static size_t unqueue_list(atab__shard *sh, const atab_atom **q, const uint64_t *h,
                           uint32_t i, size_t *spared, size_t *foreign)
{
    atab__arr v = atab__arr_of(*sh->arr);   /* until shrink: erasing keeps the array */
    size_t dead = 0;
    do {
        const atab_atom *a = q[--i];
        ATAB__PAUSE("queue:kill", a);
        int k = kill_queued(v, h[i], a);
        if (ATAB__LIKELY(k > 0)) {
            dead++;
            continue;
        }
        if (ATAB__UNLIKELY(k < 0)) {
            (void)atab__count_unqueue(a, 0);   /* another table's atom, released here:
                                                  left to its own table, untouched but
                                                  for the mark this queue put on it */
            ++*foreign;
            q[i] = NULL;
            continue;
        }
        uint32_t left = atab__count_unqueue(a, 1);
        if (left == ATAB__REF_DEAD) {   /* a revival and its release between the two reads */
            if (ATAB__LIKELY(unlink_killed(v, h[i], a)))
                dead++;
            else
                q[i] = NULL;   /* cannot be (it was there): a leak is safer than a free */
            continue;
        }
        *spared += left == 0;   /* at 0: SPARED (else revived) */
        q[i] = NULL;
    } while ((i = (uint32_t)(h[i] & ATAB__QUEUE_LINK)) != 0);
    sh->used -= (uint32_t)dead;
    return dead;
}

_Static_assert(ATAB__QUEUE_LISTS == ATAB__SHARDS && ATAB__SHARD_BITS == 6,
               "a queue's lists are its shards (thread.h: atab__queue_list)");

/* The first shard from s on whose list in a queue (heads) is not empty;
** ATAB__SHARDS for none. */
static inline unsigned next_list(const uint16_t *heads, unsigned s)
{
    while (s < ATAB__SHARDS && !heads[s])
        s++;
    return s;
}

/* Asks for the lines that the sweep of shard s's list in queue q (from i,
** an index + 1) will write, one list ahead of it: the shard's (its lock),
** and for each atom its own (the kill) and its group A's control bytes
** (the unlink), with the slots after them to read. Other threads' inserts
** and sweeps wrote most of them last, so asked for together their
** transfers overlap (base.h: atab__prefetch_w). Hints only: the shard's
** array read here, without its lock, may be replaced before the sweep
** comes to it. */
static void prefetch_list(atab_table *t, unsigned s, const atab_atom **q, const uint64_t *h,
                          uint32_t i)
{
    int ok = (int)t->prefetchw;
    atab__prefetch_w(ok, &t->shards[s]);
    atab__arr v = atab__arr_of(__atomic_load_n(&t->arrs[s], __ATOMIC_RELAXED));
    do {
        const uint8_t *ctrl = atab__group_ctrl(v, atab__h_group(h[i - 1], v.ngroups));
        atab__prefetch_w(ok, q[i - 1]);
        atab__prefetch_w(ok, ctrl);
        __builtin_prefetch(ctrl + 64);
    } while ((i = (uint32_t)(h[i - 1] & ATAB__QUEUE_LINK)) != 0);
}

/* Sweeps the n atoms of a queue (this thread's, taken off its record: the
** block ATAB__QUEUE_BYTES describes), list by list, each a shard's, under
** that shard's lock, taken once: an atom still at 0 is killed and
** unlinked, one revived is only taken off, and the shard may shrink; after
** a grace period (leave_waiting: maybe one another thread runs) the dead
** are freed. An atom at 0 that a cache has kept spares of (atom.h:
** SPARED) is taken off and counted towards t->unused instead, for a full
** sweep, which takes the caches' spares back before it kills. The lists
** are left empty. */
static void sweep_queue(atab_table *t, const atab_atom **q, uint32_t n)
{
    const uint64_t *h = atab__queue_hashes(q, t->queue_cap);
    uint16_t *heads = atab__queue_heads(q);
    uint64_t arrays[4];
    size_t dead = 0, n_arrays = 0, spared = 0, foreign = 0;
    /* alone on the table, no other core writes these lines: nothing to ask
    ** for, and no grace period to share (leave_waiting) */
    int alone = atab__alone(t);
    unsigned next;
    if (!alone && (next = next_list(heads, 0)) < ATAB__SHARDS)
        prefetch_list(t, next, q, h, heads[next]);
    for (unsigned s = 0; s < ATAB__SHARDS; s++) {
        uint32_t i = heads[s];
        if (!i)
            continue;
        heads[s] = 0;
        if (!alone && (next = next_list(heads, s + 1)) < ATAB__SHARDS)
            prefetch_list(t, next, q, h, heads[next]);
        atab__shard *sh = &t->shards[s];
        atab__shard_take(t, sh);
        dead += unqueue_list(sh, q, h, i, &spared, &foreign);
        if (n_arrays < 4)
            shrink(t, sh, arrays, &n_arrays);
        atab__shard_drop(sh);
    }
    if (spared)
        __atomic_add_fetch(&t->unused, spared, __ATOMIC_RELAXED);
    if (foreign)
        __atomic_add_fetch(&t->misuse, foreign, __ATOMIC_RELAXED);
    if (!dead && !n_arrays)
        return;
    ATAB__PAUSE("queue:free", t);
    if (leave_waiting(t, q, n, arrays, &n_arrays, alone))
        return;
    atab__free_unlinked(t, (atab_atom *const *)q, n, arrays, n_arrays, q);
}

void atab__queue_due(atab_table *t, atab__rec *r)
{
    uint32_t n = 0;
    const atab_atom **q = NULL;
    if (__atomic_load_n(&r->queue, __ATOMIC_RELAXED) && !(q = atab__queue_take(r, &n)))
        return;   /* a flusher holds r, or a fork is under way: later */
    if (n)
        sweep_queue(t, q, n);
    atab__queue_put(t, r, q);
    /* a queue made just now with the atom that asked for it may be full
    ** already (a threshold of 1): its sweep is due after this release too */
    if (!q && __atomic_load_n(&r->sweep_due, __ATOMIC_RELAXED) &&
        __atomic_load_n(&r->queue, __ATOMIC_RELAXED))
        atab__queue_due(t, r);
}

void atab__sweep_at_threshold(atab_table *t)
{
    if (pthread_mutex_trylock(&t->sweep_lock) != 0)
        return;
    if (__atomic_load_n(&t->unused, __ATOMIC_RELAXED) >= t->sweep_threshold)
        sweep(t);
    pthread_mutex_unlock(&t->sweep_lock);
}
