/* SPDX-License-Identifier: MIT */
/*
** test_oom.c - out of memory at every allocation. A full workload (intern
** UTF-8 and UTF-16, short and long keys, lookups from a second thread,
** ASCII-lowercase interning in UTF-8 and UTF-16, ref, release one at a
** time and with atab_release_all, self-triggered sweeps, atab_gc,
** atab_foreach over a shard of more than 128 atoms, the reporter, stats,
** table growth and compaction) runs with the allocator failing the 1st
** allocation, then the 2nd, ... until a run completes with no failure
** injected; once in "fail once" mode, once in "fail from then on" mode.
** At every point a failing call says ATAB_ENOMEM (or succeeds, where the
** failure was benign), every atom interned before is still found at the
** same pointer, and nothing leaks: the hook's live count is 0 after
** atab_table_free.
**
** Each run works in a new thread, so the per-thread records (thread.c) are
** allocated in every run at the same point, and the second thread's too.
** ATAB_OOM_KEYS (default 400) sets the workload's size (valgrind runs use
** fewer), beside SHARD_KEYS keys of one shard. The workload ends with static lookups (the default set) and
** external handles held across a sweep. To add an operation, add a phase
** to workload() that calls note() like the others.
*/
#include <pthread.h>

#include "test_util.h"
#include "atab_int.h"        /* atab__hash_bytes, atab__h_shard: keys of one shard */
#include "atomtab_atoms.h"   /* ATAB_ATOM: the default static set */

#define KEY_CAP 400
#define SEED 7
/* Keys that all fall in one shard: more than the 128 atoms atab_foreach
** collects on the stack, so its walk takes a block for that shard. */
#define SHARD_KEYS 136

typedef struct wl {
    atab_table *t;
    counting_alloc *c;
    int nkeys;                 /* keys 0 .. nkeys-1: */
    int nplain;                /* 0 .. nplain-1 plain, then SHARD_KEYS of one shard */
    const atab_atom **a;       /* the atom of key i while refs[i] > 0 */
    int *refs;                 /* references the workload holds */
    int failures_seen;         /* calls that failed (ENOMEM) */
    int verified_at_failure;   /* the table was checked after the 1st one */
} wl;

/* The shard keys' names, "oom-shard-N-J": for key J, the first N whose
** name falls in the shard of "oom-shard-0-0" under SEED. */
static unsigned shard_name[SHARD_KEYS];

static void find_shard_keys(void)
{
    char buf[64];
    unsigned want = atab__h_shard(atab__hash_bytes(SEED, "oom-shard-0-0", 13));
    for (unsigned j = 0, n = 0; j < SHARD_KEYS; n++) {
        int len = snprintf(buf, sizeof buf, "oom-shard-%u-%u", n, j);
        if (atab__h_shard(atab__hash_bytes(SEED, buf, (size_t)len)) == want)
            shard_name[j++] = n;
    }
}

/* Key i: mostly short ASCII, some with non-ASCII, every 37th long (past
** the 256-byte UTF-16 stack buffer, so the chunked path runs), then the
** shard keys. Every key ends in "-" and its number (key_index). */
static size_t key_of(const wl *w, int i, char *buf)
{
    int j = i - w->nplain;
    if (j >= 0)
        return (size_t)snprintf(buf, KEY_CAP, "oom-shard-%u-%d", shard_name[j], j);
    if (i % 37 == 0) {
        memset(buf, 'l', 300);   /* lowercase, as every key: intern_lower_upper */
        return 300 + (size_t)snprintf(buf + 300, 32, "-%d", i);
    }
    return (size_t)snprintf(buf, KEY_CAP, i % 5 ? "oom-key-%d" : "oom-\xc3\xa9t\xc3\xa9-%d", i);
}

/* The key an atom of the workload is for, from its characters. */
static int key_index(const wl *w, const atab_atom *a)
{
    const char *dash = strrchr(atab_chars(a), '-');
    int n = atoi(dash + 1);
    return strncmp(atab_chars(a), "oom-shard-", 10) == 0 ? w->nplain + n : n;
}

static int injected(const wl *w)
{
    return w->c->fail_at && w->c->attempts >= w->c->fail_at;
}

/* Every key the workload holds is found at its atom. */
static void verify(wl *w)
{
    char buf[KEY_CAP];
    for (int i = 0; i < w->nkeys; i++) {
        if (w->refs[i] <= 0)
            continue;
        size_t n = key_of(w, i, buf);
        const atab_atom *a = atab_lookup(w->t, buf, n);
        assert_ptr_equal(a, w->a[i]);   /* same pointer as before */
        assert_int_equal(atab_release(w->t, a), ATAB_OK);
    }
}

/* The result of interning key i: an atom with its bytes, or NULL with
** ATAB_ENOMEM and only where a failure was injected. */
static void note(wl *w, int i, const atab_atom *a)
{
    char buf[KEY_CAP];
    size_t n = key_of(w, i, buf);
    if (!a) {
        assert_int_equal(atab_last_error(), ATAB_ENOMEM);
        assert_true(injected(w));
        w->failures_seen++;
        if (w->refs[i] > 0)   /* a key already held is a hit: never fails */
            fail_msg("intern of a held key failed");
    } else {
        assert_int_equal(atab_len(a), n);
        assert_memory_equal(atab_chars(a), buf, n);
        if (w->refs[i] > 0)
            assert_ptr_equal(a, w->a[i]);
        w->a[i] = a;
        w->refs[i]++;
    }
    if (injected(w) && !w->verified_at_failure) {
        w->verified_at_failure = 1;
        verify(w);
    }
}

static void intern_utf8(wl *w, int i)
{
    char buf[KEY_CAP];
    size_t n = key_of(w, i, buf);
    note(w, i, atab_intern(w->t, buf, n));
}

static void intern_utf16(wl *w, int i)
{
    char buf[KEY_CAP];
    uint16_t u[KEY_CAP];
    size_t n = key_of(w, i, buf);
    n = u8_to_u16(buf, n, u);
    note(w, i, atab_intern_utf16(w->t, u, n));
}

static void release_all_refs(wl *w, int i)
{
    for (; w->refs[i] > 0; w->refs[i]--)
        assert_int_equal(atab_release(w->t, w->a[i]), ATAB_OK);
    w->a[i] = NULL;
}

#define LIST_CAP 64

/* Every reference on keys from, from + step, ... below to, through
** atab_release_all, a few keys a call: each key's atom as many times as it
** is held, then a NULL entry (as a failed intern leaves). It allocates
** nothing of its own (a sweep it runs may, benignly) and cannot fail. */
static void release_list(wl *w, int from, int to, int step)
{
    const atab_atom *v[LIST_CAP];
    size_t k = 0;
    for (int i = from; i < to; i += step) {
        assert_true(w->refs[i] < LIST_CAP);
        if (k + (size_t)w->refs[i] + 1 > LIST_CAP) {
            assert_int_equal(atab_release_all(w->t, v, k), ATAB_OK);
            k = 0;
        }
        for (; w->refs[i] > 0; w->refs[i]--)
            v[k++] = w->a[i];
        v[k++] = NULL;
        w->a[i] = NULL;
    }
    assert_int_equal(atab_release_all(w->t, v, k), ATAB_OK);
}

/* Key i uppercased, through atab_intern_lower or its UTF-16 twin: the
** same atom. A long key is folded in a block from the allocator (past 256
** bytes, 128 units), so there (only) a hit may fail (include/atomtab.h
** says so). */
static void intern_lower_upper(wl *w, int i, int utf16)
{
    char buf[KEY_CAP];
    uint16_t u[KEY_CAP];
    size_t n = key_of(w, i, buf), size = n;
    const atab_atom *a;
    for (size_t k = 0; k < n; k++)
        if (buf[k] >= 'a' && buf[k] <= 'z')
            buf[k] = (char)(buf[k] - 32);
    if (utf16) {
        size_t n16 = u8_to_u16(buf, n, u);
        size = 2 * n16;
        a = atab_intern_lower_utf16(w->t, u, n16);
    } else {
        a = atab_intern_lower(w->t, buf, n);
    }
    if (!a && size > 256 && w->refs[i] > 0) {
        assert_int_equal(atab_last_error(), ATAB_ENOMEM);
        assert_true(injected(w));
        w->failures_seen++;
        return;
    }
    note(w, i, a);
}

/* The second thread: lookups (hits take a reference), new interns. */
static void *other_thread(void *arg)
{
    wl *w = arg;
    char buf[KEY_CAP];
    for (int i = 0; i < w->nplain; i += 5) {
        size_t n = key_of(w, i, buf);
        const atab_atom *a = atab_lookup(w->t, buf, n);
        if (w->refs[i] > 0)
            assert_ptr_equal(a, w->a[i]);
        if (a)
            atab_release(w->t, a);
        else
            assert_int_equal(atab_last_error(), ATAB_OK);   /* absent */
    }
    for (int i = 3 * w->nplain / 4; i < w->nplain; i++)
        intern_utf8(w, i);
    return NULL;
}

static int null_writer(void *ud, const char *buf, size_t len)
{
    (void)ud; (void)buf; (void)len;
    return 0;
}

static int null_entry(void *ud, const char *path, int kind, int units,
                      int64_t amount, const char *desc)
{
    (void)ud; (void)path; (void)kind; (void)units; (void)amount; (void)desc;
    return 0;
}

/* The reporter and stats allocate nothing and cannot fail. */
static void report_and_stats(wl *w)
{
    atab_stats st;
    long before = w->c->attempts;
    assert_int_equal(atab_report(w->t, null_entry, NULL), ATAB_OK);
    assert_int_equal(atab_report_tree(w->t, null_writer, NULL), ATAB_OK);
    assert_int_equal(atab_report_json(w->t, "oom", null_writer, NULL), ATAB_OK);
    assert_int_equal(w->c->attempts, before);
    assert_int_equal(atab_get_stats(w->t, &st), ATAB_OK);   /* may queue: benign */
    assert_int_equal(st.bytes, w->c->bytes);
}

/* What a walk saw: each atom once, with the count the workload holds. */
typedef struct walk {
    wl *w;
    char *seen;     /* by key */
    int visited;
    int stop_at;    /* the callback returns 1 at this visit */
} walk;

static int walk_atom(void *ud, const atab_atom *a, uint32_t count)
{
    walk *v = ud;
    int i = key_index(v->w, a);
    assert_true(i >= 0 && i < v->w->nkeys);
    assert_false(v->seen[i]);
    v->seen[i] = 1;
    assert_int_equal(count, v->w->refs[i]);   /* exact: the spares were given back */
    if (v->w->refs[i] > 0)
        assert_ptr_equal(a, v->w->a[i]);
    return ++v->visited == v->stop_at;
}

/* A walk that ended with an error: ATAB_ENOMEM for the shard's block,
** only where a failure was injected, the table intact. */
static void walk_failed(wl *w, int rc)
{
    assert_int_equal(rc, ATAB_ENOMEM);
    assert_true(injected(w));
    w->failures_seen++;
    verify(w);
}

/* atab_foreach whole, then stopped halfway. The shard of more than 128
** atoms needs a block: a walk may end there with ATAB_ENOMEM. A whole walk
** sees every key the workload holds; the stopped one stops where told
** (or sees all there are, fewer once a sweep has run). */
static void walks(wl *w)
{
    char *seen = calloc((size_t)w->nkeys, 1);
    walk v = {w, seen, 0, -1};
    int rc = atab_foreach(w->t, walk_atom, &v);
    if (rc != ATAB_OK)
        walk_failed(w, rc);
    for (int i = 0; i < w->nkeys && rc == ATAB_OK; i++)
        assert_true(w->refs[i] == 0 || seen[i]);
    memset(seen, 0, (size_t)w->nkeys);
    v = (walk){w, seen, 0, v.visited / 2 + 1};
    rc = atab_foreach(w->t, walk_atom, &v);
    if (rc == 1)
        assert_int_equal(v.visited, v.stop_at);
    else if (rc == ATAB_OK)
        assert_true(v.visited < v.stop_at);
    else
        walk_failed(w, rc);
    free(seen);
}

/* Static atoms: found through every entry point whatever fails (caching
** one in the table's slots is benign), never a dynamic twin. */
static void statics(wl *w)
{
    static const uint16_t div16[] = {'d', 'i', 'v'};
    for (int k = 0; k < 2; k++) {
        assert_ptr_equal(atab_intern_cstr(w->t, "div"), ATAB_ATOM(div));
        assert_ptr_equal(atab_lookup(w->t, "class", 5), ATAB_ATOM(class));
        assert_ptr_equal(atab_intern_utf16(w->t, div16, 3), ATAB_ATOM(div));
        assert_ptr_equal(atab_intern(w->t, "accept-charset", 14), ATAB_ATOM(accept_charset));
    }
}

/* External handles on held atoms allocate nothing and keep their atoms
** through a sweep; released, they leave the counts as they were. */
static void handles(wl *w)
{
    long before = w->c->attempts;
    for (int i = 0; i < w->nkeys; i += 5)
        if (w->refs[i] > 0)
            assert_ptr_equal(atab_external_acquire(w->t, w->a[i]), w->a[i]);
    assert_int_equal(w->c->attempts, before);
    atab_gc(w->t);
    verify(w);
    for (int i = 0; i < w->nkeys; i += 5)
        if (w->refs[i] > 0)
            assert_int_equal(atab_external_release(w->t, w->a[i]), ATAB_OK);
    assert_int_equal(atab_external_handles(w->t), 0);
}

static void workload(wl *w)
{
    pthread_t th;
    int n = w->nplain, half = n / 2;
    for (int i = 0; i < half; i++)             /* UTF-8 interns, growth */
        intern_utf8(w, i);
    for (int i = half; i < 3 * n / 4; i++)      /* UTF-16 interns */
        intern_utf16(w, i);
    for (int i = 0; i < half; i += 7)           /* UTF-16 hits on UTF-8 atoms */
        intern_utf16(w, i);
    assert_int_equal(pthread_create(&th, NULL, other_thread, w), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    for (int i = 0; i < n; i += 3)              /* extra references */
        if (w->refs[i] > 0)
            atab_ref(w->a[i]), w->refs[i]++;
    for (int i = n; i < w->nkeys; i++)          /* one shard past 128 atoms */
        intern_utf8(w, i);
    walks(w);                                   /* atab_foreach: that shard's block */
    report_and_stats(w);
    for (int i = 1; i < n; i += 4)              /* to zero: sweeps run */
        release_all_refs(w, i);
    release_list(w, 3, n, 4);                   /* the same by atab_release_all */
    release_list(w, n, w->nkeys, 1);
    atab_gc(w->t);                              /* sweep and compact */
    report_and_stats(w);
    for (int i = 1; i < n; i += 4)              /* again after the sweep */
        intern_utf8(w, i);
    for (int i = 0; i < n; i += 2)              /* revive or hit */
        intern_utf16(w, i);
    for (int i = 0; i < n; i += 3)              /* folded: hit, revive or new */
        intern_lower_upper(w, i, (i / 3) % 2);
    statics(w);
    handles(w);
    verify(w);
}

typedef struct run_result {
    long attempts;             /* allocations the run asked for */
    int failures_seen;
} run_result;

static void *run_thread(void *arg)
{
    wl *w = arg;
    workload(w);
    return NULL;
}

/* One run with the given failure point (0: none). */
static run_result run_once(int nplain, long fail_at, int fail_after)
{
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_options o;
    run_result res = {0, 0};
    memset(&o, 0, sizeof o);
    o.flags = ATAB_FIXED_SEED;   /* the default static set too */
    o.seed = SEED;
    o.allocator = &al;
    o.sweep_threshold = 40;
    c.fail_at = fail_at;
    c.fail_after = fail_after;
    atab_table *t = atab_table_new(&o);
    if (!t) {   /* the table object is the first allocation */
        assert_int_equal(atab_last_error(), ATAB_ENOMEM);
        assert_int_equal(fail_at, 1);
        assert_int_equal(c.live, 0);
        res.attempts = c.attempts;
        res.failures_seen = 1;
        return res;
    }
    int nkeys = nplain + SHARD_KEYS;
    wl w = {t, &c, nkeys, nplain, calloc((size_t)nkeys, sizeof(void *)),
            calloc((size_t)nkeys, sizeof(int)), 0, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, run_thread, &w), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    for (int i = 0; i < nkeys; i++)
        release_all_refs(&w, i);
    atab_gc(t);
    assert_int_equal(atab_count(t), 0);   /* everything released is swept */
    res.attempts = c.attempts;
    res.failures_seen = w.failures_seen;
    atab_table_free(t);
    assert_int_equal(c.live, 0);          /* nothing leaked */
    assert_int_equal(c.bytes, 0);
    assert_false(c.size_mismatch);
    free(w.a);
    free(w.refs);
    return res;
}

static int oom_keys(void)
{
    const char *e = getenv("ATAB_OOM_KEYS");
    int n = e ? atoi(e) : 400;
    return n < 8 ? 8 : n;
}

/* Fails allocation 1, 2, ... until a run sees no failure; returns the
** number of failure points exercised. */
static long every_point(int fail_after)
{
    int nkeys = oom_keys();
    long fail_at, calls_failed = 0;
    run_result clean = run_once(nkeys, 0, 0);
    assert_int_equal(clean.failures_seen, 0);
    for (fail_at = 1;; fail_at++) {
        run_result r = run_once(nkeys, fail_at, fail_after);
        if (r.attempts < fail_at)   /* no failure injected: done */
            break;
        calls_failed += r.failures_seen;
    }
    printf("[  OOM     ] %s: %ld failure points exercised (%ld allocations in a "
           "clean run, %d keys); %ld calls reported ATAB_ENOMEM, the others "
           "were benign\n", fail_after ? "fail from then on" : "fail once",
           fail_at - 1, clean.attempts, nkeys + SHARD_KEYS, calls_failed);
    assert_true(fail_at - 1 >= clean.attempts);   /* every allocation was a point */
    assert_true(calls_failed > 0);
    return fail_at - 1;
}

static void failing_each_allocation_once_is_enomem_or_benign(void **state)
{
    (void)state;
    every_point(0);
}

static void failing_every_allocation_from_then_on_is_enomem_or_benign(void **state)
{
    (void)state;
    every_point(1);
}

int main(void)
{
    find_shard_keys();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(failing_each_allocation_once_is_enomem_or_benign),
        cmocka_unit_test(failing_every_allocation_from_then_on_is_enomem_or_benign),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
