/* SPDX-License-Identifier: MIT */
/*
** static.c - static atom sets: registration on a table and lookup.
**
** A set is read-only data written by the generator (tools/atomtab-genstatic.c):
** the atoms, with the dynamic atoms' header and ATAB__STATIC set, and a
** perfect-hash index (CHD) over them. Registering sets on a table stores
** pointers to them, nothing per atom, so a table with 10,000 static atoms
** costs what a table with none does to create.
**
** Finding a static atom, and the per-table seed. The table's slots are
** keyed by a seeded hash (a random seed per table, against hash flooding:
** hash.h, short keys inline, XXH3 for longer ones); the index cannot be
** keyed by a seed only known at run time, so it uses its own fixed hash
** (static_hash.h, seeded by a constant the generator chose). A key that
** misses the table is first tested against each set's miss filter (a few
** loads, no hashing); only keys the filter lets through pay that hash, and
** an atom found is then cached in the shard's seeded slots, so every later
** lookup of that string, on any thread, is the ordinary lock-free hit: one
** hash, one probe, and no reference counting, since the atom is static.
** Measured with callgrind by bench/static_hits.c (make bench-static).
**
** Overlapping sets: sets are searched in registration order, the default
** set first, then the options' sets as given; the first set holding a
** string gives its atom. A set given twice is registered once.
*/
#include "table.h"
#include "atomtab_atoms.h"   /* generated: the default set */

/* Static atoms must be found through UTF-16 too: intern_u16 (intern.c)
** converts keys up to ATAB__U16_STACK UTF-8 bytes on the stack and only
** those reach the static lookup, so no static atom may be longer. */
_Static_assert(ATAB_STATIC_MAXLEN <= ATAB__U16_STACK, "static atoms too long for UTF-16");

/* The sets of a table with the default set only: shared, not allocated. */
static const atab_static_set *const default_only[1] = {&atab_static_default};

/* Does s look like a set the generator wrote for this library? Its arrays
** must fit the read-only bytes it declares (each atom at least a header
** and a NUL padded to 4; disp, slots and the filter as sized), so a count
** that says more than the arrays hold is refused, not read past. */
static int set_ok(const atab_static_set *s)
{
    return s && s->abi == ATAB_STATIC_ABI && s->n && s->n_buckets && s->n_slots >= s->n &&
           s->maxlen <= ATAB_STATIC_MAXLEN && s->atoms && s->disp && s->slots &&
           s->filter && s->filter_log2 >= 6 && s->filter_log2 <= 31 &&
           (uint64_t)s->n * (sizeof(atab_atom) + 4) + (uint64_t)s->n_buckets * 4 +
                   (uint64_t)s->n_slots * 4 + ((uint64_t)1 << s->filter_log2) / 8 <=
               s->bytes;
}

/* Is the options' i-th set registered already, earlier in the order (the
** default set first, then the options' sets)? */
static int seen_before(const atab_options *o, size_t i)
{
    const atab_static_set *s = o->static_sets[i];
    if (s == &atab_static_default && !(o->flags & ATAB_NO_DEFAULT_STATICS))
        return 1;
    for (size_t k = 0; k < i; k++)
        if (o->static_sets[k] == s)
            return 1;
    return 0;
}

/* Fills out (when not NULL) with the default set, if wanted, then the
** options' sets, each once; returns how many. */
static size_t gather(const atab_options *o, const atab_static_set **out)
{
    size_t n = 0;
    if (!(o->flags & ATAB_NO_DEFAULT_STATICS)) {
        if (out)
            out[n] = &atab_static_default;
        n++;
    }
    for (size_t i = 0; i < o->n_static_sets; i++) {
        if (seen_before(o, i))
            continue;
        if (out)
            out[n] = o->static_sets[i];
        n++;
    }
    return n;
}

static const uint64_t no_filter[1];   /* the filter of a table with no sets */

/* Points t->filter0 at the first set's filter (static_may_hold's first
** test, with no index into the sets), or at no_filter. */
static void set_filter0(atab_table *t)
{
    t->filter0 = t->n_sets ? t->sets[0]->filter : no_filter;
    t->filter0_shift = t->n_sets ? 32 - t->sets[0]->filter_log2 : 31;
}

/* Registers the sets: no work per atom. -1 with ATAB_EABI for a set of
** another ATAB_STATIC_ABI, ATAB_EINVAL for a NULL or malformed set,
** ATAB_ENOMEM / ATAB_ELIMIT when the list cannot be kept. */
int atab__static_init(atab_table *t, const atab_options *o)
{
    t->sets = NULL;
    t->n_sets = 0;
    t->static_maxlen = 0;
    set_filter0(t);
    for (size_t i = 0; i < o->n_static_sets; i++) {
        const atab_static_set *set = o->static_sets[i];
        if (set && set->abi != ATAB_STATIC_ABI) {
            atab__set_error(ATAB_EABI);   /* generated for another layout */
            return -1;
        }
        if (!set_ok(set)) {
            atab__set_error(ATAB_EINVAL);
            return -1;
        }
    }
    size_t n = gather(o, NULL);
    if (n == 0)
        return 0;
    if (n == 1 && !(o->flags & ATAB_NO_DEFAULT_STATICS)) {
        t->sets = (const atab_static_set **)default_only;   /* never written */
    } else {
        t->sets = atab__alloc(t, n * sizeof *t->sets);
        if (!t->sets)
            return -1;
        gather(o, t->sets);
    }
    t->n_sets = n;
    set_filter0(t);
    for (size_t i = 0; i < n; i++)
        if (t->sets[i]->maxlen > t->static_maxlen)
            t->static_maxlen = t->sets[i]->maxlen;
    return 0;
}

const void *atab__static_heap(const atab_table *t, size_t *bytes)
{
    if (!t->sets || t->sets == (const atab_static_set **)default_only) {
        *bytes = 0;
        return NULL;
    }
    *bytes = t->n_sets * sizeof *t->sets;
    return t->sets;
}

void atab__static_fini(atab_table *t)
{
    size_t bytes;
    const void *p = atab__static_heap(t, &bytes);
    if (p)
        atab__free(t, (void *)p, bytes);
    t->sets = NULL;
    t->n_sets = 0;
    set_filter0(t);
}

/* The atom of set s with these bytes (hash h under s->seed), or NULL. */
static const atab_atom *set_find(const atab_static_set *s, const char *str,
                                 size_t len, uint64_t h)
{
    uint32_t d = s->disp[atab__sh_bucket(h, s->n_buckets)];
    uint32_t off = s->slots[atab__sh_slot(h, d, s->n_slots)];
    if (off == UINT32_MAX)
        return NULL;
    const atab_atom *a = (const atab_atom *)(const void *)((const char *)s->atoms + off);
    return atab_len(a) == len && atab__eq_bytes(atab_chars(a), str, len) ? a : NULL;
}

/* Searches the sets in order; hashes once per distinct seed in a row. */
const atab_atom *atab__static_find(const atab_table *t, const char *s, size_t len)
{
    uint64_t h = 0, seed = 0;
    int hashed = 0;
    for (size_t i = 0; i < t->n_sets; i++) {
        const atab_static_set *set = t->sets[i];
        if (len > set->maxlen)
            continue;
        if (!atab__set_may_hold(set, s, len))
            continue;   /* in no slot of this set: no hashing */
        if (!hashed || set->seed != seed) {
            seed = set->seed;
            h = atab__static_hash(seed, s, len);
            hashed = 1;
        }
        const atab_atom *a = set_find(set, s, len, h);
        if (a)
            return a;
    }
    return NULL;
}
