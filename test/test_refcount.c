/* SPDX-License-Identifier: MIT */
/*
** test_refcount.c - reference counts, revival before a sweep, sweeps that
** free exactly the unused atoms, the automatic sweep threshold.
*/
#include <pthread.h>
#include <semaphore.h>

#include "test_util.h"
#include "atab_int.h"
#include "probe.h"

static void each_intern_is_a_reference(void **state)
{
    (void)state;
    atab_table *t = sweeping_table(NULL, 0, SIZE_MAX);
    const atab_atom *a = atab_intern_cstr(t, "x");
    atab_intern_cstr(t, "x");
    atab_ref(a);
    /* three references: two releases leave it used */
    assert_int_equal(atab_release(t, a), ATAB_OK);
    assert_int_equal(atab_release(t, a), ATAB_OK);
    assert_int_equal(atab_gc(t), 0);
    assert_ptr_equal(atab_lookup(t, "x", 1), a);   /* +1 again */
    atab_release(t, a);
    atab_release(t, a);
    atab_stats st;
    atab_get_stats(t, &st);
    assert_int_equal(st.atoms, 1);
    assert_int_equal(st.unused, 1);
    assert_int_equal(atab_gc(t), 1);
    assert_null(atab_lookup(t, "x", 1));
    assert_int_equal(atab_count(t), 0);
    atab_table_free(t);
}

static void an_unused_atom_interned_again_is_revived_not_reallocated(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = sweeping_table(&al, 0, SIZE_MAX);
    const atab_atom *a = atab_intern_cstr(t, "revive-me");
    atab_release(t, a);
    long allocs = c.allocs;
    const atab_atom *b = atab_intern_cstr(t, "revive-me");
    assert_ptr_equal(a, b);
    assert_int_equal(c.allocs, allocs);
    assert_int_equal(atab_gc(t), 0);   /* it is used again */
    assert_ptr_equal(atab_lookup(t, "revive-me", 9), a);
    atab_release(t, a);
    atab_release(t, a);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

/* Interns "PREFIX0" to "PREFIX<n-1>" into atoms[]; with `alone`, checks
** after each that no replaced array waits (the thread is alone). */
static void intern_numbered(atab_table *t, const char *prefix, const atab_atom **atoms,
                            int n, int alone)
{
    char buf[32];
    for (int i = 0; i < n; i++) {
        snprintf(buf, sizeof buf, "%s%d", prefix, i);
        atoms[i] = atab_intern_cstr(t, buf);
        if (alone)
            assert_int_equal(t->n_retired, 0);
    }
}

/* Does one of t's pools (chunk.h) have block p in use? */
static int pool_holds(atab_table *t, const void *p)
{
    for (const atab__pool *pl = t->pools; pl; pl = pl->next) {
        const char *base = (const char *)(pl + 1);
        size_t i = (size_t)((const char *)p - base) / pl->bytes;
        if ((const char *)p >= base && i < pl->n && base + i * pl->bytes == p)
            return (pl->used >> i) & 1;
    }
    return 0;
}

static void sweep_frees_exactly_the_unused(void **state)
{
    (void)state;
    enum { N = 3000 };
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = sweeping_table(&al, 0, SIZE_MAX);
    const atab_atom *atoms[N];
    char buf[32];
    parked other;
    park(&other, t);   /* a reader besides this thread */
    intern_numbered(t, "atom", atoms, N, 0);
    /* the list of replaced arrays empties itself every ATAB__RETIRED_MAX
    ** or so: a few more inserts leave some on it, whatever the hash */
    const atab_atom *more[256];
    int extra = 0;
    while (t->recs && t->n_retired == 0 && extra < 256) {
        snprintf(buf, sizeof buf, "more%d", extra);
        more[extra++] = atab_intern_cstr(t, buf);
    }
    long before = c.live;
    uint32_t retired = t->n_retired;
    uint64_t words[ATAB__RETIRED_MAX];
    memcpy(words, t->retired, retired * sizeof *words);
    if (t->recs)   /* arrays the inserts replaced wait for a grace period */
        assert_true(retired > 0);
    else   /* ATAB_DEBUG keeps no records: every reader locks, nothing waits */
        assert_int_equal(retired, 0);
    assert_int_equal(atab_gc(t), 0);   /* no atom unused: its grace period frees them */
    assert_int_equal(t->n_retired, 0);
    long own = 0;   /* each either freed, or back in its pool */
    for (uint32_t i = 0; i < retired; i++) {
        size_t bytes = atab__arr_bytes(words[i]);
        own += !atab__pooled(bytes);
        if (atab__pooled(bytes))
            assert_false(pool_holds(t, atab__arr_of(words[i]).base));
    }
    assert_true(c.live <= before - own);   /* and the pools they emptied */
    size_t gone = 0;   /* the released atoms' bytes */
    for (int i = 0; i < N; i += 3) {
        gone += sizeof(atab_atom) + atab_len(atoms[i]) + 1;
        atab_release(t, atoms[i]);
    }
    int64_t objects = report_amount(t, "explicit/atoms/dynamic/atom-objects", -1);
    size_t freed = atab_gc(t);
    assert_int_equal(freed, (N + 2) / 3);
    /* small atoms are carved from chunks (no allocation of their own): the
    ** report's atom bytes say that exactly the released ones went */
    assert_int_equal(report_amount(t, "explicit/atoms/dynamic/atom-objects", -1),
                     objects - (int64_t)gone);
    assert_int_equal(atab_count(t), N + extra - freed);
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof buf, "atom%d", i);
        const atab_atom *a = atab_lookup(t, buf, strlen(buf));
        if (i % 3 == 0) {
            assert_null(a);
        } else {
            assert_ptr_equal(a, atoms[i]);
            atab_release(t, a);
        }
    }
    for (int i = 0; i < extra; i++)
        atab_release(t, more[i]);
    assert_int_equal(atab_gc(t), (size_t)extra);
    unpark(&other);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

/* A full sweep unlinks into a buffer that holds 256 atoms on the stack and
** grows from the table's allocator. Where it cannot grow, the sweep frees
** what it holds and comes back for the rest of the shard it was in: with
** every allocation failing, atab_gc still frees every unused atom (and
** tried to grow the buffer: the failure fell inside the call). Every other
** atom stays held, so that no shard empties and shrinks (a shrink ends a
** batch too: 4 arrays to free). */
static void a_sweep_whose_buffer_cannot_grow_still_frees_every_unused_atom(void **state)
{
    (void)state;
    enum { N = 6000 };
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = sweeping_table(&al, 0, SIZE_MAX);
    static const atab_atom *atoms[N];   /* 48 KB: off the stack */
    char buf[32];
    intern_numbered(t, "unused", atoms, N, 0);
    for (int i = 0; i < N; i += 2)
        assert_int_equal(atab_release(t, atoms[i]), ATAB_OK);
    long attempts = c.attempts;
    c.fail_at = attempts + 1, c.fail_after = 1;   /* every allocation fails */
    assert_int_equal(atab_gc(t), N / 2);
    assert_true(c.attempts > attempts);   /* it asked for more room, refused */
    assert_int_equal(atab_count(t), N / 2);
    c.fail_at = 0;
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof buf, "unused%d", i);
        const atab_atom *a = atab_lookup(t, buf, strlen(buf));
        if (i % 2 == 0) {
            assert_null(a);
        } else {
            assert_ptr_equal(a, atoms[i]);
            assert_int_equal(atab_release(t, a), ATAB_OK);
            assert_int_equal(atab_release(t, a), ATAB_OK);
        }
    }
    assert_int_equal(atab_gc(t), N / 2);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
    assert_false(c.size_mismatch);
}

/* A thread alone on its table has no reader to wait for: an array its
** inserts replace is freed at once, and a sweep frees what it unlinks
** without a grace period. */
static void a_thread_alone_frees_replaced_arrays_at_once(void **state)
{
    (void)state;
    enum { N = 3000 };
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = sweeping_table(&al, 0, SIZE_MAX);
    const atab_atom *atoms[N];
    intern_numbered(t, "atom", atoms, N, 1);
    long before = c.live;
    assert_int_equal(atab_gc(t), 0);
    assert_int_equal(c.live, before);   /* nothing was waiting */
    for (int i = 0; i < N; i++)
        atab_release(t, atoms[i]);
    assert_int_equal(atab_gc(t), N);
    assert_int_equal(atab_count(t), 0);
    parked other;
    park(&other, t);   /* now another thread has a record: growth retires again */
    intern_numbered(t, "again", atoms, N, 0);
    if (t->recs)
        assert_true(t->n_retired > 0);
    else   /* ATAB_DEBUG keeps no records: every reader locks, nothing waits */
        assert_int_equal(t->n_retired, 0);
    for (int i = 0; i < N; i++)
        atab_release(t, atoms[i]);
    unpark(&other);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

/* Keys of one shard that share their group A (for arrays of up to 4,096
** groups), by brute force over the table's own hash: `n` of them, written
** to keys[] (each up to 23 bytes). */
static void keys_sharing_group_a(atab_table *t, char (*keys)[24], int n)
{
    unsigned long long i = 0;
    for (int found = 0; found < n; i++) {
        char buf[24];
        int len = snprintf(buf, sizeof buf, "spill-%llu", i);
        uint64_t h = atab__table_hash(t, buf, (size_t)len);
        if (atab__h_shard(h) == 0 && atab__h_place(h) >> 52 == 0)
            memcpy(keys[found++], buf, sizeof buf);
    }
}

/* A key goes on to its group B only when its group A is full, and a probe
** that finds an empty slot in A stops there: so freeing the keys of a full
** group A must not leave it an empty slot while keys of that A live in B.
** The keys that spilled are found after every other key of their A is
** swept, and each string is still one atom. */
static void keys_that_spilled_to_group_b_are_found_after_their_a_empties(void **state)
{
    (void)state;
    enum { N = 40 };
    atab_table *t = sweeping_table(NULL, 7, SIZE_MAX);
    char keys[N][24];
    const atab_atom *a[N];
    keys_sharing_group_a(t, keys, N);
    for (int i = 0; i < N; i++)
        assert_non_null(a[i] = atab_intern_cstr(t, keys[i]));
    atab__arr v = atab__arr_of(t->arrs[0]);
    assert_true(v.ngroups <= 4096);
    size_t ga = atab__h_group(atab__table_hash(t, keys[0], strlen(keys[0])), v.ngroups);
    int in_a = 0;
    for (int i = 0; i < N; i++) {
        size_t at = SIZE_MAX;
        uint64_t h = atab__table_hash(t, keys[i], strlen(keys[i]));
        assert_ptr_equal(atab__probe(v, h, atab__match_atom, a[i], &at), a[i]);
        if (at / ATAB__GROUP == ga) {
            in_a++;
            atab_release(t, a[i]);   /* the keys that sit in A go */
            a[i] = NULL;
        }
    }
    assert_int_equal(in_a, ATAB__GROUP);   /* A filled, the rest went on */
    assert_int_equal(atab_gc(t), ATAB__GROUP);
    for (int i = 0; i < N; i++) {
        const atab_atom *b = atab_lookup(t, keys[i], strlen(keys[i]));
        assert_ptr_equal(b, a[i]);   /* each spilled key found; the freed absent */
        if (b)
            atab_release(t, b);
    }
    for (int i = 0; i < N; i++) {
        const atab_atom *b = atab_intern_cstr(t, keys[i]);
        assert_non_null(b);
        if (a[i]) {
            assert_ptr_equal(b, a[i]);   /* not a second atom of the string */
            atab_release(t, b);
        } else {
            a[i] = b;
        }
    }
    assert_int_equal(atab_count(t), N);
    for (int i = 0; i < N; i++)
        atab_release(t, a[i]);
    atab_table_free(t);
}

static void crossing_the_threshold_sweeps_by_itself(void **state)
{
    (void)state;
    atab_table *t = sweeping_table(NULL, 0, 100);
    const atab_atom *atoms[150];
    char buf[32];
    for (int i = 0; i < 150; i++) {
        snprintf(buf, sizeof buf, "t%d", i);
        atoms[i] = atab_intern_cstr(t, buf);
    }
    for (int i = 0; i < 99; i++)
        atab_release(t, atoms[i]);
    assert_int_equal(atab_count(t), 150);   /* 99 unused: below threshold */
    atab_release(t, atoms[99]);              /* the 100th: sweep */
    assert_int_equal(atab_count(t), 50);
    assert_null(atab_lookup(t, "t0", 2));
    assert_ptr_equal(atab_lookup(t, "t100", 4), atoms[100]);
    atab_table_free(t);
}

/* A threshold of 1 makes a queue of one atom: the release that leaves an
** atom unused fills it, and its thread sweeps it after that release, as
** with any threshold (the header: "when the queue holds the sweep
** threshold's worth ... that thread sweeps it after the release"). The
** queue is made by the release that first needs one, with that atom in
** it; that made it full, but nothing asked for its sweep, so the atom
** stayed until some later release. */
static void a_threshold_of_one_sweeps_each_unused_atom_after_its_release(void **state)
{
    (void)state;
    atab_table *t = sweeping_table(NULL, 0, 1);
    const atab_atom *a = atab_intern_cstr(t, "first");
    assert_int_equal(atab_release(t, a), ATAB_OK);   /* its queue is made now */
    assert_int_equal(atab_count(t), 0);
    assert_null(atab_lookup(t, "first", 5));
    const atab_atom *b = atab_intern_cstr(t, "second");
    assert_int_equal(atab_release(t, b), ATAB_OK);   /* the queue made before */
    assert_int_equal(atab_count(t), 0);
    atab_gc(t);   /* frees the queues: the next release makes one again */
    const atab_atom *c = atab_intern_cstr(t, "third");
    assert_int_equal(atab_release(t, c), ATAB_OK);
    assert_int_equal(atab_count(t), 0);
    atab_table_free(t);
}

#ifndef ATAB_DEBUG   /* debug builds keep no records: no queues, no spares */
/* A full sweep leaves the unused count at the atoms it left unused, not at
** those its own flush brought to 0 (the queue's) and then freed: the
** threshold starts the next full sweep after that many new unused atoms,
** not at the next one. Here the threshold is 4, and after a full sweep one
** atom left for a full sweep (an entry marked it SPARED, so its queue sweep
** only counts it) stays in the table. */
static void a_full_sweep_counts_none_of_the_atoms_it_freed_as_unused(void **state)
{
    (void)state;
    char key[16];
    atab_table *t = sweeping_table(NULL, 0, 4);   /* queues of 4 */
    for (int i = 0; i < 3; i++) {   /* queued: 3 of 4 */
        snprintf(key, sizeof key, "gone-%d", i);
        assert_int_equal(atab_release(t, atab_intern_cstr(t, key)), ATAB_OK);
    }
    assert_int_equal(atab_gc(t), 3);
    const atab_atom *s = atab_intern_cstr(t, "spared");
    assert_ptr_equal(atab_intern_cstr(t, "spared"), s);   /* a hit: its entry, SPARED */
    assert_int_equal(atab_release(t, s), ATAB_OK);
    assert_int_equal(atab_release(t, s), ATAB_OK);
    for (int i = 0; i < 3; i++) {   /* the queue fills: its sweep frees these */
        snprintf(key, sizeof key, "fresh-%d", i);
        assert_int_equal(atab_release(t, atab_intern_cstr(t, key)), ATAB_OK);
    }
    assert_int_equal(atab_count(t), 1);   /* "spared", counted unused: 1 of 4 */
    assert_ptr_equal(atab_lookup(t, "spared", 6), s);   /* revived: one reference */
    assert_int_equal(atab_release(t, s), ATAB_OK);
    assert_int_equal(atab_gc(t), 1);
    assert_int_equal(atab_count(t), 0);
    atab_table_free(t);
}
#endif

/* A release of a reference nobody holds is refused (ATAB_EREFS, counted in
** misuse) and changes nothing, so the sequence intern, release, release,
** intern, gc frees nothing that the second intern's holder holds. */
static void a_double_release_never_frees_a_held_atom(void **state)
{
    (void)state;
    atab_table *t = sweeping_table(NULL, 0, SIZE_MAX);
    const atab_atom *a = atab_intern_cstr(t, "once");
    assert_int_equal(atab_release(t, a), ATAB_OK);
    assert_int_equal(atab_release(t, a), ATAB_EREFS);
    assert_int_equal(atab_last_error(), ATAB_EREFS);
    assert_ptr_equal(atab_intern_cstr(t, "once"), a);   /* revived, held again */
    assert_int_equal(atab_gc(t), 0);
    atab_stats st;
    atab_get_stats(t, &st);
    assert_int_equal(st.misuse, 1);
    assert_int_equal(st.atoms, 1);
    assert_int_equal(st.unused, 0);
    assert_ptr_equal(atab_intern_cstr(t, "once"), a);   /* still intact */
    assert_int_equal(atab_release(t, a), ATAB_OK);
    assert_int_equal(atab_release(t, a), ATAB_OK);
    assert_int_equal(atab_gc(t), 1);   /* released by both holders: freed */
    assert_int_equal(atab_release(t, NULL), ATAB_EINVAL);
    atab_table_free(t);
}

/* Another table's atom released here, while its own table's holders still
** hold it: refused (ATAB_EINVAL, counted), nothing touched; this table
** never hands it out (its own intern of the key makes its own atom), and
** goes on working after the other table is freed. */
static void a_release_of_another_tables_held_atom_is_refused(void **state)
{
    (void)state;
    atab_table *t1 = sweeping_table(NULL, 0, SIZE_MAX), *t2 = sweeping_table(NULL, 0, SIZE_MAX);
    const atab_atom *a = atab_intern_cstr(t1, "held-in-t1");
    assert_ptr_equal(atab_ref(a), a);
    assert_ptr_equal(atab_ref(a), a);   /* t1's holders hold 3 */
    assert_int_equal(atab_release(t2, a), ATAB_EINVAL);
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_int_equal(atab__count(a), 3);
    const atab_atom *b = atab_intern_cstr(t2, "held-in-t1");
    assert_non_null(b);
    assert_true(b != a);
    atab_stats st;
    atab_get_stats(t2, &st);
    assert_int_equal(st.misuse, 1);
    assert_int_equal(st.atoms, 1);
    for (int i = 0; i < 3; i++)
        assert_int_equal(atab_release(t1, a), ATAB_OK);
    assert_int_equal(atab_gc(t1), 1);
    atab_table_free(t1);
    assert_ptr_equal(atab_intern_cstr(t2, "held-in-t1"), b);
    assert_int_equal(atab_gc(t2), 0);
    assert_int_equal(atab__count(b), 2);
    atab_table_free(t2);
}

/* The same release to a table made with ATAB_CHECKED_REFS, whose caches
** keep no spares: refused as a plain table refuses it (ATAB_EINVAL,
** counted, the count untouched), not dropped from the count of an atom
** that its own table's holders still hold (before, the checked table took
** one of their references: 3 became 2). */
static void a_checked_table_refuses_another_tables_held_atom(void **state)
{
    (void)state;
    atab_options o = plain_options(NULL, 0);
    o.sweep_threshold = SIZE_MAX;
    o.flags |= ATAB_CHECKED_REFS;
    atab_table *t1 = sweeping_table(NULL, 0, SIZE_MAX), *t2 = atab_table_new(&o);
    const atab_atom *a = atab_intern_cstr(t1, "held-in-t1");
    assert_ptr_equal(atab_ref(a), a);
    assert_ptr_equal(atab_ref(a), a);   /* t1's holders hold 3 */
    assert_int_equal(atab_release(t2, a), ATAB_EINVAL);
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_int_equal(atab__count(a), 3);
    atab_stats st;
    atab_get_stats(t2, &st);
    assert_int_equal(st.misuse, 1);
    /* t2's own atoms are released as before */
    const atab_atom *b = atab_intern_cstr(t2, "held-in-t2");
    assert_ptr_equal(atab_ref(b), b);
    assert_int_equal(atab_release(t2, b), ATAB_OK);
    assert_int_equal(atab_release(t2, b), ATAB_OK);
    assert_int_equal(atab_release(t2, b), ATAB_EREFS);
    for (int i = 0; i < 3; i++)
        assert_int_equal(atab_release(t1, a), ATAB_OK);
    assert_int_equal(atab_gc(t1), 1);
    assert_int_equal(atab_gc(t2), 1);
    atab_table_free(t1);
    atab_table_free(t2);
}

/* A thread with no record on the table (its allocator refused it) refuses
** another table's atom that others hold, as a thread with one does
** (atab__unref_slow, unref_held): its release went to the count unchecked
** (atab__unref_direct) and took one of that atom's own holders' references. */
static void a_thread_with_no_record_refuses_another_tables_held_atom(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t1 = sweeping_table(NULL, 0, SIZE_MAX), *t2 = sweeping_table(&al, 0, SIZE_MAX);
    const atab_atom *a = atab_intern_cstr(t1, "held-in-t1");
    assert_ptr_equal(atab_ref(a), a);
    assert_ptr_equal(atab_ref(a), a);   /* t1's holders hold 3 */
    c.fail_at = c.attempts + 1;         /* t2 allocates nothing more: */
    c.fail_after = 1;                   /* this thread gets no record on it */
    int rc = atab_release(t2, a);
    if (rc != ATAB_EINVAL)
        fail_msg("%d, not ATAB_EINVAL; the count went 3 -> %u", rc, (unsigned)atab__count(a));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_int_equal(atab__count(a), 3);
    c.fail_at = 0;
    atab_stats st;
    atab_get_stats(t2, &st);
    assert_int_equal(st.misuse, 1);
    for (int i = 0; i < 3; i++)
        assert_int_equal(atab_release(t1, a), ATAB_OK);
    assert_int_equal(atab_gc(t1), 1);
    atab_table_free(t1);
    atab_table_free(t2);
    assert_int_equal(c.live, 0);
}

/* Another table's atom with one reference, released here: its count
** falls to 0 and it goes on this table's queue (nothing shows the misuse
** yet), whose sweep (a threshold of one: at once) finds it in no slot of
** this table: it is taken off, counted as misuse, never killed. (Debug
** builds refuse the release itself.) Its own table still has it, unused:
** interning it there revives the same atom, and a full sweep there frees
** it once released. */
static void a_queued_release_of_another_tables_atom_leaves_it_to_its_table(void **state)
{
    (void)state;
    atab_table *t1 = sweeping_table(NULL, 0, SIZE_MAX), *t2 = sweeping_table(NULL, 0, 1);
    const atab_atom *a = atab_intern_cstr(t1, "once-in-t1");
#ifdef ATAB_DEBUG
    assert_int_equal(atab_release(t2, a), ATAB_EINVAL);
#else
    assert_int_equal(atab_release(t2, a), ATAB_OK);   /* queued and swept in t2 */
#endif
    atab_stats st;
    atab_get_stats(t2, &st);
    assert_int_equal(st.misuse, 1);
    assert_int_equal(st.atoms, 0);
    assert_ptr_equal(atab_lookup(t1, "once-in-t1", strlen("once-in-t1")), a);   /* linked */
    assert_ptr_equal(atab_intern_cstr(t1, "once-in-t1"), a);   /* revived */
    assert_int_equal(atab_release(t1, a), ATAB_OK);
    assert_int_equal(atab_release(t1, a), ATAB_OK);
#ifdef ATAB_DEBUG
    assert_int_equal(atab_release(t1, a), ATAB_OK);   /* the one the refusal left */
#endif
    assert_int_equal(atab_gc(t1), 1);
    atab_table_free(t1);
    atab_table_free(t2);
}

/* The same double release when the second release
** comes after a sweep's flush gave the first one's spare back: the count
** is 0, the release is refused, and the atom revived by the second intern
** is kept. */
static void a_double_release_after_a_flush_never_frees_a_held_atom(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = sweeping_table(&al, 0, SIZE_MAX);
    const atab_atom *a = atab_intern_cstr(t, "flushed");
    assert_int_equal(atab_release(t, a), ATAB_OK);
    atab_stats st;
    atab_get_stats(t, &st);   /* the spare goes back: count 0 */
    assert_int_equal(st.unused, 1);
    assert_int_equal(atab_release(t, a), ATAB_EREFS);
    assert_ptr_equal(atab_intern_cstr(t, "flushed"), a);
    long frees = c.frees;
    assert_int_equal(atab_gc(t), 0);
    assert_int_equal(c.frees, frees);   /* nothing freed */
    atab_get_stats(t, &st);
    assert_int_equal(st.misuse, 1);
    assert_int_equal(st.unused, 0);
    assert_int_equal(atab__count(a), 1);
    assert_int_equal(atab_release(t, a), ATAB_OK);
    assert_int_equal(atab_gc(t), 1);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

typedef struct release_on {
    atab_table *t;
    const atab_atom *a;
    int rc;
} release_on;

static void *release_there(void *arg)
{
    release_on *r = arg;
    r->rc = atab_release(r->t, r->a);
    return NULL;
}

/* A double release across threads: the first release leaves its reference
** as a spare in this thread's cache, the second (nobody holds one) comes from
** another thread, whose cache has no entry for the atom. The header's
** promise: the atom revived by the second intern is not freed while it is
** held, and the misuse is counted.
** (It failed while a cache could keep the last reference as a spare: the
** other thread took the count's 1, this thread's spare, for a holder's
** reference and kept a spare of its own; its exit gave it back, the count
** reached 0 while this thread's cache held a spare, and the gc freed the
** atom the second intern returned. A cache now keeps spares only while
** the count shows another holder.) */
static void a_double_release_from_another_thread_never_frees_a_held_atom(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* debug builds count every reference on the atom */
#endif
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = sweeping_table(&al, 0, SIZE_MAX);
    const atab_atom *a = atab_intern_cstr(t, "twice");
    assert_int_equal(atab_release(t, a), ATAB_OK);
    release_on r = {t, a, -1};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, release_there, &r), 0);
    pthread_join(th, NULL);   /* its spare, if kept, went back at its exit */
    assert_ptr_equal(atab_intern_cstr(t, "twice"), a);   /* held again */
    long frees = c.frees;
    assert_int_equal(atab_gc(t), 0);
    assert_int_equal(c.frees, frees);   /* nothing freed that is held */
    atab_stats st;
    atab_get_stats(t, &st);
    assert_int_equal(st.atoms, 1);
    assert_int_equal(st.misuse, 1);
    assert_ptr_equal(atab_lookup(t, "twice", 5), a);
    atab_release(t, a);
    atab_release(t, a);
    atab_table_free(t);
}

/* Thread B of the flush test below: a spare of the atom in its cache, then
** it waits (alive, its record listed) until told to exit. */
typedef struct spare_then_wait {
    atab_table *t;
    const atab_atom *a;
    sem_t kept, go;
} spare_then_wait;

static void *keep_a_spare_and_wait(void *arg)
{
    spare_then_wait *w = arg;
    assert_ptr_equal(atab_intern_cstr(w->t, atab_chars(w->a)), w->a);
    assert_int_equal(atab_release(w->t, w->a), ATAB_OK);   /* kept as a spare */
    sem_post(&w->kept);
    sem_wait(&w->go);
    return NULL;
}

/* A call that succeeds leaves atab_last_error() alone, even when the flush
** it makes finds an over-release: B keeps a spare of X, this thread
** releases its reference and then once more, which takes the reference
** B's spare stands for; atab_get_stats' flush then finds B's spare short,
** counts the misuse, and returns ATAB_OK with the error this thread had. */
static void a_flush_that_finds_an_over_release_leaves_the_last_error_alone(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* debug builds keep no spares */
#endif
    atab_table *t = sweeping_table(NULL, 0, SIZE_MAX);
    spare_then_wait w = {t, atab_intern_cstr(t, "over-released"), {{0}}, {{0}}};
    sem_init(&w.kept, 0, 0);
    sem_init(&w.go, 0, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, keep_a_spare_and_wait, &w), 0);
    sem_wait(&w.kept);
    assert_int_equal(atab_release(t, w.a), ATAB_OK);
    atab_release(t, w.a);   /* nobody's: the count can only tell later */
    assert_null(atab_intern(t, NULL, 1));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    atab_stats st;
    assert_int_equal(atab_get_stats(t, &st), ATAB_OK);
    assert_int_equal(st.misuse, 1);
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_int_equal(atab_gc(t), 1);
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    sem_post(&w.go);
    pthread_join(th, NULL);
    sem_destroy(&w.kept);
    sem_destroy(&w.go);
    atab_table_free(t);
}

static int is_atom(void *ud, const atab_atom *a, uint32_t count)
{
    (void)count;
    return a == ud;
}

/* Interns and releases `key` until this thread's queue sweeps have taken
** a, which it left unused, out of the table (64 times at most). */
static void sweep_out(atab_table *t, const atab_atom *a, const char *key)
{
    for (int i = 0; i < 64 && atab_foreach(t, is_atom, (void *)a); i++)
        atab_release(t, atab_intern_cstr(t, key));
}

/* What the other thread does to this thread's atom: releases it, and
** sweeps it out (sweep_out, with a key of another size class), then
** interns a key of the same length until its atom is made in the block
** that sweep kept (the sweep may have left the block waiting for a grace
** period, which a later sweep of this thread runs: sweep.c). */
typedef struct reuse_there {
    atab_table *t;
    const atab_atom *a, *made;
} reuse_there;

static void *release_and_intern_there(void *arg)
{
    reuse_there *u = arg;
    assert_int_equal(atab_release(u->t, u->a), ATAB_OK);
    sweep_out(u->t, u->a, "x");
    for (int i = 0; i < 64 && (u->made = atab_intern_cstr(u->t, "made-over-there")) != u->a; i++) {
        assert_int_equal(atab_release(u->t, u->made), ATAB_OK);
        sweep_out(u->t, u->made, "x");
    }
    return NULL;
}

/* A release takes the hash of the atom its thread's insert made last from
** the record, while no atom has been freed since. Here that atom is freed
** by another thread, and the block made again for another key: this
** thread's release of the new atom must hash it, or its queue sweep would
** unlink a slot of the old key's groups and leave the new atom dead in the
** table. */
static void a_release_hashes_an_atom_made_again_where_its_last_insert_was(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* debug builds take the general release */
#endif
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = sweeping_table(&al, 0, 2);   /* queues of 2, swept as they fill */
    atab_release(t, atab_intern_cstr(t, "z"));   /* this thread's first visit: its record */
    const atab_atom *a = atab_intern_cstr(t, "made-right-here");
    assert_non_null(a);
    reuse_there u = {t, a, NULL};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, release_and_intern_there, &u), 0);
    pthread_join(th, NULL);
    assert_ptr_equal(u.made, a);   /* the same block, for the other key */
    assert_string_equal(atab_chars(u.made), "made-over-there");
    assert_int_equal(atab_release(t, u.made), ATAB_OK);
    sweep_out(t, u.made, "y");
    assert_int_equal(atab_foreach(t, is_atom, (void *)u.made), 0);
    assert_null(atab_lookup(t, "made-over-there", 15));
    assert_null(atab_lookup(t, "made-right-here", 15));
    atab_stats st;
    atab_get_stats(t, &st);
    assert_int_equal(st.misuse, 0);
    assert_int_equal(st.atoms - st.unused, 0);   /* "x" and "y" may wait, unused */
    assert_int_equal(atab_gc(t), st.atoms);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

/* A sweep shrinks a shard it leaves under 1/8 full into the array that
** holds twice its atoms: after atab_gc keeps 1 atom in 16 of 64,000, the
** table has fewer than 4 slots per atom, and then takes half as many atoms
** again without growing (an array that held its atoms at the load it
** grows from would have grown in every shard). */
static void a_sweep_shrinks_a_shard_and_leaves_it_room(void **state)
{
    (void)state;
    enum { N = 64000, KEEP = 16 };
    atab_table *t = sweeping_table(NULL, 0, SIZE_MAX);
    char buf[32];
    size_t held = 0;
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof buf, "shrink-%d", i);
        const atab_atom *a = atab_intern_cstr(t, buf);
        assert_non_null(a);
        if (i % KEEP)
            atab_release(t, a);
        else
            held++;
    }
    atab_stats st;
    atab_get_stats(t, &st);
    size_t full_cap = st.capacity;
    assert_true(full_cap >= N);
    assert_int_equal(atab_gc(t), N - held);
    atab_get_stats(t, &st);
    assert_int_equal(st.atoms, held);
    assert_true(st.capacity < 4 * held);
    assert_true(st.capacity >= 2 * held);
    size_t shrunk_cap = st.capacity;
    for (size_t i = 0; i < held / 2; i++) {
        snprintf(buf, sizeof buf, "again-%zu", i);
        assert_non_null(atab_intern_cstr(t, buf));
    }
    atab_get_stats(t, &st);
    assert_int_equal(st.atoms, held + held / 2);
    assert_int_equal(st.capacity, shrunk_cap);
    atab_table_free(t);
}

/* With sweeps never triggered (threshold SIZE_MAX: no queues either),
** churning 2,000 atoms through intern and release (about 2M operations,
** ATAB_CHURN_OPS) takes no memory: the unused atoms are a counter, not a
** list that grows with the operations. */
static void churn_without_sweeps_keeps_the_bytes_bounded(void **state)
{
    (void)state;
    enum { N = 2000 };
    const char *e = getenv("ATAB_CHURN_OPS");
    long ops = e && atol(e) > 0 ? atol(e) : 2000000;
    atab_table *t = sweeping_table(NULL, 0, SIZE_MAX);
    char buf[N][16];
    for (int i = 0; i < N; i++) {
        snprintf(buf[i], sizeof buf[i], "churn%d", i);
        atab_release(t, atab_intern_cstr(t, buf[i]));
    }
    atab_stats st;
    atab_get_stats(t, &st);
    size_t base = st.bytes, peak = base;
    for (long k = 0; k < ops / 2; k++) {
        int i = (int)((k * 7919) % N);   /* every atom, far beyond one cache */
        const atab_atom *a = atab_intern_cstr(t, buf[i]);
        assert_int_equal(atab_release(t, a), ATAB_OK);
        if (k % 65536 == 0) {
            atab_get_stats(t, &st);
            peak = st.bytes > peak ? st.bytes : peak;
        }
    }
    atab_get_stats(t, &st);
    peak = st.bytes > peak ? st.bytes : peak;
    assert_int_equal(st.atoms, N);
    assert_int_equal(st.unused, N);
    assert_int_equal(st.misuse, 0);
    assert_true(peak <= base + 1024);   /* nothing grows with the operations */
    assert_int_equal(atab_gc(t), N);
    atab_table_free(t);
}

static void a_saturated_count_never_frees(void **state)
{
    (void)state;
    atab_table *t = sweeping_table(NULL, 0, SIZE_MAX);
    const atab_atom *a = atab_intern_cstr(t, "hot");
    /* Force the count near the top (white-box: the layout is public). */
    ((atab_atom *)a)->atab__refcnt = (1u << 30) - 1;
    atab_ref(a);
    atab_ref(a);
    assert_true(a->atab__refcnt >= (1u << 30));     /* saturated, no wrap */
    assert_true(a->atab__refcnt < (1u << 31));
    for (int i = 0; i < 10; i++)
        atab_release(t, a);
    assert_int_equal(atab_gc(t), 0);
    assert_ptr_equal(atab_lookup(t, "hot", 3), a);
    atab_table_free(t);
}

/* Bulk release: one reference per entry (duplicates, statics and NULLs
** included), the first error returned and left in atab_last_error, the
** rest still released. */
static void release_all_releases_each_entry_and_reports_the_first_error(void **state)
{
    (void)state;
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = ATAB_FIXED_SEED;
    atab_table *t = atab_table_new(&o);
    const atab_atom *v[6];
    v[0] = atab_intern(t, "one", 3);
    v[1] = atab_intern(t, "two", 3);
    v[2] = NULL;                           /* skipped */
    v[3] = atab_intern(t, "one", 3);       /* a second reference */
    v[4] = atab_intern(t, "div", 3);       /* static: a no-op */
    v[5] = atab_intern(t, "three", 5);
    assert_true(atab_is_static(v[4]));
    assert_int_equal(atab_release_all(t, v, 6), ATAB_OK);
    atab_stats st;
    assert_int_equal(atab_get_stats(t, &st), ATAB_OK);
    assert_int_equal(st.unused, 3);        /* every dynamic one at 0 */
    assert_int_equal(atab_gc(t), 3);

    const atab_atom *a = atab_intern(t, "zq-a", 4), *b = atab_intern(t, "zq-b", 4);
    const atab_atom *w[4] = {a, a, b, b};  /* a held once: its 2nd is misuse */
    atab_ref(b);
    assert_int_equal(atab_release_all(t, w, 4), ATAB_EREFS);
    assert_int_equal(atab_last_error(), ATAB_EREFS);
    assert_int_equal(atab_get_stats(t, &st), ATAB_OK);
    assert_int_equal(st.misuse, 1);
    assert_int_equal(st.unused, 2);        /* b's two went too */

    assert_int_equal(atab_release_all(t, NULL, 0), ATAB_OK);
    assert_int_equal(atab_last_error(), ATAB_EREFS);   /* success: left alone */
    assert_int_equal(atab_release_all(t, NULL, 1), ATAB_EINVAL);
    assert_int_equal(atab_release_all(NULL, w, 1), ATAB_EINVAL);
    atab_table_free(t);
}

/* What atab_foreach saw: each "fe-" atom's count by its number. */
typedef struct fe_seen {
    atab_table *t;
    int counts[300], visits[300], others, stop_after, calls;
} fe_seen;

static int fe_note(void *ud, const atab_atom *a, uint32_t count)
{
    fe_seen *s = ud;
    int i;
    s->calls++;
    assert_false(atab_is_static(a));
    if (sscanf(atab_chars(a), "fe-%d", &i) == 1) {
        s->counts[i] = (int)count;
        s->visits[i]++;
    } else {
        s->others++;
    }
    const atab_atom *again = atab_intern(s->t, atab_chars(a), atab_len(a));   /* no deadlock */
    assert_ptr_equal(again, a);
    atab_release(s->t, again);
    return s->stop_after && s->calls == s->stop_after ? 42 : 0;
}

/* Every dynamic atom once, with the count its holders hold (spares given
** back first), unused ones at 0, statics never; fn may intern; a non-zero
** return stops the walk; the table's counts are as they were after. */
static void foreach_visits_each_dynamic_atom_once_with_its_count(void **state)
{
    (void)state;
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = ATAB_FIXED_SEED;
    atab_table *t = atab_table_new(&o);
    const atab_atom *held[300];
    char buf[16];
    for (int i = 0; i < 300; i++) {
        snprintf(buf, sizeof buf, "fe-%d", i);
        for (int k = 0; k < i % 4; k++) {   /* i % 4 references, then hits */
            held[i] = atab_intern_cstr(t, buf);
        }
        if (i % 4 == 0)
            atab_release(t, held[i] = atab_intern_cstr(t, buf));   /* unused */
        for (int k = 0; k < 3 && i % 4; k++)   /* hits and releases: spares */
            atab_release(t, atab_intern_cstr(t, buf));
    }
    atab_intern_cstr(t, "div");   /* static: not visited */
    fe_seen s;
    memset(&s, 0, sizeof s);
    s.t = t;
    assert_int_equal(atab_foreach(t, fe_note, &s), ATAB_OK);
    for (int i = 0; i < 300; i++) {
        assert_int_equal(s.visits[i], 1);
        assert_int_equal(s.counts[i], i % 4);
    }
    assert_int_equal(s.others, 0);
    atab_stats st;
    assert_int_equal(atab_get_stats(t, &st), ATAB_OK);
    assert_int_equal(st.atoms, 300);
    assert_int_equal(st.unused, 75);
    memset(&s, 0, sizeof s);
    s.t = t;
    s.stop_after = 10;
    assert_int_equal(atab_foreach(t, fe_note, &s), 42);
    assert_int_equal(s.calls, 10);
    assert_int_equal(atab_gc(t), 75);   /* the walk changed no count */
    assert_int_equal(atab_foreach(NULL, fe_note, &s), ATAB_EINVAL);
    assert_int_equal(atab_foreach(t, NULL, &s), ATAB_EINVAL);
    atab_table_free(t);
}

static int fe_count(void *ud, const atab_atom *a, uint32_t count)
{
    (void)a, (void)count;
    ++*(size_t *)ud;
    return 0;
}

/* A shard of more than 128 atoms is listed in a block from the allocator;
** when it cannot be had the walk stops with ATAB_ENOMEM, nothing leaks. */
static void foreach_out_of_memory_is_enomem(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    char buf[16];
    for (int i = 0; i < 20000; i++)
        snprintf(buf, sizeof buf, "big-%d", i), atab_intern_cstr(t, buf);
    size_t n = 0;
    assert_int_equal(atab_foreach(t, fe_count, &n), ATAB_OK);
    assert_int_equal(n, 20000);
    c.fail_at = c.attempts + 1, c.fail_after = 1;
    n = 0;
    assert_int_equal(atab_foreach(t, fe_count, &n), ATAB_ENOMEM);
    assert_int_equal(atab_last_error(), ATAB_ENOMEM);
    assert_true(n < 20000);
    c.fail_at = 0;
    atab_table_free(t);
    assert_int_equal(c.live, 0);
    assert_false(c.size_mismatch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_intern_is_a_reference),
        cmocka_unit_test(an_unused_atom_interned_again_is_revived_not_reallocated),
        cmocka_unit_test(sweep_frees_exactly_the_unused),
        cmocka_unit_test(a_sweep_whose_buffer_cannot_grow_still_frees_every_unused_atom),
        cmocka_unit_test(a_thread_alone_frees_replaced_arrays_at_once),
        cmocka_unit_test(keys_that_spilled_to_group_b_are_found_after_their_a_empties),
        cmocka_unit_test(crossing_the_threshold_sweeps_by_itself),
        cmocka_unit_test(a_threshold_of_one_sweeps_each_unused_atom_after_its_release),
#ifndef ATAB_DEBUG
        cmocka_unit_test(a_full_sweep_counts_none_of_the_atoms_it_freed_as_unused),
#endif
        cmocka_unit_test(a_double_release_never_frees_a_held_atom),
        cmocka_unit_test(a_double_release_after_a_flush_never_frees_a_held_atom),
        cmocka_unit_test(a_double_release_from_another_thread_never_frees_a_held_atom),
        cmocka_unit_test(a_release_of_another_tables_held_atom_is_refused),
        cmocka_unit_test(a_checked_table_refuses_another_tables_held_atom),
        cmocka_unit_test(a_thread_with_no_record_refuses_another_tables_held_atom),
        cmocka_unit_test(a_queued_release_of_another_tables_atom_leaves_it_to_its_table),
        cmocka_unit_test(a_flush_that_finds_an_over_release_leaves_the_last_error_alone),
        cmocka_unit_test(churn_without_sweeps_keeps_the_bytes_bounded),
        cmocka_unit_test(a_release_hashes_an_atom_made_again_where_its_last_insert_was),
        cmocka_unit_test(a_sweep_shrinks_a_shard_and_leaves_it_room),
        cmocka_unit_test(a_saturated_count_never_frees),
        cmocka_unit_test(release_all_releases_each_entry_and_reports_the_first_error),
        cmocka_unit_test(foreach_visits_each_dynamic_atom_once_with_its_count),
        cmocka_unit_test(foreach_out_of_memory_is_enomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
