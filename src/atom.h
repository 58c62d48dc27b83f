/* SPDX-License-Identifier: MIT */
/*
** atom.h - the dynamic atom object (atom.c) and its reference count.
**
** An atom's count word C (atab__refcnt) is shared by every thread:
**
**   bits 0-27        the count: references, counting the spare references
**                    that threads' caches hold (thread.h), so a count of 0
**                    means unused
**   bit 28, SPARED   a thread's cache has kept a spare reference of it
**                    (set once, by whatever gave an entry the spare:
**                    thread.h; never cleared): a queue sweep leaves such
**                    an atom at 0 to a full sweep, whose flush takes every
**                    spare back first, so no cache is left with spares of
**                    a freed atom even when an over-release took them off
**                    the count
**   bit 29, QUEUED   the atom is on one thread's queue of atoms it left
**                    unused (thread.h); only that thread takes it off
**   REF_SAT and up   saturated: never changes again, never freed
**   REF_DEAD         a sweep took it from 0 under its shard's lock: it is
**                    being unlinked and is freed after a grace period
**
** Revival races a sweep on the one word: a reference from 0 is a CAS
** 0 -> 1 and a sweep's kill is a CAS 0 -> REF_DEAD, so exactly one of them
** wins; the loser of a revival treats the atom as absent. The thread that
** brings a count to 0 sets QUEUED in the same CAS when it can queue the
** atom, so an atom is on one queue at most, and a queued atom is never
** freed but by the thread whose queue holds it (full sweeps kill only an
** unqueued 0). A release that would take the count below what is held is
** refused (atab__count_drop), so a double release can never free an atom
** someone holds through this count.
*/
#ifndef ATAB_ATOM_H
#define ATAB_ATOM_H

#include "hash.h"
#include "hooks.h"

#define ATAB__REF_QUEUED (UINT32_C(1) << 29)
#define ATAB__REF_SPARED (UINT32_C(1) << 28)
#define ATAB__REF_COUNT (ATAB__REF_SPARED - 1)   /* the count's bits */
#define ATAB__REF_SAT (UINT32_C(1) << 30)
#define ATAB__REF_PINNED (ATAB__REF_SAT + (ATAB__REF_SAT >> 1))
#define ATAB__REF_DEAD UINT32_MAX

/* A new dynamic atom with count 1, or NULL (error set): in `block` when
** given (a block carved from a chunk, of the key's size class: chunk.h),
** else in a new allocation whose bytes are charged to `acct` (alloc.c:
** atab__alloc_in), and freed from it. */
ATAB__HIDDEN atab_atom *atab__atom_new(atab_table *t, size_t *acct, const atab__key *k,
                                       atab_atom *block);
/* An atom is freed by chunk.h's atab__atom_free (its block goes back to
** its chunk, or its own allocation is freed). */

/* The bytes a dynamic atom of len bytes is allocated with: its header, its
** characters and their NUL (a recycled block, whose header is a link, is
** counted by the length it is kept under). */
static inline size_t atab__atom_bytes(size_t len)
{
    return sizeof(atab_atom) + len + 1;
}

static inline size_t atab__atom_size(const atab_atom *a)
{
    return atab__atom_bytes(atab_len(a));
}

static inline uint32_t *atab__count_word(const atab_atom *a)
{
    return (uint32_t *)&a->atab__refcnt;
}

/* The count: references held, or REF_SAT and up (saturated or dead). */
static inline uint32_t atab__count(const atab_atom *a)
{
    uint32_t c = __atomic_load_n(atab__count_word(a), __ATOMIC_ACQUIRE);
    return c >= ATAB__REF_SAT ? c : c & ATAB__REF_COUNT;
}

/* Takes n references on a live atom, and sets the bits `mark` (0 or
** SPARED) in the same CAS. 0, or -1 when a sweep has killed it (then it is
** absent: the caller looks again under the shard lock). A saturated count
** stays as it is. */
static inline int atab__count_take_mark(const atab_atom *a, uint32_t n, uint32_t mark)
{
    ATAB__PAUSE("revive:cas", a);
    uint32_t *w = atab__count_word(a), c = __atomic_load_n(w, __ATOMIC_RELAXED);
    do {
        if (c >= ATAB__REF_SAT)
            return c == ATAB__REF_DEAD ? -1 : 0;
    } while (!__atomic_compare_exchange_n(w, &c, (c & ATAB__REF_COUNT) + n > ATAB__REF_COUNT
                                                     ? ATAB__REF_PINNED : (c + n) | mark,
                                          1, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
    return 0;
}

static inline int atab__count_take(const atab_atom *a, uint32_t n)
{
    return atab__count_take_mark(a, n, 0);
}

/* Writes the atom of the len <= ATAB__SHORT_KEY UTF-8 bytes at s into
** block a, with count 1, and returns it. The bytes are copied a word (or
** half a word, or two words) from each end, overlapping in the middle, and
** tested for ASCII as they go. */
static inline atab_atom *atab__atom_init_short(atab_atom *a, const char *s, size_t len)
{
    char *c = (char *)(a + 1);
    uint64_t x = 0, y = 0;
    if (len > 16) {
        uint64_t x2, y2;
        memcpy(&x, s, 8), memcpy(&x2, s + 8, 8);
        memcpy(&y, s + len - 16, 8), memcpy(&y2, s + len - 8, 8);
        memcpy(c, &x, 8), memcpy(c + 8, &x2, 8);
        memcpy(c + len - 16, &y, 8), memcpy(c + len - 8, &y2, 8);
        x |= x2, y |= y2;
    } else if (len >= 8) {
        memcpy(&x, s, 8);
        memcpy(&y, s + len - 8, 8);
        memcpy(c, &x, 8);
        memcpy(c + len - 8, &y, 8);
    } else if (len >= 4) {
        uint32_t x4, y4;
        memcpy(&x4, s, 4);
        memcpy(&y4, s + len - 4, 4);
        memcpy(c, &x4, 4);
        memcpy(c + len - 4, &y4, 4);
        x = x4, y = y4;
    } else {
        for (size_t i = 0; i < len; i++)
            x |= (unsigned char)(c[i] = s[i]);
    }
    c[len] = '\0';
    uint32_t ascii = (x | y) & UINT64_C(0x8080808080808080) ? 0 : ATAB__ASCII;
    a->atab__len_flags = (uint32_t)(len << ATAB__LEN_SHIFT) | ascii;
    a->atab__refcnt = 1;
    return a;
}

/* What atab__count_drop did. */
enum { ATAB__DROP_LIVE, ATAB__DROP_UNUSED, ATAB__DROP_QUEUE, ATAB__DROP_MISUSE };

/* Drops n references, keeping at least `floor` (spares the caller's own
** cache holds, which it is not dropping). A drop below that would release
** references nobody holds: nothing changes and DROP_MISUSE is returned.
** A killed atom (a sweep's, not yet freed) is held by nobody either.
** When the count reaches 0: DROP_QUEUE when `queue` and the atom was on no
** queue (QUEUED is set: the caller puts it on its queue), DROP_UNUSED when
** it is on none, DROP_LIVE when it is on one already (its owner sees to it). */
static inline int atab__count_drop(const atab_atom *a, uint32_t n, uint32_t floor, int queue)
{
    uint32_t *w = atab__count_word(a), c = __atomic_load_n(w, __ATOMIC_RELAXED), nc;
    do {
        if (c >= ATAB__REF_SAT)   /* saturated, or killed: nobody holds it */
            return c == ATAB__REF_DEAD ? ATAB__DROP_MISUSE : ATAB__DROP_LIVE;
        if ((c & ATAB__REF_COUNT) < (uint64_t)n + floor)
            return ATAB__DROP_MISUSE;
        nc = c - n;
        if (!(nc & ATAB__REF_COUNT) && queue)
            nc |= ATAB__REF_QUEUED;
    } while (!__atomic_compare_exchange_n(w, &c, nc, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    return (nc & ATAB__REF_COUNT) || (c & ATAB__REF_QUEUED) ? ATAB__DROP_LIVE
           : nc & ATAB__REF_QUEUED                          ? ATAB__DROP_QUEUE
                                                            : ATAB__DROP_UNUSED;
}

/* atab__count_drop(a, 1, 0, 1)'s most common case, a transient atom's
** release: a count of exactly 1 (the caller's reference; not SPARED, on
** no queue) goes to 0 and QUEUED in one CAS. Non-zero when it did (the
** caller queues a); 0, nothing changed, for any other count word. */
static inline int atab__count_drop_sole(const atab_atom *a)
{
    uint32_t c = 1;
    return __atomic_compare_exchange_n(atab__count_word(a), &c, ATAB__REF_QUEUED, 0,
                                       __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* Marks a: a cache keeps spares of it (the caller holds a reference). A
** saturated count is left as it is (it never changes again, and such an
** atom is never freed). */
static inline void atab__count_mark_spared(const atab_atom *a)
{
    uint32_t *w = atab__count_word(a), c = __atomic_load_n(w, __ATOMIC_RELAXED);
    do {
        if (c >= ATAB__REF_SAT || (c & ATAB__REF_SPARED))
            return;
    } while (!__atomic_compare_exchange_n(w, &c, c | ATAB__REF_SPARED, 1, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
}

/* A full sweep's kill, after its flush: an unqueued 0 -> REF_DEAD.
** Non-zero when it won. */
static inline int atab__count_kill(const atab_atom *a)
{
    uint32_t *w = atab__count_word(a), c = __atomic_load_n(w, __ATOMIC_RELAXED);
    return (c & ~ATAB__REF_SPARED) == 0 &&
           __atomic_compare_exchange_n(w, &c, ATAB__REF_DEAD, 0, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

/* Takes a queued atom off its owner's queue: with `kill`, kills it when
** its count is 0 and no cache ever kept spares of it (SPARED: left to a
** full sweep), else clears QUEUED, so that the next release to 0 queues
** it again. Returns REF_DEAD when it killed the atom, else the count (or
** the saturated word): at 0, the atom is unused on no queue, and a full
** sweep may free it once this store is seen (release order): touch it no
** more. */
static inline uint32_t atab__count_unqueue(const atab_atom *a, int kill)
{
    uint32_t *w = atab__count_word(a), c = __atomic_load_n(w, __ATOMIC_RELAXED), nc;
    do {
        if (c >= ATAB__REF_SAT)
            return c;   /* saturated while queued: it stays */
        nc = c == ATAB__REF_QUEUED && kill ? ATAB__REF_DEAD : c & ~ATAB__REF_QUEUED;
    } while (!__atomic_compare_exchange_n(w, &c, nc, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    return nc == ATAB__REF_DEAD ? nc : nc & ATAB__REF_COUNT;
}

/* atab__count_unqueue(a, 1)'s common case: a queued atom at 0 that no
** cache kept spares of (exactly QUEUED) killed, in one CAS. Non-zero when
** it did; else nothing changed. */
static inline int atab__count_kill_queued(const atab_atom *a)
{
    uint32_t c = ATAB__REF_QUEUED;
    return __atomic_compare_exchange_n(atab__count_word(a), &c, ATAB__REF_DEAD, 0,
                                       __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

#endif /* ATAB_ATOM_H */
