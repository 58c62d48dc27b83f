/* SPDX-License-Identifier: MIT */
/*
** thread.c - per-thread records: finding this thread's record, the
** estimate of unused atoms, the queues of atoms at 0, the cache of spare
** references and flushing it, fork, and giving a record back when its
** thread exits (grace periods are grace.c's, the solo thread solo.c's).
** The protocols are described in thread.h.
*/
#include <stdlib.h>

#include "probe.h"

#define REC_ALLOC (sizeof(atab__rec) + 63)

/* ---- the unused estimate ---- */

/* Counts one atom brought to 0 by this thread towards t->unused, a batch
** at a time so that churning threads do not share a written line (the
** batch is a small fraction of the sweep threshold: life.c sets it). */
static void count_zero(atab_table *t, atab__rec *r)
{
    if (r && (uint32_t)++r->zeros < t->zero_batch)
        return;
    __atomic_add_fetch(&t->unused, r ? (size_t)r->zeros : 1, __ATOMIC_RELAXED);
    if (r)
        r->zeros = 0;
}

/* Can r's queue take one more atom? (Its owner's, in a section, or a
** flusher's.) */
ATAB__INLINE int queue_room(const atab__rec *r)
{
    return r && r->t->queue_cap && (r->queue ? r->nq < r->t->queue_cap : !r->pending);
}

/* Counts one over-release found (stats.misuse). */
static void misuse_found(atab_table *t)
{
    __atomic_add_fetch(&t->misuse, 1, __ATOMIC_RELAXED);
}

/* Applies what atab__count_drop returned for atom a of hash h (QUEUE only
** where queue_room said yes): ATAB_EREFS for an over-release (counted),
** else ATAB_OK. The last error is the caller's to set. */
ATAB__INLINE int apply_drop(atab_table *t, atab__rec *r, const atab_atom *a, uint64_t h, int what)
{
    if (what == ATAB__DROP_QUEUE) {
        if (r->queue) {
            atab__queue_push(r, t->queue_cap, a, h);
        } else {
            r->pending = a;   /* until the owner makes the queue */
            r->pending_h = h;
            __atomic_store_n(&r->sweep_due, 1, __ATOMIC_RELAXED);
        }
    } else if (what == ATAB__DROP_UNUSED) {
        count_zero(t, r);
    } else if (what == ATAB__DROP_MISUSE) {
        misuse_found(t);
        return ATAB_EREFS;
    }
    return ATAB_OK;
}

/* apply_drop for a release: its status, and its error set. */
ATAB__INLINE int dropped(atab_table *t, atab__rec *r, const atab_atom *a, uint64_t h, int what)
{
    int rc = apply_drop(t, r, a, h, what);
    if (ATAB__UNLIKELY(rc != ATAB_OK))
        atab__set_error(rc);
    return rc;
}

int atab__unref_direct(atab_table *t, const atab_atom *a)
{
    int what = atab__count_drop(a, 1, 0, 0);
    if (what == ATAB__DROP_QUEUE)
        __builtin_unreachable();   /* never queued: no queue offered */
    return dropped(t, NULL, a, 0, what);
}

int atab__unref_counted(atab_table *t, atab__rec *r, const atab_atom *a)
{
    if (!atab__cache_ours(r))
        return atab__unref_direct(t, a);
    int what = atab__count_drop(a, 1, 0, queue_room(r));
    return dropped(t, r, a, what == ATAB__DROP_QUEUE ? atab__atom_hash(t, a) : 0, what);
}

/* ---- queues ---- */

/* Takes one of r's atoms off its queue (the caller holds r), left a plain
** 0 (counted for a full sweep) or live. */
static void unqueue(atab_table *t, atab__rec *r, const atab_atom *a)
{
    if (atab__count_unqueue(a, 0) == 0)
        count_zero(t, r);
}

/* Empties r's queue, its lists and its pending atom (the caller holds r). */
static void unqueue_all(atab_table *t, atab__rec *r)
{
    for (uint32_t i = 0; i < r->nq; i++)
        unqueue(t, r, r->queue[i]);
    if (r->pending)
        unqueue(t, r, r->pending);
    if (r->queue)
        memset(atab__queue_heads(r->queue), 0, ATAB__QUEUE_HEADS_BYTES);
    r->nq = 0;
    r->pending = NULL;
}

/* Marks r's queue away (taken for a sweep, or being made), unless a fork
** is under way: 0 then, with r's sweep due again (after the fork). Against fork_prepare's store of t->forking and its
** loads of r->away, each side's store and then load are sequentially
** consistent, so at least one sees the other's store: the fork waits for
** the queue, or the queue stays home (is not made). */
static int away_begin(atab__rec *r)
{
    __atomic_exchange_n(&r->away, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&r->t->forking, __ATOMIC_SEQ_CST))
        return 1;
    __atomic_store_n(&r->away, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&r->sweep_due, 1, __ATOMIC_RELAXED);
    return 0;
}

const atab_atom **atab__queue_take(atab__rec *r, uint32_t *n)
{
    const atab_atom **q = NULL;
    ATAB__PAUSE("queue:take", r);
    __atomic_store_n(&r->sweep_due, 0, __ATOMIC_RELAXED);
    if (!away_begin(r))
        return NULL;
    atab__enter_rec(r);
    if (!atab__cache_ours(r)) {
        __atomic_store_n(&r->sweep_due, 1, __ATOMIC_RELAXED);   /* later */
    } else if ((q = r->queue) != NULL) {
        *n = r->nq;
        r->nq = r->qcap = 0;
        __atomic_store_n(&r->queue, NULL, __ATOMIC_RELAXED);
    }
    atab__leave(r);
    if (!q)
        __atomic_store_n(&r->away, 0, __ATOMIC_RELEASE);   /* nothing went away */
    return q;
}

/* Gives the blocks on lists[0..ATAB__RECYCLE_CLASSES) (the caller's) back
** to their chunks; how many. */
static size_t free_blocks(atab_table *t, atab_atom **lists)
{
    size_t n = 0;
    for (size_t c = 0; c < ATAB__RECYCLE_CLASSES; c++)
        for (atab_atom *a = lists[c]; a; a = atab__block_next(a))
            n++;
    if (n)
        atab__chunk_free_lists(t, lists);
    return n;
}

/* Links carved atom a's block onto lists[] by its size class (the link
** overwrites its header). */
static void block_onto(atab_atom **lists, atab_atom *a)
{
    size_t c = atab__class_of(atab_len(a));
    atab__block_link(a, lists[c]);
    lists[c] = a;
}

/* Takes the atoms waiting in p (carved, all of them; a grace period has
** served them, or no reader is left) onto lists[] by size class, after
** bumping t->frees (sweep.c: atab__free_unlinked). */
static void pend_onto(atab_table *t, atab__pend *p, atab_atom **lists)
{
    if (!p->n)
        return;
    __atomic_add_fetch(&t->frees, 1, __ATOMIC_RELAXED);
    for (size_t i = 0; i < p->n; i++)
        block_onto(lists, p->atoms[i]);
    p->n = 0;
}

/* Frees the atoms waiting in queue q for a grace period (the caller's):
** one has served them since, or no reader is left. */
static void free_pend(atab_table *t, const atab_atom **q)
{
    atab_atom *lists[ATAB__RECYCLE_CLASSES] = {NULL};
    pend_onto(t, atab__queue_pend(q, t->queue_cap), lists);
    free_blocks(t, lists);
}

/* Frees queue block q, the atoms waiting in it (the caller saw them
** served) and the blocks it keeps (the caller's). */
static void free_block_of_queue(atab_table *t, const atab_atom **q)
{
    free_pend(t, q);
    free_blocks(t, atab__queue_kept(q, t->queue_cap));
    atab__free(t, atab__queue_block(q), ATAB__QUEUE_BYTES(t));
}

/* Waits, where atoms wait in queue q (the caller's, outside sections) and
** no grace period has served them, for one. */
static void serve_pend(atab_table *t, const atab_atom **q)
{
    atab__pend *p = atab__queue_pend(q, t->queue_cap);
    if (p->n && !atab__gp_served(t, p->snap))
        atab__synchronize(t);
}

/* A block that finds a flusher holding r is freed at once, with the blocks
** it keeps, rather than parked where no flush, sweep or report would see
** it: the next atom r queues asks for a new one. r->away is cleared once
** the block is r's again or freed: a fork may go on from then. */
void atab__queue_put(atab_table *t, atab__rec *r, const atab_atom **q)
{
    __atomic_store_n(&r->sweep_due, 0, __ATOMIC_RELAXED);
    if (!q) {
        if (__atomic_load_n(&r->flush_req, __ATOMIC_ACQUIRE)) {
            /* a flusher holds r (a full sweep, for its whole walk): no block
            ** to make and free at once for each release meanwhile; a queue
            ** later (a miss here makes one, and the section's check below
            ** frees it) */
            __atomic_store_n(&r->sweep_due, 1, __ATOMIC_RELAXED);
            return;
        }
        if (!away_begin(r))   /* the new block would be this thread's alone */
            return;
        atab_status saved = atab_last_error();
        void *block = atab__alloc(t, ATAB__QUEUE_BYTES(t));   /* benign: the zeros go unqueued */
        atab__set_error(saved);
        ATAB__PAUSE("queue:made", r);
        if (block) {   /* empty lists, no recycled blocks */
            q = atab__queue_in(block);
            memset(block, 0, ATAB__QUEUE_HEADS_BYTES);
            memset(atab__queue_kept(q, t->queue_cap), 0,
                   ATAB__RECYCLE_CLASSES * sizeof(atab_atom *));
            atab__queue_pend(q, t->queue_cap)->n = 0;
        }
    }
    atab__enter_rec(r);
    if (!atab__cache_ours(r)) {
        atab__leave(r);
        if (q) {
            serve_pend(t, q);
            free_block_of_queue(t, q);
        }
        __atomic_store_n(&r->sweep_due, 1, __ATOMIC_RELAXED);   /* a queue later */
        __atomic_store_n(&r->away, 0, __ATOMIC_RELEASE);
        return;
    }
    if (q) {
        __atomic_store_n(&r->queue, q, __ATOMIC_RELEASE);
        r->qcap = t->queue_cap;
        if (r->pending) {   /* the slot before the count, as in atab__queue_push */
            atab__queue_slot(q, t->queue_cap, r->nq, r->pending, r->pending_h);
            __atomic_store_n(&r->nq, r->nq + 1, __ATOMIC_RELEASE);
            if (r->nq == t->queue_cap)   /* full already (a queue of one): its sweep */
                __atomic_store_n(&r->sweep_due, 1, __ATOMIC_RELAXED);
        }
    } else if (r->pending) {
        unqueue(t, r, r->pending);   /* no queue to be had */
    }
    r->pending = NULL;
    atab__leave(r);
    __atomic_store_n(&r->away, 0, __ATOMIC_RELEASE);
}

void atab__recycle(atab_table *t, const atab_atom **q, atab_atom *const *atoms, size_t n,
                   int pend)
{
    atab_atom **kept = atab__queue_kept(q, t->queue_cap), *old[ATAB__RECYCLE_CLASSES];
    size_t *acct = atab__acct(t);
    memcpy(old, kept, sizeof old);
    memset(kept, 0, sizeof old);
    if (pend)
        pend_onto(t, atab__queue_pend(q, t->queue_cap), kept);
    atab_atom **onto = t->memory_limit ? old : kept;   /* a limit: none kept (thread.h) */
    for (size_t i = 0; i < n; i++) {
        atab_atom *a = atoms[i];
        if (!a)
            continue;
        if (!atab__carved(atab_len(a)))
            atab__atom_free(t, acct, a);
        else
            block_onto(onto, a);
    }
    free_blocks(t, old);
}

int atab__recycled_free(atab_table *t, atab__rec *r)
{
    atab_atom *lists[ATAB__RECYCLE_CLASSES] = {NULL};
    atab__enter_rec(r);
    if (atab__cache_ours(r) && r->queue) {
        atab_atom **kept = atab__queue_kept(r->queue, t->queue_cap);
        atab__pend *p = atab__queue_pend(r->queue, t->queue_cap);
        memcpy(lists, kept, sizeof lists);
        memset(kept, 0, sizeof lists);
        if (p->n && atab__gp_served(t, p->snap))
            pend_onto(t, p, lists);   /* and the atoms served */
    }
    atab__leave(r);
    ATAB__PAUSE("recycled:taken", r);
    int gave = free_blocks(t, lists) != 0;
    return atab__chunks_purge(t) || gave;   /* the chunks they and others left empty */
}

/* Empties r's queue and takes its block away (the caller holds r, and
** reg_lock unless r is off the table's list): the block, or NULL. */
static const atab_atom **detach_queue(atab_table *t, atab__rec *r)
{
    const atab_atom **q = r->queue;
    unqueue_all(t, r);
    if (q) {
        __atomic_store_n(&r->queue, NULL, __ATOMIC_RELAXED);
        r->qcap = 0;
    }
    return q;
}

/* As detach_queue, and frees the block with the blocks it keeps and the
** atoms waiting in it (the caller saw those served, or no reader is left). */
static void free_queue(atab_table *t, atab__rec *r)
{
    const atab_atom **q = detach_queue(t, r);
    if (q)
        free_block_of_queue(t, q);
}

/* ---- the cache of spare references ---- */

/* Does entry value x hold spares that its atom's count is owed (a static
** atom's show spares but have no count)? */
static inline int owes_spares(uint64_t x)
{
    return atab__spares(x) && !(x & ATAB__ENT_STATIC);
}

/* Gives the spares of entry value x, taken off its entry, back to its
** atom's count. An atom left unused by them is counted towards t->unused,
** unless a release through this entry counted it already. */
static void give_back_value(atab_table *t, atab__rec *r, uint64_t x)
{
    unsigned n = atab__spares(x);
    if (owes_spares(x)) {
        const atab_atom *a = atab__ent_atom(x);
        int what = atab__count_drop(a, n, 0, queue_room(r));
        if (what != ATAB__DROP_UNUSED || !(x & ATAB__ENT_ZERO))   /* a misuse is only counted:
                                                                    no caller of ours erred */
            apply_drop(t, r, a, what == ATAB__DROP_QUEUE ? atab__atom_hash(t, a) : 0, what);
    }
}

/* Gives an entry's spares back to its atom's count and frees the entry
** (its owner's, while atab__cache_ours). */
static void give_back(atab_table *t, atab__rec *r, uint64_t *e)
{
    uint64_t x = *e;
    /* before the count: a child forked in between leaks the spares, never
    ** gives them back twice; atomic for the owner's atab__ent_peek */
    __atomic_store_n(e, 0, __ATOMIC_RELAXED);
    give_back_value(t, r, x);
}

/* The entry of hash h for a, taken over from the atom that had it (whose
** spares go back to its count). A dynamic atom is marked SPARED (atom.h),
** here or, with `marked`, by the caller (the CAS that took its reference,
** or atab__count_mark_spared): its entry may hold spares from now on, so a
** queue sweep leaves it to a full sweep, whose flush empties the entry
** first (the caller holds a reference on it). */
ATAB__INLINE uint64_t *make_entry(atab_table *t, atab__rec *r, const atab_atom *a, uint64_t h,
                              int marked)
{
    uint64_t *e = atab__cache_slot(r, h);
    if (owes_spares(e[1]))
        give_back(t, r, &e[1]);   /* else its atom is owed nothing: e[1] is overwritten */
    e[1] = e[0];
    if (!marked && !atab_is_static(a))
        atab__count_mark_spared(a);
    e[0] = (uint64_t)(uintptr_t)a | atab__ent_tag(h);
    return e;
}

int atab__ent_stale(atab__rec *r, uint64_t *e)
{
    uint64_t x = *e;
    if (__atomic_load_n(atab__count_word(atab__ent_atom(x)), __ATOMIC_RELAXED) >= ATAB__REF_SAT)
        return 0;   /* saturated: its count bits say nothing */
    __atomic_store_n(&r->misuse, r->misuse + 1, __ATOMIC_RELAXED);
    *e = x & ~ATAB__ENT_SPARES;   /* gone from the count: from the entry too */
    return -1;
}

int atab__ref_slow(atab_table *t, atab__rec *r, const atab_atom *a, uint64_t h)
{
    if (!atab__cache_ours(r))
        return atab_is_static(a) ? 0 : atab__count_take(a, 1);
    uint64_t *e = atab__cache_find(r, a, h);
    if (atab_is_static(a)) {   /* no count: the entry keeps it for the next hits */
        if (!e)
            e = make_entry(t, r, a, h, 0);
        *e |= ATAB__ENT_STATIC | ATAB__ENT_SPARES;   /* ATAB__STATIC_SPARES */
        return 0;
    }
    if (t->checked_refs)   /* a checked table's caches keep no spares */
        return atab__count_take(a, 1);
    uint64_t x;
    if (e && atab__ent_live(x = *e) &&   /* way 1's spares (atab__ref reads way 0's) */
        (atab__ent_usable(a, x) || atab__ent_stale(r, e) == 0)) {
        atab__ent_take_dyn(e, x);
        return 0;
    }
    if (!e) {   /* first hit here: one reference, marked in the same CAS (make_entry) */
        if (atab__count_take_mark(a, 1, ATAB__REF_SPARED) != 0)
            return -1;
        make_entry(t, r, a, h, 1);
        return 0;
    }
    /* Its next hit with no spare: the caller's reference and spares for the
    ** hits after it, in one CAS that marks it (the entry may have been made
    ** for an atom freed since: thread.h) (a saturated count takes none: the
    ** spares are then only a way to find it). */
    if (atab__count_take_mark(a, ATAB__SPARE_TAKE, ATAB__REF_SPARED) != 0)
        return -1;
    *e += (ATAB__SPARE_TAKE - 1) * ATAB__ENT_ONE;
    return 0;
}

/* A release of another table's atom (atab__unref_slow found it in no
** slot of this one): nothing touched, the misuse counted. */
static __attribute__((noinline)) int foreign_release(atab__rec *r)
{
    __atomic_store_n(&r->misuse, r->misuse + 1, __ATOMIC_RELAXED);
    atab__set_error(ATAB_EINVAL);
    return ATAB_EINVAL;
}

/* atab__unref_slow while a flusher holds r's cache (in a section on r):
** the spares r's entry for a still holds are taken off it with a CAS (the
** flusher takes each entry with an exchange), so one of the two gives them
** back; a release the count is short of (them and the caller's reference)
** is refused as atab__unref_slow refuses it, and so is another table's
** atom that others hold. Nothing is queued: the queue is the flusher's. */
static int unref_held(atab_table *t, atab__rec *r, const atab_atom *a, uint64_t h)
{
    uint64_t *e = atab__cache_slot(r, h);
    unsigned own = 0;
    for (unsigned w = 0; w < ATAB__CACHE_WAYS && !own; w++) {
        uint64_t x = __atomic_load_n(&e[w], __ATOMIC_RELAXED);
        if (atab__ent_atom(x) == a && owes_spares(x) &&
            __atomic_compare_exchange_n(&e[w], &x, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            own = atab__spares(x);
    }
    if (!own) {
        uint32_t c = atab__count(a);
        if (c > 1 && c < ATAB__REF_SAT && ATAB__UNLIKELY(!atab__in_table(t, a, h)))
            return foreign_release(r);   /* as atab__unref_slow: others hold it */
        return atab__unref_direct(t, a);
    }
    int what = atab__count_drop(a, own + 1, 0, 0);
    if (what == ATAB__DROP_MISUSE)   /* the caller holds none: its spares alone go back */
        apply_drop(t, NULL, a, 0, atab__count_drop(a, own, 0, 0));
    return dropped(t, NULL, a, 0, what);
}

int atab__unref_slow(atab_table *t, atab__rec *r, const atab_atom *a, uint64_t h)
{
    if (!atab__cache_ours(r))
        return unref_held(t, r, a, h);
    uint64_t *e = atab__cache_find(r, a, h);
    unsigned own = e ? atab__spares(*e) : 0;
    uint32_t c = atab__count(a);
    if (c >= ATAB__REF_SAT)   /* saturated: counts no more; killed: held by nobody */
        return c == ATAB__REF_DEAD ? dropped(t, r, a, h, ATAB__DROP_MISUSE) : ATAB_OK;
    if (c > own + 1) {   /* others hold it too */
        if (!e && ATAB__UNLIKELY(!atab__in_table(t, a, h)))
            return foreign_release(r);   /* its entry would hand it out here; its
                                            count holds references of its own table's
                                            holders (a checked table's too) */
        if (own >= ATAB__SPARE_MAX || t->checked_refs)   /* full, or no spares: to the count */
            return dropped(t, r, a, h, atab__count_drop(a, 1, own, queue_room(r)));
        atab__count_mark_spared(a);   /* an entry found may have been made for
                                         an atom freed since (thread.h) */
        if (!e)
            e = make_entry(t, r, a, h, 1);
        *e += ATAB__ENT_ONE;   /* the count holds it: kept as a spare */
        return ATAB_OK;
    }
    if (c < own + 1)   /* the count is this thread's spares: the caller holds none */
        return dropped(t, r, a, h, ATAB__DROP_MISUSE);
    /* The last holder this thread can see: no spare may outlive it, so the
    ** spares go with the reference, and the atom is queued, or counted as
    ** unused once per entry. */
    int what = atab__count_drop(a, own + 1, 0, queue_room(r));
    if (e) {
        if (what == ATAB__DROP_UNUSED && (*e & ATAB__ENT_ZERO))
            what = ATAB__DROP_LIVE;   /* counted already */
        *e &= ~ATAB__ENT_SPARES;   /* no spares left */
        if (what == ATAB__DROP_UNUSED)
            *e |= ATAB__ENT_ZERO;   /* counted now (a queued atom is not) */
    }
    return dropped(t, r, a, h, what);
}

/* Adds the zeros r gathered to t->unused (the caller holds r). */
static void fold_zeros(atab_table *t, atab__rec *r)
{
    if (r->zeros) {
        __atomic_add_fetch(&t->unused, (size_t)r->zeros, __ATOMIC_RELAXED);
        r->zeros = 0;
    }
}

/* Moves the bytes and misuse counts of a record that is going away into
** the table's. The caller holds reg_lock while it takes r off the table's
** list (or is alone: fork's child), so that atab__bytes and atab__misuse,
** which sum the table's and the listed records' under that lock, count
** them once, never while r is off the list and not yet folded. */
static void fold_sums(atab_table *t, atab__rec *r)
{
    __atomic_add_fetch(&t->bytes, __atomic_load_n(&r->bytes, __ATOMIC_RELAXED),
                       __ATOMIC_RELAXED);
    __atomic_add_fetch(&t->misuse, __atomic_load_n(&r->misuse, __ATOMIC_RELAXED),
                       __ATOMIC_RELAXED);
    __atomic_store_n(&r->bytes, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&r->misuse, 0, __ATOMIC_RELAXED);
}

/* Moves a record that is going away's counts into the table's: bytes and
** misuse (0 when unlink_rec folded them), and the zeros it gathered (its
** queue's atoms, emptied last). */
static void fold_counts(atab_table *t, atab__rec *r)
{
    fold_sums(t, r);
    fold_zeros(t, r);
}

/* Gives back every entry of a record whose cache the caller owns, each
** taken with an exchange (against a release's CAS: unref_held). */
static void give_back_all(atab_table *t, atab__rec *r)
{
    for (unsigned i = 0; i < ATAB__CACHE_SIZE; i++)
        if (__atomic_load_n(&r->e[i], __ATOMIC_RELAXED))
            give_back_value(t, r, __atomic_exchange_n(&r->e[i], 0, __ATOMIC_RELAXED));
    fold_zeros(t, r);
}

/* Calls fn for each block r's queue keeps for new atoms (the caller holds
** r). */
static void visit_blocks(atab__rec *r, void (*fn)(void *, const void *, size_t), void *ud)
{
    if (!r->queue)
        return;
    atab_atom **kept = atab__queue_kept(r->queue, r->t->queue_cap);
    const atab__pend *p = atab__queue_pend(r->queue, r->t->queue_cap);
    for (size_t c = 0; c < ATAB__RECYCLE_CLASSES; c++)
        for (const atab_atom *a = kept[c]; a; a = atab__block_next(a))
            fn(ud, a, ATAB__CHUNK_GRAIN * (c + 1));
    for (size_t i = 0; i < p->n; i++)
        fn(ud, p->atoms[i], atab__block_bytes(atab_len(p->atoms[i])));
}

void atab__flush_counts(atab_table *t, int sweep,
                        void (*recycled)(void *, const void *, size_t), void *ud)
{
    const atab_atom **done = NULL;   /* queues taken, linked through their heads */
    int waiting = 0;                 /* atoms wait in one of them */
    pthread_mutex_lock(&t->reg_lock);
    if (sweep)
        t->flush_held = 1;   /* records made meanwhile are born held */
    for (atab__rec *r = t->recs; r; r = r->next)
        __atomic_store_n(&r->flush_req, 1, __ATOMIC_SEQ_CST);
    atab__writer_fence(t);
    /* Each owner now either is seen in a section (wait for it to leave)
    ** or will see flush_req when it next enters, and keep off its cache. */
    for (atab__rec *r = t->recs; r; r = r->next) {
        atab__wait_out(r);
        ATAB__PAUSE("flush:record", r);
        give_back_all(t, r);
        if (recycled)
            visit_blocks(r, recycled, ud);
        if (sweep) {
            const atab_atom **q = detach_queue(t, r);   /* reg_lock held: the
                                                           reporter sees it or not */
            if (q) {
                memcpy(atab__queue_heads(q), &done, sizeof done);
                done = q;
                waiting |= atab__queue_pend(q, t->queue_cap)->n != 0;
            }
            fold_zeros(t, r);   /* its atoms left at 0 */
        } else if (!t->flush_held) {   /* a full sweep's hold is its own to end */
            __atomic_store_n(&r->flush_req, 0, __ATOMIC_RELEASE);
        }
    }
    /* The atoms the queues' last sweeps left waiting were unlinked by their
    ** owners before each put its queue back, which may have been after the
    ** fence above (no owner puts one back after its record was seen): a
    ** grace period that begins now, the writer's fence and every record
    ** seen out of the section it is in, serves them. */
    if (waiting) {
        atab__writer_fence(t);
        for (atab__rec *r = t->recs; r; r = r->next)
            atab__wait_out(r);
    }
    while (done) {
        const atab_atom **q = done;
        memcpy(&done, atab__queue_heads(q), sizeof done);
        free_block_of_queue(t, q);
    }
    pthread_mutex_unlock(&t->reg_lock);
}

void atab__flush_end(atab_table *t)
{
    pthread_mutex_lock(&t->reg_lock);
    t->flush_held = 0;
    for (atab__rec *r = t->recs; r; r = r->next)
        __atomic_store_n(&r->flush_req, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&t->reg_lock);
}

/* The table's count and its listed records', read under reg_lock (a
** record going away is folded into the table's as it leaves the list). */
size_t atab__bytes(atab_table *t)
{
    pthread_mutex_lock(&t->reg_lock);
    size_t n = __atomic_load_n(&t->bytes, __ATOMIC_RELAXED);
    for (atab__rec *r = t->recs; r; r = r->next)
        n += __atomic_load_n(&r->bytes, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&t->reg_lock);
    return n;
}

size_t atab__misuse(atab_table *t)
{
    pthread_mutex_lock(&t->reg_lock);
    size_t n = __atomic_load_n(&t->misuse, __ATOMIC_RELAXED);
    for (atab__rec *r = t->recs; r; r = r->next)
        n += __atomic_load_n(&r->misuse, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&t->reg_lock);
    return n;
}

/* ---- finding this thread's record ---- */

static _Thread_local unsigned tls_next ATAB__TLS;
static _Thread_local atab__rec *tls_recs ATAB__TLS;   /* every record of this thread (g_lock) */

/* g_lock guards the threads' record lists and the list of live tables; a
** thread's exit and a table's free meet there. The key's destructor runs
** at thread exit. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t g_key;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static uint64_t g_next_id = 1;
static atab_table *g_tables;   /* live tables (g_lock), for fork */

/* Gives back a record that is off its table's list, on a table that stays:
** its spares to the counts, its queues (and their kept blocks), its byte
** count to the table's; then frees it. */
static void give_back_rec(atab_table *t, atab__rec *r)
{
    give_back_all(t, r);
    free_queue(t, r);
    atab__chunk_retire(t, &r->bump);
    fold_counts(t, r);
    atab__free(t, r->raw, REC_ALLOC);
}

/* Unlinks r from its thread's list and its table's, its bytes and misuse
** counts folded into the table's in the same step (fold_sums); g_lock is
** held. */
static void unlink_rec(atab__rec *r)
{
    atab_table *t = r->t;
    *r->tprev = r->tnext;
    if (r->tnext)
        r->tnext->tprev = r->tprev;
    pthread_mutex_lock(&t->reg_lock);
    for (atab__rec **p = &t->recs; *p; p = &(*p)->next) {
        if (*p == r) {
            *p = r->next;
            break;
        }
    }
    atab__solo_leave(t, r);
    fold_sums(t, r);
    pthread_mutex_unlock(&t->reg_lock);
}

/* At thread exit: every record goes back, its spares to the counts. A
** table freed earlier has already taken its records off this list. */
static void thread_exit(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&g_lock);
    while (tls_recs) {
        atab__rec *r = tls_recs;
        atab_table *t = r->t;
        ATAB__PAUSE("thread_exit:record", r);   /* g_lock held */
        unlink_rec(r);
        if (r->queue)
            serve_pend(t, r->queue);   /* off the list: no flusher holds it */
        give_back_rec(t, r);   /* no section: this thread is the owner */
    }
    for (unsigned i = 0; i < ATAB__TLS_SLOTS; i++)
        atab__tls_slots[i].id = 0;
    atab__tls_last.id = 0;
    pthread_mutex_unlock(&g_lock);
}

static void make_key(void)
{
    pthread_key_create(&g_key, thread_exit);
}

/* Allocates and links a record for this thread on t; g_lock is held. */
static atab__rec *new_rec(atab_table *t)
{
    atab_status saved = atab_last_error();
    void *raw = atab__alloc(t, REC_ALLOC);
    if (!raw) {
        atab__set_error(saved);   /* benign: the locked path works */
        return NULL;
    }
    atab__rec *r = (atab__rec *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
    memset(r, 0, sizeof *r);
    r->raw = raw;
    r->t = t;
    r->tnext = tls_recs;
    r->tprev = &tls_recs;
    if (tls_recs)
        tls_recs->tprev = &r->tnext;
    tls_recs = r;
    pthread_mutex_lock(&t->reg_lock);
    r->flush_req = t->flush_held;   /* a full sweep's kills under way: off the cache */
    r->next = t->recs;
    t->recs = r;
    pthread_mutex_unlock(&t->reg_lock);
    return r;
}

#ifdef ATAB_DEBUG
#define NO_RECORDS 1   /* debug builds count every reference on the atom */
#else
#define NO_RECORDS 0
#endif

atab__rec *atab__rec_find(atab_table *t)
{
    if (NO_RECORDS)
        return NULL;
    atab__rec *r = atab__rec_known(t->id);
    if (!r) {
        pthread_once(&g_once, make_key);
        pthread_mutex_lock(&g_lock);
        for (atab__rec *q = tls_recs; q && !r; q = q->tnext)
            if (q->t == t)
                r = q;
        if (!r && (r = new_rec(t)) != NULL)
            pthread_setspecific(g_key, &g_key);   /* so thread_exit runs */
        pthread_mutex_unlock(&g_lock);
        if (!r)
            return NULL;
        unsigned slot = tls_next++ % ATAB__TLS_SLOTS;
        atab__tls_slots[slot].id = t->id;
        atab__tls_slots[slot].rec = r;
    }
    atab__tls_last.id = t->id;
    atab__tls_last.rec = r;
    return r;
}

/* ---- the table's side ---- */

void atab__threads_visit_memory(atab_table *t, void (*fn)(void *, const void *, size_t),
                                void *ud)
{
    pthread_mutex_lock(&t->reg_lock);
    for (atab__rec *r = t->recs; r; r = r->next) {
        fn(ud, r->raw, REC_ALLOC);
        const atab_atom **q = __atomic_load_n(&r->queue, __ATOMIC_ACQUIRE);
        if (q)   /* freed only under reg_lock */
            fn(ud, atab__queue_block(q), ATAB__QUEUE_BYTES(t));
    }
    pthread_mutex_unlock(&t->reg_lock);
}

/* ---- fork ----
** Around fork() the forking thread takes every lock of the library, so the
** child starts with none held by a thread it does not have; the child then
** gives back the records of the threads that did not come along (their
** spares to the counts: the child has one thread). Order: g_lock, then per
** table sweep_lock, reg_lock, the shards' locks, retired_lock,
** chunk_lock (no path takes them in another order). The child gives the
** chunk locks back while it gives records back (freeing their kept blocks
** takes them), and takes them again for fork_parent.
**
** Before the locks, g_lock held, it waits for every queue away for a
** sweep to come back and every queue being made to be its record's
** (thread.h: r->away), and keeps the others home, none made (t->forking),
** till the fork is done: a sweep's block, and what it unlinked and has yet
** to free, or a new queue's block, are in its thread's hands alone, which
** the child would not have. A sweep with its queue away takes none of the
** locks held meanwhile (g_lock), and takes reg_lock only for a while, as
** the wait does (it waits for sections, which wait for nothing).
**
** A growth that replaced a shard's array holds the old one alone from its
** shard's lock until it is freed or on the retired list (table.c:
** retire_replaced), counted in t->growths_freeing from under that lock.
** Such an end takes reg_lock, retired_lock and chunk_lock, so the fork
** waits, g_lock alone held, for every count to be 0, takes the locks, and
** with them held reads the counts again, exact now: one that grew
** meanwhile has the locks given back and is waited for in turn.
**
** A forking thread that is not a table's solo thread ends its bias (a
** table nobody has claimed stays unclaimed), under reg_lock, before it
** takes the shards' locks: that waits for a solo insert under way, so a
** child never has one half made; and while reg_lock is held no thread can
** claim a table (table.h: the solo thread). In the child, one thread, a
** table whose solo thread it is not is unclaimed.
**
** Not waited for: a short key's insert between the atom it made from its
** thread's chunk and the shard's lock (intern.c: insert_block), or after
** it, with a block made for a key another insert put in first (freed past
** the lock). A child forked then has that block counted live in its chunk
** with no atom in it, so that chunk is freed only with the table
** (atab_table_free frees chunks whole). Marking those inserts as the queue
** sweeps are marked cost 9 instructions a transient atom (callgrind). Nor
** a call's scratch memory another thread holds (atab_intern_lower's fold
** of a long key, atab_foreach's list of atoms): the child never frees it,
** and its bytes stay counted. */

/* Waits until no record of t has its queue away; t->forking is set, so
** none goes away again (g_lock is held). */
static void wait_queues_home(atab_table *t)
{
    unsigned spins = 0;
    for (;;) {
        int away = 0;
        pthread_mutex_lock(&t->reg_lock);
        for (const atab__rec *r = t->recs; r && !away; r = r->next)
            away = __atomic_load_n(&r->away, __ATOMIC_SEQ_CST) != 0;
        pthread_mutex_unlock(&t->reg_lock);
        if (!away)
            return;
        atab__relax(&spins);
    }
}

static void fork_lock(int lock)
{
    for (atab_table *t = g_tables; t; t = t->next_table) {
        if (lock) {
            pthread_mutex_lock(&t->sweep_lock);
            pthread_mutex_lock(&t->reg_lock);
            atab__solo_fork(t);   /* another thread's bias ends */
            for (unsigned i = 0; i < ATAB__SHARDS; i++)   /* no claim while reg_lock is held */
                atab__lock_take(&t->shards[i].lock);
            atab__lock_take(&t->retired_lock);
            pthread_mutex_lock(&t->chunk_lock);
        } else {
            pthread_mutex_unlock(&t->chunk_lock);
            atab__lock_drop(&t->retired_lock);
            for (unsigned i = 0; i < ATAB__SHARDS; i++)
                atab__shard_drop(&t->shards[i]);
            pthread_mutex_unlock(&t->reg_lock);
            pthread_mutex_unlock(&t->sweep_lock);
        }
    }
}

/* Does a growth of some table hold the array it replaced (table.c:
** retire_replaced)? Exact with every lock held (each was counted under
** its shard's lock); else a hint. */
static int growths_freeing(void)
{
    for (atab_table *t = g_tables; t; t = t->next_table)
        if (__atomic_load_n(&t->growths_freeing, __ATOMIC_ACQUIRE))
            return 1;
    return 0;
}

static void fork_prepare(void)
{
    unsigned spins = 0;
    pthread_mutex_lock(&g_lock);
    for (atab_table *t = g_tables; t; t = t->next_table)
        __atomic_store_n(&t->forking, 1, __ATOMIC_SEQ_CST);
    for (atab_table *t = g_tables; t; t = t->next_table)
        wait_queues_home(t);
    for (;;) {
        while (growths_freeing())
            atab__relax(&spins);
        fork_lock(1);
        if (!growths_freeing())
            return;
        fork_lock(0);   /* one grew since: its end takes these locks */
    }
}

static void fork_parent(void)
{
    fork_lock(0);
    for (atab_table *t = g_tables; t; t = t->next_table)
        __atomic_store_n(&t->forking, 0, __ATOMIC_RELEASE);   /* queues may go away */
    pthread_mutex_unlock(&g_lock);
}

static int mine(const atab__rec *r)
{
    for (const atab__rec *q = tls_recs; q; q = q->tnext)
        if (q == r)
            return 1;
    return 0;
}

/* In a child after fork(), the shards' locks held: takes every atom that
** a queue's mark still says is queued off it (the queues of the threads
** that did not come along are gone; unqueue_all took the child's own
** off). Returns how many it left at 0. */
static size_t unqueue_scan(atab_table *t)
{
    size_t zeros = 0;
    for (unsigned i = 0; i < ATAB__SHARDS; i++) {
        atab__arr v = atab__arr_of(t->arrs[i]);
        for (size_t j = 0; j < atab__arr_cap(v); j++) {
            const atab_atom *a;
            if (atab__slot_full(v, j) && !atab_is_static(a = atab__slot_atom(*atab__slot_ptr(v, j))) &&
                (__atomic_load_n(atab__count_word(a), __ATOMIC_RELAXED) & ATAB__REF_QUEUED))
                zeros += atab__count_unqueue(a, 0) == 0;
        }
    }
    return zeros;
}

static void fork_child(void)
{
    for (atab_table *t = g_tables; t; t = t->next_table) {
        pthread_mutex_unlock(&t->chunk_lock);
        for (atab__rec **p = &t->recs; *p;) {
            atab__rec *r = *p;
            if (mine(r)) {
                unqueue_all(t, r);   /* counted below, with the others' */
                p = &r->next;
                continue;
            }
            *p = r->next;   /* its thread is not in this process */
            give_back_rec(t, r);
        }
        /* atoms a vanished thread marked queued but had not counted on
        ** its queue yet (atab__queue_push) are still marked queued: the
        ** scan frees them for a full sweep */
        __atomic_add_fetch(&t->unused, unqueue_scan(t), __ATOMIC_RELAXED);
        atab__solo_child(t);
        pthread_mutex_lock(&t->chunk_lock);
    }
    fork_parent();
}

static void register_fork(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void atab__threads_init(atab_table *t)
{
    static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
    pthread_mutex_init(&t->reg_lock, NULL);
    atab__have_membarrier();
    pthread_once(&fork_once, register_fork);
    pthread_mutex_lock(&g_lock);
    t->id = g_next_id++;
    t->fast_id = atab__have_membarrier() ? t->id : ATAB__FENCED;
    t->fence_served = t->fast_id == ATAB__FENCED;   /* no reader went without a fence */
    t->solo_tid = ATAB__SOLO_UNCLAIMED;   /* table.h: the solo thread */
    t->solo_rec = NULL;
    t->next_table = g_tables;
    g_tables = t;
    pthread_mutex_unlock(&g_lock);
}

void atab__threads_fini(atab_table *t)
{
    pthread_mutex_lock(&g_lock);   /* against exiting threads and fork */
    for (atab_table **p = &g_tables; *p; p = &(*p)->next_table) {
        if (*p == t) {
            *p = t->next_table;
            break;
        }
    }
    while (t->recs) {
        atab__rec *r = t->recs;
        unlink_rec(r);
        free_queue(t, r);   /* the table goes: its atoms too */
        atab__free(t, r->raw, REC_ALLOC);
    }
    pthread_mutex_unlock(&g_lock);
    pthread_mutex_destroy(&t->reg_lock);
}
