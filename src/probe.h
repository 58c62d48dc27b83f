/* SPDX-License-Identifier: MIT */
/*
** probe.h - the probe: one walk over a shard's slot array, for three kinds
** of key (a short one, any key, an atom's address), shared by the
** lock-free readers (intern.c) and the writers under the shard's lock
** (table.c, sweep.c). Layout and encodings in table.h.
*/
#ifndef ATAB_PROBE_H
#define ATAB_PROBE_H

#include "table.h"

typedef int (*atab__match_fn)(const void *key, const atab_atom *a);

/* The atom among group g's slots flagged in m whose tag agrees with h and
** that `match` accepts, or NULL; *at (when not NULL) receives its slot. */
ATAB__INLINE const atab_atom *atab__group_find(atab__arr v, size_t g, uint32_t m, uint64_t h,
                                               atab__match_fn match, const void *key,
                                               size_t *at)
{
    const uint64_t *slots = (const uint64_t *)(const void *)(atab__group_ctrl(v, g) + ATAB__GROUP);
    for (; m; m &= m - 1) {
        unsigned j = (unsigned)__builtin_ctz(m);
        uint64_t s = atab__load_slot(&slots[j]);
        if (atab__slot_may_match(s, h) && match(key, atab__slot_atom(s))) {
            if (at)
                *at = g * ATAB__GROUP + j;
            return atab__slot_atom(s);
        }
    }
    return NULL;
}

/* The atom in groups A (index ga: atab__h_group) and B of h that `match`
** accepts, or NULL; *at (when not NULL) receives its slot. B is read only
** when A has no empty slot: a key goes to B only when A is full, and a
** group that has been full keeps no empty slot until its array is
** rebuilt (table.h). B's control bytes are read only after A's slots: a
** kick puts a key in its group B before its slot in A is emptied and
** reused, so a probe that finds that slot reused finds the key in B. A
** kick needs A full, which it may have become only after the probe read
** A's control bytes with an empty slot: a probe whose match in A failed
** reads them again, after its slots, and reads B when A is full now. Most
** of A's slots lie on the two lines after its control bytes' (a group is
** 144 bytes): both are prefetched before the tags are read, so that in a
** table past the caches their misses overlap the tags' instead of
** following them. */
ATAB__INLINE const atab_atom *atab__probe_ab_at(atab__arr v, size_t ga, uint64_t h,
                                                atab__match_fn match, const void *key,
                                                size_t *at)
{
    const uint8_t *ctrl = atab__group_ctrl(v, ga);
    __builtin_prefetch(ctrl + 64);
    __builtin_prefetch(ctrl + 128);
    atab__group gra = atab__group_read(v, ga, atab__h_ctrl(h));
    ATAB__PAUSE("probe:group_a", ctrl);
    const atab_atom *a = atab__group_find(v, ga, gra.match, h, match, key, at);
    if (!a && gra.match && gra.empty)   /* a slot matched, but no longer: A may */
        gra = atab__group_read(v, ga, atab__h_ctrl(h));   /* have filled and kicked */
    if (!a && !gra.empty) {   /* A never filled: no key of A went on to B */
        size_t gb = atab__h_group2(h, v.ngroups);
        a = atab__group_find(v, gb, atab__group_read(v, gb, atab__h_ctrl(h)).match, h, match,
                             key, at);
    }
    return a;
}

/* atab__probe_ab_at, with h's group A found here. */
ATAB__INLINE const atab_atom *atab__probe_ab(atab__arr v, uint64_t h, atab__match_fn match,
                                             const void *key, size_t *at)
{
    return atab__probe_ab_at(v, atab__h_group(h, v.ngroups), h, match, key, at);
}

/* The probe from group B on, while the group read has no empty slot, in an
** array whose keys overflowed (table.h). */
ATAB__INLINE const atab_atom *atab__probe_from_b(atab__arr v, uint64_t h,
                                                 atab__match_fn match, const void *key,
                                                 size_t *at)
{
    unsigned c = atab__h_ctrl(h);
    size_t g = atab__h_group2(h, v.ngroups);
    for (size_t n = 0; n < v.ngroups; n++) {
        atab__group gr = atab__group_read(v, g, c);
        const atab_atom *a = atab__group_find(v, g, gr.match, h, match, key, at);
        if (a || gr.empty || !v.overflow)
            return a;
        if (++g == v.ngroups)
            g = 0;
    }
    return NULL;
}

/* The atom in v that `match` accepts for a key of hash h, or NULL; *at
** (when not NULL) receives its slot. Safe without the shard's lock inside
** a section: it reads each group's control bytes at once, then only the
** slots they flag, each with an acquire load. */
ATAB__INLINE const atab_atom *atab__probe(atab__arr v, uint64_t h, atab__match_fn match,
                                          const void *key, size_t *at)
{
    const atab_atom *a = atab__probe_ab(v, h, match, key, at);
    return a || !v.overflow ? a : atab__probe_from_b(v, h, match, key, at);
}

ATAB__INLINE int atab__match_key(const void *key, const atab_atom *a)
{
    return atab__key_equals(key, a);
}

/* A short UTF-8 key (1 to ATAB__SHORT_KEY bytes): two words, no UTF-16,
** no memcmp. */
typedef struct atab__short_key {
    const char *s;
    size_t len;
} atab__short_key;

ATAB__INLINE int atab__match_short(const void *key, const atab_atom *a)
{
    const atab__short_key *k = key;
    if (k->len - 1 >= ATAB__SHORT_KEY)
        __builtin_unreachable();   /* 1..32: the compiler drops eq_bytes' memcmp */
    return atab_len(a) == k->len && atab__eq_bytes(atab_chars(a), k->s, k->len);
}

ATAB__INLINE int atab__match_atom(const void *key, const atab_atom *a)
{
    return key == a;
}

/* Is atom a, of hash h under t's seed, in t's table? Its shard's array
** probed for its address, lock-free, inside a section (the caller's). */
ATAB__INLINE int atab__in_table(const atab_table *t, const atab_atom *a, uint64_t h)
{
    atab__arr v = atab__arr_of(__atomic_load_n(&t->arrs[atab__h_shard(h)], __ATOMIC_ACQUIRE));
    return atab__probe(v, h, atab__match_atom, a, NULL) != NULL;
}

/* A hit in way 1 of this thread's cache set e (thread.h), for a key of
** hash h that way 0 did not match, inside a section while
** atab__cache_ours(r): when way 1 is live, its tag agrees with h and
** `match` finds its atom equal to `key`, the entry is made way 0 and a
** spare taken from it, and the atom is returned; NULL otherwise, and for
** an entry an over-release left stale (its spares dropped: the probe then
** takes the reference from the count). */
ATAB__INLINE const atab_atom *atab__cache_way1(atab__rec *r, uint64_t *e, uint64_t h,
                                              atab__match_fn match, const void *key)
{
    uint64_t x = e[1];
    const atab_atom *a = atab__ent_atom(x);
    if (!atab__way1_may(e, h) || !match(key, a))
        return NULL;
    atab__cache_promote(e);
    if (!atab__ent_usable(a, x) && atab__ent_stale(r, e) != 0)
        return NULL;
    atab__ent_take(e, x);
    return a;
}

#endif /* ATAB_PROBE_H */
