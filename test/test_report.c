/* SPDX-License-Identifier: MIT */
/*
** test_report.c - the memory reporter: heap entries add up exactly to what
** the allocator handed out, slop is usable minus requested, unknown slop
** is left out, counts are right, the JSON parses (jansson) with every key,
** the tree shows every path largest first, and reporting is safe while
** other threads intern and release.
*/
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include <jansson.h>

#include "test_util.h"
#include "atab_int.h"

/* ---- collecting entries ---- */

typedef struct got_entry {
    char path[64];
    int kind, units;
    int64_t amount;
    char desc[256];
} got_entry;

typedef struct got {
    got_entry e[16];
    int n;
    int stop_at;   /* with a non-zero value: return 7 from this call (1-based) */
} got;

static int collect_cb(void *ud, const char *path, int kind, int units,
                      int64_t amount, const char *description)
{
    got *g = ud;
    if (g->n == 16)
        return 99;
    got_entry *e = &g->e[g->n++];
    snprintf(e->path, sizeof e->path, "%s", path);
    snprintf(e->desc, sizeof e->desc, "%s", description);
    e->kind = kind;
    e->units = units;
    e->amount = amount;
    return g->n == g->stop_at ? 7 : 0;
}

static const got_entry *find(const got *g, const char *path)
{
    for (int i = 0; i < g->n; i++)
        if (strcmp(g->e[i].path, path) == 0)
            return &g->e[i];
    return NULL;
}

static int64_t amount_of(const got *g, const char *path)
{
    const got_entry *e = find(g, path);
    assert_non_null(e);
    return e->amount;
}

static void report_into(atab_table *t, got *g)
{
    memset(g, 0, sizeof *g);
    assert_int_equal(atab_report(t, collect_cb, g), ATAB_OK);
}

static void report_ex_into(atab_table *t, const atab_report_options *o, got *g)
{
    memset(g, 0, sizeof *g);
    assert_int_equal(atab_report_ex(t, o, collect_cb, g), ATAB_OK);
}

static int64_t heap_total(const got *g)
{
    int64_t sum = 0;
    for (int i = 0; i < g->n; i++)
        if (g->e[i].kind == ATAB_KIND_HEAP)
            sum += g->e[i].amount;
    return sum;
}

/* ---- a rounding allocator: usable size = request rounded up to 16 ---- */

typedef struct round_alloc {
    counting_alloc c;
    size_t handed;   /* usable bytes of the live blocks */
} round_alloc;

static size_t round16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

static void *ra_alloc(void *ud, size_t size)
{
    round_alloc *r = ud;
    void *p = ca_alloc(&r->c, size);
    if (p)
        r->handed += round16(size);
    return p;
}

static void ra_free(void *ud, void *p, size_t size)
{
    round_alloc *r = ud;
    if (p)
        r->handed -= round16(size);
    ca_free(&r->c, p, size);
}

static size_t ra_usable(void *ud, const void *p, size_t size)
{
    (void)ud; (void)p;
    return round16(size);
}

/* Interns n distinct strings of assorted lengths (0..150); adds their
** requested bytes and slop to *req and *slop: atoms that short are carved
** from chunks (chunk.h), each block rounded up to 8 bytes. */
static void intern_assorted(atab_table *t, int n, const atab_atom **keep,
                            size_t *req, size_t *slop)
{
    char buf[200];
    for (int i = 0; i < n; i++) {
        int len = snprintf(buf, sizeof buf, "%d:", i);
        int want = (i * 37) % 151;
        for (; len < want; len++)
            buf[len] = (char)('a' + (i + len) % 26);
        keep[i] = atab_intern(t, buf, (size_t)len);
        assert_non_null(keep[i]);
        size_t r = sizeof(atab_atom) + (size_t)len + 1;
        *req += r;
        *slop += atab__block_bytes((size_t)len) - r;
    }
}

/* ---- capturing dumps ---- */

typedef struct sink {
    char buf[8192];
    size_t n;
    int calls;
    int fail_with;   /* non-zero: return it from the first call */
} sink;

static int sink_write(void *ud, const char *s, size_t len)
{
    sink *k = ud;
    k->calls++;
    if (k->fail_with)
        return k->fail_with;
    assert_true(k->n + len < sizeof k->buf);
    memcpy(k->buf + k->n, s, len);
    k->n += len;
    k->buf[k->n] = '\0';
    return 0;
}

/* ---- the report allocates nothing ---- */

static int count_entries(void *ud, const char *path, int kind, int units, int64_t amount,
                         const char *description)
{
    (void)path; (void)kind; (void)units; (void)amount; (void)description;
    ++*(int *)ud;
    return 0;
}

static int discard(void *ud, const char *buf, size_t len)
{
    (void)ud; (void)buf; (void)len;
    return 0;
}

typedef struct releaser {
    atab_table *t;
    int ready, go;   /* atomic */
} releaser;

/* Interns and releases 600 atoms (more than a cache holds: entries are
** evicted, counts reach 0), then waits with its spares until told. */
static void *release_and_wait(void *arg)
{
    releaser *r = arg;
    char buf[32];
    for (int i = 0; i < 600; i++) {
        snprintf(buf, sizeof buf, "other%d", i % 300);
        atab_release(r->t, atab_intern_cstr(r->t, buf));
    }
    __atomic_store_n(&r->ready, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&r->go, __ATOMIC_ACQUIRE))
        usleep(1000);
    return NULL;
}

/* Right after releases through the caches (this thread's and a live other
** thread's, spares and atoms left at 0 waiting to be counted), every form
** of the report calls the allocator not once. The old report flushed
** cached negative deltas into a candidate list, which allocated. */
static void the_report_allocates_nothing_right_after_releases_through_the_caches(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    releaser r = {t, 0, 0};
    pthread_t th;
    char buf[32];
    assert_int_equal(pthread_create(&th, NULL, release_and_wait, &r), 0);
    while (!__atomic_load_n(&r.ready, __ATOMIC_ACQUIRE))
        usleep(1000);
    for (int i = 0; i < 600; i++) {
        snprintf(buf, sizeof buf, "mine%d", i % 400);
        atab_release(t, atab_intern_cstr(t, buf));
    }
    for (int round = 0; round < 2; round++) {
        long attempts = c.attempts;
        int n = 0;
        assert_int_equal(atab_report(t, count_entries, &n), ATAB_OK);
        assert_true(n > 0);
        assert_int_equal(atab_report_tree(t, discard, NULL), ATAB_OK);
        assert_int_equal(atab_report_json(t, "p", discard, NULL), ATAB_OK);
        assert_int_equal(c.attempts, attempts);   /* no allocation, not even a failed one */
        snprintf(buf, sizeof buf, "mine%d", round);   /* and again after one more */
        atab_release(t, atab_intern_cstr(t, buf));
    }
    __atomic_store_n(&r.go, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

/* ---- accuracy ---- */

static void heap_entries_add_up_to_what_the_allocator_handed_out(void **state)
{
    (void)state;
    round_alloc r = {{0}, 0};
    atab_allocator al = {ra_alloc, ra_free, ra_usable, &r};
    atab_table *t = plain_table(&al);
    const atab_atom *keep[3000];
    size_t req = 0, slop = 0;
    got g;
    parked other;
    park(&other, t);   /* a reader besides this thread: replaced arrays wait */
    intern_assorted(t, 3000, keep, &req, &slop);
    if (t->recs)   /* arrays the grows replaced, waiting: counted too */
        assert_true(t->n_retired > 0);
    else   /* ATAB_DEBUG keeps no records: every reader locks, nothing waits */
        assert_int_equal(t->n_retired, 0);
    report_into(t, &g);
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/atom-objects"), req);
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/slop"), slop);   /* 16384: no slop */
    assert_int_equal(heap_total(&g), r.handed);
    assert_int_equal(amount_of(&g, "explicit/atoms/table"),
                     r.handed - (req + slop + amount_of(&g, "explicit/atoms/dynamic/free")));
    assert_true(atab_report_has_usable_size(t));

    /* after releasing and sweeping half, the arrays are rebuilt: still exact */
    size_t req2 = 0, slop2 = 0;
    for (int i = 0; i < 3000; i += 2) {
        size_t rq = sizeof(atab_atom) + atab_len(keep[i]) + 1;
        req2 += rq;
        slop2 += atab__block_bytes(atab_len(keep[i])) - rq;
        atab_release(t, keep[i]);
    }
    atab_gc(t);   /* with what this thread's queue swept already: that half */
    assert_int_equal(atab_count(t), 1500);
    assert_int_equal(t->n_retired, 0);
    report_into(t, &g);
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/atom-objects"), req - req2);
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/slop"), slop - slop2);
    assert_int_equal(heap_total(&g), r.handed);
    unpark(&other);
    atab_table_free(t);
    assert_int_equal(r.handed, 0);
}

static void with_exact_usable_sizes_slop_is_the_blocks_rounding_and_bytes_match_stats(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);   /* usable == requested */
    atab_table *t = plain_table(&al);
    const atab_atom *keep[500];
    size_t req = 0, slop = 0;
    atab_stats st;
    got g;
    intern_assorted(t, 500, keep, &req, &slop);
    report_into(t, &g);
    atab_get_stats(t, &st);
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/slop"), slop);
    assert_int_equal(heap_total(&g), c.bytes);
    assert_int_equal(heap_total(&g), st.bytes);
    atab_table_free(t);
}

/* jemalloc's own count: stats.allocated after flushing this thread's cache
** (cached blocks count as allocated) and writing epoch. mallctl is found
** only when jemalloc is linked, i.e. in the jemalloc build, where it is
** also the library's default allocator. */
typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);

static size_t je_allocated(mallctl_fn mallctl)
{
    uint64_t epoch = 1;
    size_t allocated = 0, len = sizeof allocated;
    mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
    assert_int_equal(mallctl("epoch", NULL, NULL, &epoch, sizeof epoch), 0);
    assert_int_equal(mallctl("stats.allocated", &allocated, &len, NULL, 0), 0);
    return allocated;
}

static void heap_entries_match_jemalloc_stats_allocated(void **state)
{
    (void)state;
    mallctl_fn mallctl = (mallctl_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "mallctl");
    size_t allocated = 0, len = sizeof allocated;
    if (!mallctl || mallctl("stats.allocated", &allocated, &len, NULL, 0) != 0)
        skip();   /* system allocator build, or jemalloc without stats */
    static const atab_atom *keep[20000];
    char buf[64];
    got g;
    size_t before = je_allocated(mallctl);
    atab_table *t = atab_table_new(NULL);
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(buf, sizeof buf, "jemalloc-%d-%.*s", i, i % 40,
                         "0123456789012345678901234567890123456789");
        keep[i] = atab_intern(t, buf, (size_t)n);
    }
    size_t after = je_allocated(mallctl);
    report_into(t, &g);
    assert_true(atab_report_has_usable_size(t));
    assert_int_equal(heap_total(&g), after - before);
    assert_null(find(&g, "explicit/heap-overhead/atoms"));   /* no chunk headers */
    for (int i = 0; i < 20000; i++)
        atab_release(t, keep[i]);
    atab_table_free(t);
}

/* ---- glibc's own count: mallinfo2 ---- */

/* Chunk bytes in use by glibc's count: arena chunks plus mmapped ones. */
static size_t glibc_in_use(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

/* Whether malloc is glibc's own and mallinfo2 counts it: the library's
** default allocator is then glibc's malloc, unless this is the jemalloc
** build (which links mallctl). A block of 2000 bytes (too large for the
** per-thread cache, which would hand out a block counted already) must
** grow mallinfo2's count by its usable size plus a size_t (under ASan or
** valgrind, whose malloc is not glibc's, it does not). */
static int on_glibc_malloc(void)
{
    if (dlsym(RTLD_DEFAULT, "mallctl"))
        return 0;
    size_t before = glibc_in_use();
    void *p = malloc(2000);
    size_t grew = glibc_in_use() - before;
    int yes = p && grew == malloc_usable_size(p) + sizeof(size_t);
    free(p);
    return yes;
}

/* The explicit entries' total (every explicit entry is HEAP here). */
static int64_t explicit_total(const got *g)
{
    int64_t sum = 0;
    for (int i = 0; i < g->n; i++)
        if (strncmp(g->e[i].path, "explicit/", 9) == 0)
            sum += g->e[i].amount;
    return sum;
}

/* Work done in a thread of its own, so that its blocks leave glibc's
** per-thread cache (tcache) when it exits: a freed block that the cache
** keeps is still in use by mallinfo2's count. */
typedef struct glibc_work {
    atab_table *t;
    const atab_atom **keep;
    int n, phase;
} glibc_work;

#define BIG_ATOM (200 * 1024)   /* past the mmap threshold set below */

static void *glibc_phase(void *arg)
{
    glibc_work *w = arg;
    static char big[BIG_ATOM + 1];
    char buf[64];
    if (w->phase == 0) {   /* a table, and w->n atoms kept */
        w->t = atab_table_new(NULL);
        for (int i = 0; w->t && i < w->n; i++) {
            int n = snprintf(buf, sizeof buf, "glibc-%d-%.*s", i, i % 40,
                             "0123456789012345678901234567890123456789");
            w->keep[i] = atab_intern(w->t, buf, (size_t)n);
        }
        memset(big, 'b', BIG_ATOM);   /* one block glibc mmaps alone */
        w->keep[w->n] = atab_intern(w->t, big, BIG_ATOM);
    } else if (w->phase == 1) {   /* churn: half released, others come and go */
        for (int i = 0; i < w->n; i += 2)
            atab_release(w->t, w->keep[i]);
        for (int i = 0; i < 3000; i++) {
            snprintf(buf, sizeof buf, "churn-%d", i);
            atab_release(w->t, atab_intern_cstr(w->t, buf));
        }
        atab_gc(w->t);
    } else {   /* the first table a thread makes: glibc's one-time costs */
        atab_table_free(atab_table_new(NULL));
        atab_table *t = atab_table_new(NULL);
        atab_release(t, atab_intern_cstr(t, "warm"));
        atab_table_free(t);
    }
    return NULL;
}

static void glibc_run(glibc_work *w, int phase)
{
    pthread_t th;
    w->phase = phase;
    assert_int_equal(pthread_create(&th, NULL, glibc_phase, w), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
}

/* With glibc's malloc, the report's explicit total is what the table made
** mallinfo2's in-use count grow by, to the byte: usable sizes plus each
** block's chunk header, for arena chunks and an mmapped one; after churn
** and atab_gc too. The work stays within one of its thread's arena heaps
** (64 MiB, 1 MiB where long is 4 bytes): a second heap's header and the
** fence posts closing the first are in use by mallinfo2's count and belong
** to no block. */
#define GLIBC_ATOMS (sizeof(long) == 4 ? 8000 : 20000)
static void explicit_total_matches_glibc_mallinfo2_to_the_byte(void **state)
{
    (void)state;
    if (!on_glibc_malloc())
        skip();   /* jemalloc build, ASan, valgrind, or not glibc */
    static const atab_atom *keep[20001];
    const int n = GLIBC_ATOMS;
    glibc_work w = {NULL, keep, n, 0};
    got g;
    assert_int_equal(mallopt(M_MMAP_THRESHOLD, 128 * 1024), 1);   /* fixed */
    glibc_run(&w, 2);
    size_t before = glibc_in_use(), mapped = mallinfo2().hblkhd;
    glibc_run(&w, 0);
    assert_non_null(w.t);
    assert_non_null(keep[n]);
    size_t after = glibc_in_use();
    assert_true(mallinfo2().hblkhd > mapped);   /* the big atom is mmapped */
    report_into(w.t, &g);
    assert_true(amount_of(&g, "explicit/heap-overhead/atoms") > 0);
    assert_int_equal(explicit_total(&g), after - before);
    assert_int_equal(heap_total(&g), after - before);

    glibc_run(&w, 1);
    after = glibc_in_use();
    report_into(w.t, &g);
    assert_int_equal(amount_of(&g, "atoms-dynamic"), n / 2 + 1);   /* odd ones and the big one */
    assert_int_equal(explicit_total(&g), after - before);
    for (int i = 1; i < n; i += 2)
        atab_release(w.t, keep[i]);
    atab_release(w.t, keep[n]);
    atab_table_free(w.t);
}

/* The heap-overhead entry is there exactly when the table's allocator is
** glibc's malloc: not with jemalloc, ASan's or valgrind's malloc, nor with
** a host's hooks (usable sizes told or not). */
static void heap_overhead_is_reported_only_on_glibc_malloc(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    got g;
    char buf[32];
    for (int i = 0; i < 100; i++) {
        snprintf(buf, sizeof buf, "overhead-%d", i);
        atab_release(t, atab_intern_cstr(t, buf));
    }
    report_into(t, &g);
    const got_entry *e = find(&g, "explicit/heap-overhead/atoms");
    assert_int_equal(e != NULL, on_glibc_malloc());
    if (e)
        assert_int_equal(e->kind, ATAB_KIND_HEAP);   /* in glibc's in-use count */
    atab_report_options o = {"dom/css", NULL, 0};   /* a prefix goes after heap-overhead/ */
    report_ex_into(t, &o, &g);
    assert_int_equal(find(&g, "explicit/heap-overhead/dom/css/atoms") != NULL, e != NULL);
    assert_null(find(&g, "explicit/dom/css/heap-overhead/atoms"));
    atab_table_free(t);

    round_alloc r = {{0}, 0};
    atab_allocator al = {ra_alloc, ra_free, ra_usable, &r};
    t = plain_table(&al);
    atab_intern_cstr(t, "hooked");
    report_into(t, &g);
    assert_null(find(&g, "explicit/heap-overhead/atoms"));
    atab_table_free(t);
}

/* With the default allocator (the C library's malloc, or jemalloc in an
** ALLOCATOR=jemalloc build), the slop entry is exactly the carved blocks'
** rounding to 8 bytes plus what the process's malloc_usable_size says each
** chunk holds beyond its request (ASan's malloc gives every request
** exactly: 0 there). */
static void default_slop_is_malloc_usable_size_minus_the_request(void **state)
{
    (void)state;
    static const atab_atom *keep[5000];
    char buf[64];
    got g;
    size_t slop = 0;
    atab_options o = {0};
    o.flags = ATAB_NO_DEFAULT_STATICS;
    atab_table *t = atab_table_new(&o);
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(buf, sizeof buf, "usable-%d-%.*s", i, i % 40,
                         "0123456789012345678901234567890123456789");
        keep[i] = atab_intern(t, buf, (size_t)n);
        assert_non_null(keep[i]);
        assert_true(atab__carved((size_t)n));
        slop += atab__block_bytes((size_t)n) - (sizeof(atab_atom) + (size_t)n + 1);
    }
    assert_true(t->n_chunks > 1);
    for (size_t i = 0; i < t->n_chunks; i++)
        slop += malloc_usable_size((void *)t->chunks[i]) - ((atab__chunk *)t->chunks[i])->size;
    report_into(t, &g);
    assert_true(atab_report_has_usable_size(t));
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/slop"), slop);
    for (int i = 0; i < 5000; i++)
        atab_release(t, keep[i]);
    atab_table_free(t);
}

/* ---- unknown slop ---- */

static size_t says_zero(void *ud, const void *p, size_t size)
{
    (void)ud; (void)p; (void)size;
    return 0;
}

static size_t says_all(void *ud, const void *p, size_t size)
{
    (void)ud; (void)p; (void)size;
    return SIZE_MAX;
}

static size_t says_far_more(void *ud, const void *p, size_t size)
{
    (void)ud; (void)p;
    return size + ((size_t)1 << (sizeof(size_t) * 8 - 2));
}

static void check_allocator_slop_left_out(atab_allocator *al, counting_alloc *c)
{
    atab_table *t = plain_table(al);
    const atab_atom *keep[100];
    size_t req = 0, slop = 0;
    got g;
    intern_assorted(t, 100, keep, &req, &slop);
    report_into(t, &g);
    /* the carved blocks' rounding is known; the allocator's slop is not */
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/slop"), slop);
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/atom-objects"), req);
    assert_int_equal(heap_total(&g), c->bytes);   /* requested sizes */
    assert_false(atab_report_has_usable_size(t));
    static sink k;   /* the tree says so */
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree(t, sink_write, &k), ATAB_OK);
    assert_non_null(strstr(k.buf, "── atom-objects\n"));
    assert_non_null(strstr(k.buf, "── slop\n"));
    assert_non_null(strstr(k.buf, "slop unknown"));
    atab_table_free(t);
}

static void only_the_blocks_rounding_is_slop_when_the_allocator_cannot_tell(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    al.usable_size = NULL;
    check_allocator_slop_left_out(&al, &c);
    al.usable_size = says_zero;
    check_allocator_slop_left_out(&al, &c);
    /* nor one that answers implausibly more (a sum of such would wrap) */
    al.usable_size = says_all;
    check_allocator_slop_left_out(&al, &c);
    al.usable_size = says_far_more;
    check_allocator_slop_left_out(&al, &c);
}

/* The counting allocator, also counting the blocks of one size. */
typedef struct sized_alloc {
    counting_alloc c;
    size_t size;
    long allocs, live;   /* of that size */
} sized_alloc;

static void *sa_alloc(void *ud, size_t size)
{
    sized_alloc *s = ud;
    void *p = ca_alloc(&s->c, size);
    if (p && size == s->size)
        s->allocs++, s->live++;
    return p;
}

static void sa_free(void *ud, void *p, size_t size)
{
    sized_alloc *s = ud;
    if (p && size == s->size)
        s->live--;
    ca_free(&s->c, p, size);
}

static size_t sa_usable(void *ud, const void *p, size_t size)
{
    (void)ud; (void)p;
    return size;
}

/* For the tests of recycled blocks: a table sweeping every 64 atoms on a
** sized allocator (sa, al: the caller's) that counts blocks of 10-byte
** atoms. Skips the test in debug builds: they have no thread records, so
** no queues and nothing recycled. */
static atab_table *recycling_table(sized_alloc *sa, atab_allocator *al)
{
#ifdef ATAB_DEBUG
    skip();
#endif
    *sa = (sized_alloc){{0}, 8 + 10 + 1, 0, 0};
    *al = (atab_allocator){sa_alloc, sa_free, sa_usable, sa};
    atab_table *t = sweeping_table(al, 42, 64);
    assert_non_null(t);
    return t;
}

/* Frees a recycling table: every block back, each at its allocated size. */
static void recycling_done(atab_table *t, sized_alloc *sa)
{
    atab_table_free(t);
    assert_int_equal(sa->c.live, 0);
    assert_false(sa->c.size_mismatch);   /* each block freed at its allocated size */
}

/* Interns and releases n new strings of 10 bytes ("dead-NNNNN"), from
** `from` on; their addresses go to seen[] when given. */
static void churn_10(atab_table *t, int from, int n, const atab_atom **seen)
{
    char buf[16];
    for (int i = 0; i < n; i++) {
        snprintf(buf, sizeof buf, "dead-%05d", from + i);
        const atab_atom *a = atab_intern_cstr(t, buf);
        assert_non_null(a);
        if (seen)
            seen[i] = a;
        assert_int_equal(atab_release(t, a), ATAB_OK);
    }
}

static int seen_before(const atab_atom *a, const atab_atom *const *seen, int n)
{
    for (int i = 0; i < n; i++)
        if (seen[i] == a)
            return 1;
    return 0;
}

/* The atoms a thread's queue sweep frees are kept, as blocks, for its next
** new atoms of the same size class (chunk.h: blocks rounded up to 4): no
** allocation for those, reported while kept, and given back to their chunk
** by atab_gc. */
static void a_queue_sweeps_dead_atoms_are_reused_reported_and_given_back(void **state)
{
    (void)state;
    sized_alloc sa;
    atab_allocator al;
    atab_table *t = recycling_table(&sa, &al);
    counting_alloc *c = &sa.c;
    const atab_atom *dead[64], *held[10];
    got g;
    churn_10(t, 0, 64, dead);   /* the 64th release fills the queue: swept */
    assert_int_equal(atab_count(t), 0);
    report_into(t, &g);
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/recycled"), 64 * 20);
    assert_int_equal(heap_total(&g), c->bytes);   /* everything allocated is reported */
    uint32_t chunks = t->n_chunks;
    char buf[16];
    for (int i = 0; i < 10; i++) {   /* 9 bytes: the same size class as 10 */
        snprintf(buf, sizeof buf, "live-%04d", i);
        held[i] = atab_intern_cstr(t, buf);
        assert_non_null(held[i]);
        assert_string_equal(atab_chars(held[i]), buf);
        assert_int_equal(atab_len(held[i]), 9);
        assert_true(seen_before(held[i], dead, 64));
    }
    assert_int_equal(t->n_chunks, chunks);   /* no new chunk */
    const atab_atom *other = atab_intern_cstr(t, "a-longer-one-of-27-bytes-xx");
    assert_non_null(other);   /* no block of its class: carved anew */
    assert_false(seen_before(other, dead, 64));
    for (int i = 0; i < 10; i++)
        assert_ptr_equal(atab_intern_cstr(t, atab_chars(held[i])), held[i]);
    report_into(t, &g);
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/recycled"), 54 * 20);
    assert_int_equal(amount_of(&g, "atoms-dynamic"), 11);
    assert_int_equal(heap_total(&g), c->bytes);
    atab_gc(t);
    report_into(t, &g);
    assert_null(find(&g, "explicit/atoms/dynamic/recycled"));
    assert_int_equal(heap_total(&g), c->bytes);
    for (int i = 0; i < 10; i++) {   /* interned twice each */
        assert_int_equal(atab_release(t, held[i]), ATAB_OK);
        assert_int_equal(atab_release(t, held[i]), ATAB_OK);
    }
    assert_int_equal(atab_release(t, other), ATAB_OK);
    recycling_done(t, &sa);
}

/* A thread's next sweep gives back the blocks no new atom took since its
** last one (to their chunk: freed when it empties): what a thread keeps is
** at most one queue's worth. */
static void blocks_no_new_atom_took_are_given_back_at_the_next_sweep(void **state)
{
    (void)state;
    sized_alloc sa;
    atab_allocator al;
    atab_table *t = recycling_table(&sa, &al);
    got g;
    churn_10(t, 0, 64, NULL);
    char buf[32];
    for (int i = 0; i < 64; i++) {   /* 20 bytes, another class: none of the blocks fits */
        snprintf(buf, sizeof buf, "twenty-bytes-%07d", i);
        assert_int_equal(atab_release(t, atab_intern_cstr(t, buf)), ATAB_OK);
    }
    report_into(t, &g);
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/recycled"), 64 * 32);
    size_t chunk_bytes = 0;
    for (size_t i = 0; i < t->n_chunks; i++)
        chunk_bytes += ((atab__chunk *)t->chunks[i])->size;
    /* the first sweep's blocks are free in their chunks now */
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/free"), chunk_bytes - 64 * 32);
    assert_int_equal(heap_total(&g), sa.c.bytes);
    recycling_done(t, &sa);
}

/* A recycling table beside another thread's record (park), on which this
** thread has interned and released 64 atoms (dead[], or NULL): its queue
** was swept, and the sweep left them waiting for a grace period. */
static atab_table *waiting_table(sized_alloc *sa, atab_allocator *al, parked *other,
                                 const atab_atom **dead)
{
    atab_table *t = recycling_table(sa, al);
    park(other, t);   /* not alone: grace periods are not free */
    churn_10(t, 0, 64, dead);
    return t;
}

/* Beside another thread, a queue sweep leaves the atoms it unlinked
** waiting for a grace period (sweep.c): the report counts their blocks
** with the recycled ones, and no new atom takes them. The next sweep finds
** them not served (nobody ran a grace period), runs one, and keeps both
** batches' blocks for new atoms; atab_gc gives every block back. */
static void atoms_a_sweep_left_waiting_are_reported_then_kept_and_given_back(void **state)
{
    (void)state;
    sized_alloc sa;
    atab_allocator al;
    parked other;
    const atab_atom *dead[64], *next[64];
    atab_table *t = waiting_table(&sa, &al, &other, dead);
    got g;
    report_into(t, &g);
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/recycled"), 64 * 20);
    assert_int_equal(heap_total(&g), sa.c.bytes);
    churn_10(t, 64, 64, next);   /* swept again: a grace period for both */
    for (int i = 0; i < 64; i++)
        assert_false(seen_before(next[i], dead, 64));   /* the waiting blocks not reused */
    report_into(t, &g);
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/recycled"), 128 * 20);
    assert_int_equal(heap_total(&g), sa.c.bytes);
    const atab_atom *a = atab_intern_cstr(t, "live-0000");   /* 9 bytes: a kept block */
    assert_true(seen_before(a, dead, 64) || seen_before(a, next, 64));
    atab_gc(t);
    report_into(t, &g);
    assert_null(find(&g, "explicit/atoms/dynamic/recycled"));
    assert_int_equal(heap_total(&g), sa.c.bytes);
    assert_int_equal(atab_release(t, a), ATAB_OK);
    unpark(&other);
    recycling_done(t, &sa);
}

/* The bytes of t's chunks. */
static size_t chunks_bytes(const atab_table *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_chunks; i++)
        n += ((const atab__chunk *)t->chunks[i])->size;
    return n;
}

/* A failed allocation gives back the blocks this thread keeps
** (atab__recycled_free): with them the atoms waiting in its queue once a
** grace period has served them, and not before; a chunk they leave empty
** goes back to the allocator. */
static void a_failed_allocation_gives_back_waiting_atoms_only_once_served(void **state)
{
    (void)state;
    sized_alloc sa;
    atab_allocator al;
    parked other;
    atab_table *t = waiting_table(&sa, &al, &other, NULL);
    got g;
    atab__rec *r = atab__rec_find(t);
    assert_non_null(r);
    assert_int_equal(atab__recycled_free(t, r), 0);   /* none kept, none served */
    report_into(t, &g);
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/recycled"), 64 * 20);
    size_t free_before = amount_of(&g, "explicit/atoms/dynamic/free");
    size_t chunks_before = chunks_bytes(t);
    atab__synchronize(t);   /* a grace period: it serves them */
    assert_int_not_equal(atab__recycled_free(t, r), 0);
    report_into(t, &g);
    assert_null(find(&g, "explicit/atoms/dynamic/recycled"));
    assert_true(chunks_bytes(t) < chunks_before);   /* the first chunk held only them */
    assert_int_equal(amount_of(&g, "explicit/atoms/dynamic/free"),
                     free_before + 64 * 20 - (chunks_before - chunks_bytes(t)));
    assert_int_equal(heap_total(&g), sa.c.bytes);
    unpark(&other);
    recycling_done(t, &sa);
}

/* ---- counts ---- */

static void counts_report_dynamic_unused_static_and_handles(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    const atab_atom *keep[10];
    size_t req = 0, slop = 0;
    got g;
    intern_assorted(t, 10, keep, &req, &slop);
    for (int i = 0; i < 3; i++)
        atab_release(t, keep[i]);
    assert_ptr_equal(atab_external_acquire(t, keep[3]), keep[3]);
    assert_ptr_equal(atab_external_acquire(t, keep[4]), keep[4]);
    report_into(t, &g);
    assert_int_equal(amount_of(&g, "atoms-dynamic"), 10);
    assert_int_equal(amount_of(&g, "atoms-dynamic-unused"), 3);
    assert_int_equal(amount_of(&g, "atoms-static"), 0);
    assert_int_equal(amount_of(&g, "atoms-external-handles"), 2);
    assert_int_equal(amount_of(&g, "atoms-static-data"), 0);
    assert_int_equal(atab_external_release(t, keep[3]), ATAB_OK);
    assert_int_equal(atab_external_release(t, keep[4]), ATAB_OK);
    for (int i = 0; i < g.n; i++) {
        const got_entry *e = &g.e[i];
        int explicit_ = strncmp(e->path, "explicit/", 9) == 0;
        assert_true(e->units == ATAB_UNITS_BYTES || e->units == ATAB_UNITS_COUNT);
        if (explicit_)   /* about:memory's rule for explicit/ */
            assert_true(e->kind != ATAB_KIND_OTHER && e->units == ATAB_UNITS_BYTES);
        if (e->units == ATAB_UNITS_COUNT)
            assert_int_equal(e->kind, ATAB_KIND_OTHER);
        assert_true(e->desc[0] >= 'A' && e->desc[0] <= 'Z');   /* a sentence */
        assert_int_equal(e->desc[strlen(e->desc) - 1], '.');
    }
    assert_int_equal(find(&g, "atoms-static-data")->kind, ATAB_KIND_NONHEAP);
    atab_table_free(t);
}

/* ---- the JSON, read by jansson ---- */

/* Parses a whole dump (duplicate keys refused); fails the test otherwise. */
static json_t *parse_json(const char *text)
{
    json_error_t err;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &err);
    if (!root)
        fail_msg("the dump does not parse: %s (line %d, column %d)", err.text,
                 err.line, err.column);
    return root;
}

/* The string member `key` of obj; fails the test when it is not one. */
static const char *member_string(const json_t *obj, const char *key)
{
    const json_t *m = json_object_get(obj, key);
    assert_true(json_is_string(m));
    return json_string_value(m);
}

static json_int_t member_integer(const json_t *obj, const char *key)
{
    const json_t *m = json_object_get(obj, key);
    assert_true(json_is_integer(m));   /* every amount an integer, no fraction */
    return json_integer_value(m);
}

/* The reports' array of a dump, after checking the top level: exactly
** version 1, hasMozMallocUsableSize as `usable`, and reports. */
static const json_t *top_level(const json_t *root, int usable)
{
    assert_true(json_is_object(root));
    assert_int_equal(json_object_size(root), 3);
    assert_int_equal(member_integer(root, "version"), 1);
    const json_t *has = json_object_get(root, "hasMozMallocUsableSize");
    assert_true(json_is_boolean(has));
    assert_int_equal(json_is_true(has), usable);
    const json_t *reports = json_object_get(root, "reports");
    assert_true(json_is_array(reports));
    return reports;
}

static void json_parses_and_has_every_key(void **state)
{
    (void)state;
    static const char process[] = "proc \"q\" \\ \n\x01 \xc3\xa9 \xff end";
    static const char decoded[] = "proc \"q\" \\ \n\x01 \xc3\xa9 \xef\xbf\xbd end";
    round_alloc r = {{0}, 0};
    atab_allocator al = {ra_alloc, ra_free, ra_usable, &r};
    atab_table *t = plain_table(&al);
    const atab_atom *keep[50];
    size_t req = 0, slop = 0;
    static sink k;
    got g;
    intern_assorted(t, 50, keep, &req, &slop);
    report_into(t, &g);
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_json(t, process, sink_write, &k), ATAB_OK);

    json_t *root = parse_json(k.buf);
    const json_t *reports = top_level(root, 1);
    assert_int_equal(json_array_size(reports), g.n);
    for (int i = 0; i < g.n; i++) {
        const json_t *e = json_array_get(reports, (size_t)i);
        assert_true(json_is_object(e));
        assert_int_equal(json_object_size(e), 6);
        assert_string_equal(member_string(e, "process"), decoded);
        assert_string_equal(member_string(e, "path"), g.e[i].path);
        assert_string_equal(member_string(e, "description"), g.e[i].desc);
        assert_int_equal(member_integer(e, "kind"), g.e[i].kind);
        assert_int_equal(member_integer(e, "units"), g.e[i].units);
        assert_int_equal(member_integer(e, "amount"), g.e[i].amount);
    }
    json_decref(root);

    memset(&k, 0, sizeof k);   /* NULL process: "" */
    assert_int_equal(atab_report_json(t, NULL, sink_write, &k), ATAB_OK);
    root = parse_json(k.buf);
    reports = top_level(root, 1);
    assert_string_equal(member_string(json_array_get(reports, 0), "process"), "");
    json_decref(root);
    atab_table_free(t);

    counting_alloc c = {0};   /* no usable sizes: false, no slop report */
    atab_allocator blind = ca_allocator(&c);
    blind.usable_size = NULL;
    t = plain_table(&blind);
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_json(t, "p", sink_write, &k), ATAB_OK);
    root = parse_json(k.buf);
    top_level(root, 0);
    assert_null(strstr(k.buf, "slop"));
    json_decref(root);
    atab_table_free(t);
}

/* ---- the tree ---- */

/* The line of the tree that ends with `name`, or NULL. */
static const char *line_of(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *l = text; *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        if (len >= n && memcmp(l + len - n, name, n) == 0 &&
            (len == n || l[len - n - 1] == ' '))
            return l;
        l += len + (e != NULL);
    }
    return NULL;
}

static void check_tree(const char *text)
{
    static const char *const lines[] = {
        "(100.0%) -- explicit", "-- atoms", "-- dynamic", "── atom-objects",
        "── slop", "── table", "── atoms-static-data", "── atoms-dynamic",
        "── atoms-dynamic-unused", "── atoms-static", "── atoms-external-handles",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        assert_non_null(line_of(text, lines[i]));
    assert_non_null(strstr(text, "Explicit Allocations\n"));
    assert_non_null(strstr(text, "\nOther Measurements\n"));
    assert_null(strstr(text, "\nCounts\n"));   /* about:memory has no such heading */
    assert_non_null(strstr(text, "├──"));
    assert_non_null(strstr(text, "└──"));
    /* counts are Other Measurements, after the explicit tree */
    assert_true(line_of(text, "── atoms-dynamic") > strstr(text, "\nOther Measurements\n"));
}

static void tree_shows_every_path_largest_first(void **state)
{
    (void)state;
    round_alloc r = {{0}, 0};
    atab_allocator al = {ra_alloc, ra_free, ra_usable, &r};
    static sink k;
    char big[4000];

    atab_table *t = plain_table(&al);   /* a few tiny atoms: table first */
    atab_intern_cstr(t, "a");
    atab_intern_cstr(t, "b");
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree(t, sink_write, &k), ATAB_OK);
    check_tree(k.buf);
    assert_true(line_of(k.buf, "── table") < line_of(k.buf, "-- dynamic"));
    atab_table_free(t);

    t = plain_table(&al);   /* big atoms: dynamic first */
    memset(big, 'x', sizeof big);
    for (int i = 0; i < 300; i++) {
        big[0] = (char)('A' + i % 26);
        big[1] = (char)('A' + i / 26);
        atab_intern(t, big, sizeof big - (size_t)i);
    }
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree(t, sink_write, &k), ATAB_OK);
    check_tree(k.buf);
    assert_true(line_of(k.buf, "-- dynamic") < line_of(k.buf, "── table"));
    assert_true(line_of(k.buf, "── atom-objects") < line_of(k.buf, "── slop"));

    got g;   /* the root's amount is the heap total, with separators */
    char want[64];
    report_into(t, &g);
    int64_t total = heap_total(&g);
    snprintf(want, sizeof want, "%d,%03d,%03d B (100.0%%) -- explicit\n",
             (int)(total / 1000000), (int)(total / 1000 % 1000), (int)(total % 1000));
    assert_true(total >= 1000000);
    assert_non_null(strstr(k.buf, want));
    atab_table_free(t);
}

/* ---- about:memory's rules, copied (aboutMemory.js, verbose mode) ---- */

/* formatTreeFrac(aNum, aDenom): 0/0 is 100%; 99.995%..100% is "100.0%";
** else Intl.NumberFormat percent, two integer and two fraction digits,
** rounding the double's shortest decimal form half away from zero. */
static void js_tree_frac(char *buf, size_t cap, int64_t a, int64_t d)
{
    double num = d == 0 ? 1.0 : (double)a / (double)d, mag = num < 0 ? -num : num;
    char s[40], dig[24];
    int nd = 0;
    if (num >= 0.99995 && num <= 1.0) {
        snprintf(buf, cap, "100.0%%");
        return;
    }
    for (int p = 1; p <= 17; p++) {   /* shortest digits that read back */
        snprintf(s, sizeof s, "%.*e", p - 1, mag);
        if (strtod(s, NULL) == mag)
            break;
    }
    const char *q = s;
    for (; *q != 'e'; q++)
        if (*q != '.')
            dig[nd++] = *q;
    int ip = atoi(q + 1) + 5;   /* digits before the point of mag * 10^4 */
    long long v = 0;
    for (int i = 0; i < ip; i++)
        v = v * 10 + (i < nd ? dig[i] - '0' : 0);
    if (mag != 0 && ip >= 0 && ip < nd && dig[ip] >= '5')
        v++;
    snprintf(buf, cap, "%s%02lld.%02lld%%", num < 0 && v ? "-" : "", v / 100, v % 100);
}

/* "1,234 B" or "1,234" back to 1234 (what precedes `end`). */
static int64_t parse_amount(const char *s)
{
    int64_t v = 0;
    int neg = 0;
    for (; *s == ' '; s++)
        ;
    if (*s == '-') {
        neg = 1;
        s++;
    }
    for (; (*s >= '0' && *s <= '9') || *s == ','; s++)
        if (*s != ',')
            v = v * 10 + (*s - '0');
    return neg ? -v : v;
}

/* Checks a tree against the entries, by about:memory's rules: every
** explicit line's percentage is of the root, the root is the explicit
** entries plus heap-unclassified (heap-allocated minus the explicit HEAP
** entries, when heap-allocated is there), and Other Measurements lists
** every other entry sorted by name, right-aligned, without percentage. */
static void check_about_memory_rules(const char *text, const got *g)
{
    int64_t root = 0, heap = 0, ha = 0;
    int has_ha = 0, nother = 0;
    const char *other[16];
    for (int i = 0; i < g->n; i++) {
        const got_entry *e = &g->e[i];
        if (strncmp(e->path, "explicit/", 9) == 0) {
            root += e->amount;
            heap += e->kind == ATAB_KIND_HEAP ? e->amount : 0;
        } else {
            int j = nother++;   /* sorted by name */
            for (; j > 0 && strcmp(other[j - 1], e->path) > 0; j--)
                other[j] = other[j - 1];
            other[j] = e->path;
        }
        if (strcmp(e->path, "heap-allocated") == 0) {
            has_ha = 1;
            ha = e->amount;
        }
    }
    if (has_ha)
        root += ha - heap;
    const char *hu = line_of(text, "── heap-unclassified");
    assert_true(has_ha ? hu != NULL : hu == NULL);
    if (hu)   /* the line's amount, after the tree drawing */
        assert_int_equal(parse_amount(strpbrk(hu, "-0123456789")), ha - heap);

    const char *om = strstr(text, "\nOther Measurements\n\n");
    assert_non_null(om);
    assert_null(strstr(text, "\nCounts\n"));
    int lines = 0;
    for (const char *l = strstr(text, "explicit\n") ; l && l < om; lines++) {
        l = strchr(l, '\n') + 1;   /* each line of the tree */
        const char *open = strstr(l, " (");
        if (l >= om || !open || open > strchr(l, '\n'))
            break;
        const char *digits = open;
        while (digits > l && (digits[-1] == ',' || digits[-1] == 'B' ||
               digits[-1] == ' ' || (digits[-1] >= '0' && digits[-1] <= '9') ||
               digits[-1] == '-'))
            digits--;   /* back over the amount, not into "──" */
        char want[32], line_pc[48];
        js_tree_frac(want, sizeof want, parse_amount(digits), root);
        snprintf(line_pc, sizeof line_pc, " (%s) ", want);
        assert_memory_equal(open, line_pc, strlen(line_pc));
    }
    assert_true(lines >= 4);
    char first[64];   /* the root line */
    js_tree_frac(first, sizeof first, root, root);
    assert_string_equal(first, "100.0%");

    const char *l = om + strlen("\nOther Measurements\n\n");
    size_t col = 0;
    for (int i = 0; i < nother; i++) {
        const char *sep = strstr(l, " ── "), *eol = strchr(l, '\n');
        assert_true(sep && eol && sep < eol);
        assert_null(memchr(l, '(', (size_t)(eol - l)));   /* no percentage */
        assert_int_equal((size_t)(eol - sep - 8), strlen(other[i]));
        assert_memory_equal(sep + 8, other[i], strlen(other[i]));
        if (i == 0)
            col = (size_t)(sep - l);
        assert_int_equal((size_t)(sep - l), col);   /* right-aligned */
        l = eol + 1;
    }
    assert_true(*l == '\0' || *l == '\n' || *l == '(');
}

static void the_tree_follows_about_memorys_rules_for_the_same_entries(void **state)
{
    (void)state;
    round_alloc r = {{0}, 0};
    atab_allocator al = {ra_alloc, ra_free, ra_usable, &r};
    atab_table *t = plain_table(&al);
    const atab_atom *keep[200];
    size_t req = 0, slop = 0;
    static sink k;
    got g;
    intern_assorted(t, 200, keep, &req, &slop);

    report_into(t, &g);   /* no host entries: no heap-unclassified */
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree(t, sink_write, &k), ATAB_OK);
    check_about_memory_rules(k.buf, &g);

    /* heap-allocated at 2,000,000: the root; a 100-byte host entry is
    ** 0.005%, a tie that rounds away from zero (00.01%) */
    atab_report_entry x[3] = {
        {"heap-allocated", ATAB_KIND_OTHER, ATAB_UNITS_BYTES, 2000000, "all"},
        {"explicit/host/tie", ATAB_KIND_HEAP, ATAB_UNITS_BYTES, 100, NULL},
        {"resident", ATAB_KIND_OTHER, ATAB_UNITS_BYTES, 9000000, "rss"},
    };
    atab_report_options o = {NULL, x, 3};
    report_ex_into(t, &o, &g);
    assert_string_equal(find(&g, "explicit/host/tie")->desc, "");
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree_ex(t, &o, sink_write, &k), ATAB_OK);
    check_about_memory_rules(k.buf, &g);
    assert_non_null(strstr(k.buf, "2,000,000 B (100.0%) -- explicit\n"));
    assert_non_null(strstr(k.buf, "100 B (00.01%) ── host/tie\n"));

    x[0].amount = 1000;   /* less than the entries claim: negative */
    report_ex_into(t, &o, &g);
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree_ex(t, &o, sink_write, &k), ATAB_OK);
    check_about_memory_rules(k.buf, &g);
    assert_int_equal(atab_last_error(), ATAB_OK);
    atab_table_free(t);
}

/* Is s valid UTF-8 with no control character but '\n'? (Lead bytes and
** continuations only; the library's own check rejects overlong forms.) */
static int utf8_lines(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3
                 : (*p & 0xf8) == 0xf0 ? 4 : 0;
        if (n == 0 || (*p < 0x20 && *p != '\n') || *p == 0x7f)
            return 0;
        for (size_t i = 1; i < n; i++)
            if ((p[i] & 0xc0) != 0x80)
                return 0;
        p += n;
    }
    return 1;
}

/* Host paths are the host's bytes: the tree shows a control character or
** invalid UTF-8 in one as U+FFFD, and stays UTF-8 text of whole lines. */
static void the_tree_shows_a_host_path_s_bad_bytes_as_replacement_characters(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    static sink k;
    atab_report_entry x[3] = {
        {"explicit/host/a\nb", ATAB_KIND_HEAP, ATAB_UNITS_BYTES, 64, NULL},
        {"other-\xff\xc3\xa9-\xe2\x82", ATAB_KIND_OTHER, ATAB_UNITS_COUNT, 3, NULL},
        {"line-\xc2\x85-\xe2\x80\xa8-end", ATAB_KIND_OTHER, ATAB_UNITS_COUNT, 4, NULL},
    };
    atab_report_options o = {"tab\x01le", x, 3};
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree_ex(t, &o, sink_write, &k), ATAB_OK);
    assert_non_null(strstr(k.buf, "── host/a\xef\xbf\xbd" "b\n"));
    assert_non_null(strstr(k.buf, " ── other-\xef\xbf\xbd\xc3\xa9-\xef\xbf\xbd\xef\xbf\xbd\n"));
    assert_non_null(strstr(k.buf, "tab\xef\xbf\xbdle"));
    /* a C1 control (NEL) and U+2028 break lines too: one U+FFFD each */
    assert_non_null(strstr(k.buf, " ── line-\xef\xbf\xbd-\xef\xbf\xbd-end\n"));
    assert_true(utf8_lines(k.buf));
    atab_table_free(t);
}

/* Extra entries with equal paths are summed (atab_report_entry.path), as
** about:memory sums a dump's reports of one path: outside explicit/ too,
** where the tree shows one line of their sum, and heap-unclassified is
** heap-allocated's sum minus the explicit HEAP entries. */
static void equal_extra_paths_outside_explicit_are_summed_in_the_tree(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    atab_report_entry x[4] = {
        {"heap-allocated", ATAB_KIND_OTHER, ATAB_UNITS_BYTES, 1000000, "libc"},
        {"heap-allocated", ATAB_KIND_OTHER, ATAB_UNITS_BYTES, 500000, "jemalloc"},
        {"resident", ATAB_KIND_OTHER, ATAB_UNITS_BYTES, 7000000, "rss"},
        {"resident", ATAB_KIND_OTHER, ATAB_UNITS_BYTES, 2000000, "rss"},
    };
    atab_report_options o = {NULL, x, 4};
    static sink k;
    got g;
    report_ex_into(t, &o, &g);
    int64_t heap = 0;
    for (int i = 0; i < g.n; i++)
        if (strncmp(g.e[i].path, "explicit/", 9) == 0 && g.e[i].kind == ATAB_KIND_HEAP)
            heap += g.e[i].amount;
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree_ex(t, &o, sink_write, &k), ATAB_OK);
    const char *hu = line_of(k.buf, "── heap-unclassified");
    assert_non_null(hu);
    assert_int_equal(parse_amount(strpbrk(hu, "-0123456789")), 1500000 - heap);
    assert_non_null(strstr(k.buf, "1,500,000 B (100.0%) -- explicit\n"));
    const char *om = strstr(k.buf, "\nOther Measurements\n\n");
    assert_non_null(om);
    const char *ha = line_of(om, "── heap-allocated"), *rs = line_of(om, "── resident");
    assert_non_null(ha);
    assert_non_null(rs);
    assert_int_equal(parse_amount(ha), 1500000);
    assert_int_equal(parse_amount(rs), 9000000);
    assert_null(line_of(strchr(ha, '\n'), "── heap-allocated"));   /* one line each */
    assert_null(line_of(strchr(rs, '\n'), "── resident"));
    atab_table_free(t);
}

/* Equal paths are summed, so they must share their units: a sum of bytes
** and a count has none (the tree showed it with whichever entry sorted
** first's units: "7,000,003 B" for 7,000,000 bytes and 3 things). Such
** options are refused (ATAB_EINVAL), as entries breaking the other rules
** of atab_report_entry.path are, for an extra path equal to another extra
** one's or to one of the table's (html-atoms-dynamic, a count). */
static void equal_paths_of_other_units_are_einval(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    atab_report_entry x[2] = {
        {"resident", ATAB_KIND_OTHER, ATAB_UNITS_BYTES, 7000000, "rss"},
        {"resident", ATAB_KIND_OTHER, ATAB_UNITS_COUNT, 3, "pages"},
    };
    atab_report_options o = {NULL, x, 2};
    static sink k;
    memset(&k, 0, sizeof k);
    int rc = atab_report_tree_ex(t, &o, sink_write, &k);
    if (rc == ATAB_OK && strstr(k.buf, "\nOther Measurements"))
        print_message("summed bytes and a count:%s", strstr(k.buf, "\nOther Measurements"));
    assert_int_equal(rc, ATAB_EINVAL);
    assert_int_equal(atab_report_ex(t, &o, collect_cb, &k), ATAB_EINVAL);
    x[1].units = ATAB_UNITS_BYTES;   /* the same units: summed */
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree_ex(t, &o, sink_write, &k), ATAB_OK);
    assert_non_null(strstr(k.buf, "7,000,003 B"));
    atab_report_entry y[1] = {{"html-atoms-dynamic", ATAB_KIND_OTHER, ATAB_UNITS_BYTES, 5, "b"}};
    atab_report_options p = {"html", y, 1};
    assert_int_equal(atab_report_tree_ex(t, &p, sink_write, &k), ATAB_EINVAL);
    y[0].units = ATAB_UNITS_COUNT;
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree_ex(t, &p, sink_write, &k), ATAB_OK);
    atab_table_free(t);
}

static void a_prefix_keeps_two_tables_apart(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    static sink k;
    got g;
    atab_report_options o = {"html", NULL, 0};
    atab_intern_cstr(t, "div");
    report_ex_into(t, &o, &g);
    assert_non_null(find(&g, "explicit/html/atoms/table"));
    assert_non_null(find(&g, "explicit/html/atoms/dynamic/atom-objects"));
    assert_non_null(find(&g, "html-atoms-dynamic"));
    assert_non_null(find(&g, "html-atoms-static-data"));
    assert_null(find(&g, "atoms-dynamic"));
    o.prefix = "dom/css";   /* nests explicit; single names stay single */
    report_ex_into(t, &o, &g);
    assert_non_null(find(&g, "explicit/dom/css/atoms/table"));
    assert_non_null(find(&g, "dom-css-atoms-dynamic-unused"));
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree_ex(t, &o, sink_write, &k), ATAB_OK);
    check_about_memory_rules(k.buf, &g);
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_json_ex(t, "p", &o, sink_write, &k), ATAB_OK);
    assert_non_null(strstr(k.buf, "\"path\":\"explicit/dom/css/atoms/table\""));
    o.prefix = "";   /* empty: the plain report */
    report_ex_into(t, &o, &g);
    assert_non_null(find(&g, "explicit/atoms/table"));
    assert_int_equal(atab_last_error(), ATAB_OK);

    static const char *const bad[] = {"/x", "x/", "a//b", "/"};
    char longp[ATAB_REPORT_PREFIX_MAX + 2];
    memset(longp, 'p', sizeof longp - 1);
    longp[sizeof longp - 1] = '\0';
    for (size_t i = 0; i <= sizeof bad / sizeof bad[0]; i++) {
        o.prefix = i < sizeof bad / sizeof bad[0] ? bad[i] : longp;
        memset(&k, 0, sizeof k);
        assert_int_equal(atab_report_ex(t, &o, collect_cb, &g), ATAB_EINVAL);
        assert_int_equal(atab_report_tree_ex(t, &o, sink_write, &k), ATAB_EINVAL);
        assert_int_equal(atab_report_json_ex(t, "p", &o, sink_write, &k), ATAB_EINVAL);
        assert_int_equal(k.calls, 0);
    }
    longp[ATAB_REPORT_PREFIX_MAX] = '\0';   /* the longest allowed */
    o.prefix = longp;
    report_ex_into(t, &o, &g);
    atab_table_free(t);
}

static void bad_extra_entries_are_einval(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    atab_report_entry x[ATAB_REPORT_EXTRA_MAX + 1];
    for (size_t i = 0; i < ATAB_REPORT_EXTRA_MAX + 1; i++)
        x[i] = (atab_report_entry){"explicit/host", ATAB_KIND_HEAP,
                                   ATAB_UNITS_BYTES, 1, "d"};
    atab_report_options o = {NULL, x, ATAB_REPORT_EXTRA_MAX + 1};
    static sink k;
    assert_int_equal(atab_report_tree_ex(t, &o, sink_write, &k), ATAB_EINVAL);
    o.n_extra = ATAB_REPORT_EXTRA_MAX;   /* the most: same path summed */
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree_ex(t, &o, sink_write, &k), ATAB_OK);
    assert_non_null(strstr(k.buf, "8 B ("));
    x[0].units = ATAB_UNITS_COUNT;   /* a count inside explicit/ */
    assert_int_equal(atab_report_json_ex(t, "p", &o, sink_write, &k), ATAB_EINVAL);
    x[0].units = ATAB_UNITS_BYTES;
    x[1].path = "";
    assert_int_equal(atab_report_ex(t, &o, collect_cb, &k), ATAB_EINVAL);
    x[1].path = NULL;
    assert_int_equal(atab_report_ex(t, &o, collect_cb, &k), ATAB_EINVAL);
    o.extra = NULL;
    assert_int_equal(atab_report_ex(t, &o, collect_cb, &k), ATAB_EINVAL);
    assert_int_equal(atab_report_tree_ex(NULL, NULL, sink_write, &k), ATAB_EINVAL);
    atab_table_free(t);
}

/* Extra amounts past ATAB_REPORT_AMOUNT_MAX either way are EINVAL; at the
** bound, the sums fit (UBSan in CI's sanitizer build checks the overflow):
** two explicit entries nearly cancelling leave a root far smaller than
** either kid, whose share is then written as a finite number, and
** heap-allocated at -MAX gives heap-unclassified below it. */
static void extra_amounts_past_the_bound_are_einval_and_at_it_add_up(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    atab_report_entry x[3] = {
        {"explicit/host/a", ATAB_KIND_HEAP, ATAB_UNITS_BYTES, ATAB_REPORT_AMOUNT_MAX + 1, "a"},
        {"explicit/host/b", ATAB_KIND_HEAP, ATAB_UNITS_BYTES, -ATAB_REPORT_AMOUNT_MAX, "b"},
        {"heap-allocated", ATAB_KIND_HEAP, ATAB_UNITS_BYTES, -ATAB_REPORT_AMOUNT_MAX, "h"}};
    atab_report_options o = {NULL, x, 3};
    static sink k;
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree_ex(t, &o, sink_write, &k), ATAB_EINVAL);
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    x[0].amount = ATAB_REPORT_AMOUNT_MAX;
    x[2].amount = INT64_MIN;
    assert_int_equal(atab_report_json_ex(t, "p", &o, sink_write, &k), ATAB_EINVAL);
    x[2].amount = -ATAB_REPORT_AMOUNT_MAX;
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree_ex(t, &o, sink_write, &k), ATAB_OK);
    assert_non_null(strstr(k.buf, "heap-unclassified"));
    assert_null(strstr(k.buf, "-9,223,372"));   /* no wrapped sum */
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_json_ex(t, "p", &o, sink_write, &k), ATAB_OK);
    atab_table_free(t);
}

/* about:memory loads an explicit/ report only when its kind is HEAP or
** NONHEAP ("bad explicit kind") and its units BYTES: an extra entry that
** breaks either would make atab_report_json_ex write JSON about:memory
** refuses, so both are ATAB_EINVAL, as are kinds and units that are none
** of ATAB_KIND_* and ATAB_UNITS_*. */
static void extra_entries_about_memory_would_refuse_are_einval(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    static sink k;
    int entries = 0;
    atab_report_entry x = {"explicit/host/cache", ATAB_KIND_OTHER, ATAB_UNITS_BYTES, 64, "d"};
    atab_report_options o = {NULL, &x, 1};
    assert_int_equal(atab_report_json_ex(t, "p", &o, sink_write, &k), ATAB_EINVAL);
    assert_int_equal(k.calls, 0);
    assert_int_equal(atab_report_ex(t, &o, count_entries, &entries), ATAB_EINVAL);
    assert_int_equal(atab_report_tree_ex(t, &o, sink_write, &k), ATAB_EINVAL);
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    x.kind = 7;
    assert_int_equal(atab_report_ex(t, &o, count_entries, &entries), ATAB_EINVAL);
    x.path = "host-things";   /* outside explicit/: any of the three kinds */
    assert_int_equal(atab_report_ex(t, &o, count_entries, &entries), ATAB_EINVAL);
    x.units = 9;
    x.kind = ATAB_KIND_OTHER;
    assert_int_equal(atab_report_ex(t, &o, count_entries, &entries), ATAB_EINVAL);
    assert_int_equal(entries, 0);
    x.units = ATAB_UNITS_COUNT;   /* good again */
    assert_int_equal(atab_report_ex(t, &o, count_entries, &entries), ATAB_OK);
    x.path = "explicit/host/cache";
    x.units = ATAB_UNITS_BYTES;
    for (int kind = ATAB_KIND_NONHEAP; kind <= ATAB_KIND_HEAP; kind++) {
        x.kind = kind;
        memset(&k, 0, sizeof k);
        assert_int_equal(atab_report_json_ex(t, "p", &o, sink_write, &k), ATAB_OK);
    }
    atab_table_free(t);
}

/* An extra entry at a path that has entries below it ("explicit/atoms",
** over the table's explicit/atoms/table) is a leaf and an inner node at
** once: about:memory refuses the dump ("_amount already set for non-leaf
** node"), and the tree dropped its bytes (an inner node is the sum of its
** kids), so with heap-allocated the root no longer was heap-allocated.
** Such options are ATAB_EINVAL, as are two extra entries that nest. */
static void an_extra_entry_above_other_entries_is_einval(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    static sink k;
    int entries = 0;
    atab_report_entry x[] = {
        {"explicit/atoms", ATAB_KIND_HEAP, ATAB_UNITS_BYTES, 1000000, "d"},
        {"heap-allocated", ATAB_KIND_OTHER, ATAB_UNITS_BYTES, 2000000, "d"},
    };
    atab_report_options o = {NULL, x, 2};
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree_ex(t, &o, sink_write, &k), ATAB_EINVAL);
    assert_int_equal(k.calls, 0);
    assert_int_equal(atab_report_json_ex(t, "p", &o, sink_write, &k), ATAB_EINVAL);
    assert_int_equal(atab_report_ex(t, &o, count_entries, &entries), ATAB_EINVAL);
    o.prefix = "dom";   /* the table's paths under the prefix */
    x[0].path = "explicit/dom/atoms/dynamic";
    assert_int_equal(atab_report_ex(t, &o, count_entries, &entries), ATAB_EINVAL);
    x[0].path = "explicit/atoms";   /* no longer over the table's */
    assert_int_equal(atab_report_ex(t, &o, count_entries, &entries), ATAB_OK);
    x[1] = (atab_report_entry){"explicit/atoms/x", ATAB_KIND_HEAP, ATAB_UNITS_BYTES, 1, "d"};
    assert_int_equal(atab_report_ex(t, &o, count_entries, &entries), ATAB_EINVAL);
    x[1].path = "explicit/atomsx";   /* a sibling, not below */
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree_ex(t, &o, sink_write, &k), ATAB_OK);
    assert_non_null(strstr(k.buf, "1,000,000 B"));
    atab_table_free(t);
}

/* The rule that no path lies above or below another holds outside
** explicit/ too (about:memory draws every path as a tree), whatever the
** entries' order: "explicit" alone sits over the table's explicit/ tree. */
static void extra_entries_nested_anywhere_are_einval_in_either_order(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    int entries = 0;
    atab_report_entry x[2] = {
        {"explicit", ATAB_KIND_OTHER, ATAB_UNITS_COUNT, 1, "d"},
        {"resident", ATAB_KIND_OTHER, ATAB_UNITS_BYTES, 4096, "d"},
    };
    atab_report_options o = {NULL, x, 2};
    assert_int_equal(atab_report_ex(t, &o, count_entries, &entries), ATAB_EINVAL);
    x[0].path = "atoms-dynamic/host";   /* below the table's count */
    assert_int_equal(atab_report_ex(t, &o, count_entries, &entries), ATAB_EINVAL);
    x[0].path = "host";
    x[1].path = "host/cache";
    assert_int_equal(atab_report_ex(t, &o, count_entries, &entries), ATAB_EINVAL);
    x[0].path = "host/cache";
    x[1].path = "host";
    assert_int_equal(atab_report_ex(t, &o, count_entries, &entries), ATAB_EINVAL);
    x[1].path = "host-other";   /* a sibling */
    assert_int_equal(atab_report_ex(t, &o, count_entries, &entries), ATAB_OK);
    atab_table_free(t);
}

/* atab_report_tree_ex refuses with ATAB_EINVAL only options that break
** the rules of atab_report_options: a prefix of 64 one-letter names (127
** bytes, within ATAB_REPORT_PREFIX_MAX) obeys them, and so do eight extra
** entries of six names each. Both must draw, as atab_report_ex takes them. */
static void the_tree_draws_every_prefix_and_entries_the_options_allow(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    static sink k;
    got g;
    char prefix[ATAB_REPORT_PREFIX_MAX + 1];
    size_t n = 0;
    for (int i = 0; i < 64; i++) {
        if (i)
            prefix[n++] = '/';
        prefix[n++] = (char)('a' + i % 26);
    }
    prefix[n] = '\0';
    assert_true(n <= ATAB_REPORT_PREFIX_MAX);
    atab_intern_cstr(t, "a dynamic atom, to have every entry");
    atab_report_options o = {prefix, NULL, 0};
    report_ex_into(t, &o, &g);   /* the options are good */
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree_ex(t, &o, sink_write, &k), ATAB_OK);
    assert_non_null(strstr(k.buf, "/x/y/z/a/b/c/d/e/f/g/h/i/j/k/l/atoms"));
    assert_non_null(strstr(k.buf, "\nOther Measurements\n"));

    static char paths[ATAB_REPORT_EXTRA_MAX][64];
    atab_report_entry x[ATAB_REPORT_EXTRA_MAX];
    for (int i = 0; i < ATAB_REPORT_EXTRA_MAX; i++) {
        snprintf(paths[i], sizeof paths[i], "explicit/host%d/a/b/c/d/e", i);
        x[i] = (atab_report_entry){paths[i], ATAB_KIND_HEAP, ATAB_UNITS_BYTES, 100 + i, "d"};
    }
    atab_report_options ox = {NULL, x, ATAB_REPORT_EXTRA_MAX};
    int entries = 0;
    assert_int_equal(atab_report_ex(t, &ox, count_entries, &entries), ATAB_OK);
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree_ex(t, &ox, sink_write, &k), ATAB_OK);
    assert_non_null(strstr(k.buf, "host7/a/b/c/d/e\n"));
    atab_table_free(t);
}

/* ---- stopping, errors, stdio ---- */

static void a_failing_callback_or_writer_stops_the_report(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    got g;
    sink k;
    memset(&g, 0, sizeof g);
    g.stop_at = 2;
    assert_int_equal(atab_report(t, collect_cb, &g), 7);
    assert_int_equal(g.n, 2);

    memset(&k, 0, sizeof k);
    k.fail_with = 5;
    assert_int_equal(atab_report_tree(t, sink_write, &k), 5);
    assert_int_equal(k.calls, 1);
    memset(&k, 0, sizeof k);
    k.fail_with = -9;
    assert_int_equal(atab_report_json(t, "p", sink_write, &k), -9);
    assert_int_equal(k.calls, 1);
    atab_table_free(t);
}

static void null_arguments_are_einval(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    got g;
    assert_int_equal(atab_report(NULL, collect_cb, &g), ATAB_EINVAL);
    assert_int_equal(atab_report(t, NULL, &g), ATAB_EINVAL);
    assert_int_equal(atab_report_tree(NULL, sink_write, NULL), ATAB_EINVAL);
    assert_int_equal(atab_report_tree(t, NULL, NULL), ATAB_EINVAL);
    assert_int_equal(atab_report_json(NULL, "p", sink_write, NULL), ATAB_EINVAL);
    assert_int_equal(atab_report_json(t, "p", NULL, NULL), ATAB_EINVAL);
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_false(atab_report_has_usable_size(NULL));
    atab_table_free(t);
}

static void atab_write_file_writes_the_dump_to_a_file(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    atab_intern_cstr(t, "file");
    static sink k;
    static char back[8192];
    FILE *f = tmpfile();
    assert_non_null(f);
    memset(&k, 0, sizeof k);
    assert_int_equal(atab_report_tree(t, sink_write, &k), ATAB_OK);
    assert_int_equal(atab_report_tree(t, atab_write_file, f), ATAB_OK);
    rewind(f);
    size_t n = fread(back, 1, sizeof back - 1, f);
    back[n] = '\0';
    assert_string_equal(back, k.buf);
    fclose(f);
    f = fopen("/dev/full", "w");   /* a stream that cannot take the bytes */
    if (f) {
        setvbuf(f, NULL, _IONBF, 0);
        assert_int_equal(atab_report_tree(t, atab_write_file, f), 1);
        fclose(f);
    }
    atab_table_free(t);
}

/* ---- reporting under concurrent use ---- */

typedef struct churn {
    atab_table *t;
    int seed;
    int stop;
    int failed;   /* cmocka's asserts belong to the main thread */
} churn;

static void *churn_main(void *arg)
{
    churn *c = arg;
    char buf[32];
    unsigned x = (unsigned)c->seed;
    while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
        x = x * 1103515245u + 12345u;
        snprintf(buf, sizeof buf, "churn-%u", (x >> 8) % 3000);
        const atab_atom *a = atab_intern_cstr(c->t, buf);
        if (!a || atab_release(c->t, a) != ATAB_OK)
            c->failed = 1;
    }
    return NULL;
}

static void reports_are_consistent_while_threads_intern_and_release(void **state)
{
    (void)state;
    atab_options o;
    memset(&o, 0, sizeof o);
    o.sweep_threshold = 500;   /* sweeps run under the reports */
    atab_table *t = atab_table_new(&o);
    churn c[2] = {{t, 1, 0, 0}, {t, 2, 0, 0}};
    pthread_t th[2];
    static sink k;
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, churn_main, &c[i]), 0);
    for (int round = 0; round < 300; round++) {
        got g;
        report_into(t, &g);
        assert_true(amount_of(&g, "atoms-dynamic-unused") <= amount_of(&g, "atoms-dynamic"));
        assert_true(amount_of(&g, "explicit/atoms/dynamic/atom-objects") >=
                    amount_of(&g, "atoms-dynamic") * (int64_t)sizeof(atab_atom));
        memset(&k, 0, sizeof k);
        assert_int_equal(atab_report_tree(t, sink_write, &k), ATAB_OK);
    }
    for (int i = 0; i < 2; i++) {
        __atomic_store_n(&c[i].stop, 1, __ATOMIC_RELAXED);
        pthread_join(th[i], NULL);
        assert_false(c[i].failed);
    }
    got g;
    report_into(t, &g);
    assert_int_equal(amount_of(&g, "atoms-dynamic"), atab_count(t));
    atab_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(heap_entries_add_up_to_what_the_allocator_handed_out),
        cmocka_unit_test(with_exact_usable_sizes_slop_is_the_blocks_rounding_and_bytes_match_stats),
        cmocka_unit_test(heap_entries_match_jemalloc_stats_allocated),
        cmocka_unit_test(default_slop_is_malloc_usable_size_minus_the_request),
        cmocka_unit_test(explicit_total_matches_glibc_mallinfo2_to_the_byte),
        cmocka_unit_test(heap_overhead_is_reported_only_on_glibc_malloc),
        cmocka_unit_test(only_the_blocks_rounding_is_slop_when_the_allocator_cannot_tell),
        cmocka_unit_test(a_queue_sweeps_dead_atoms_are_reused_reported_and_given_back),
        cmocka_unit_test(atoms_a_sweep_left_waiting_are_reported_then_kept_and_given_back),
        cmocka_unit_test(a_failed_allocation_gives_back_waiting_atoms_only_once_served),
        cmocka_unit_test(blocks_no_new_atom_took_are_given_back_at_the_next_sweep),
        cmocka_unit_test(counts_report_dynamic_unused_static_and_handles),
        cmocka_unit_test(json_parses_and_has_every_key),
        cmocka_unit_test(tree_shows_every_path_largest_first),
        cmocka_unit_test(the_tree_follows_about_memorys_rules_for_the_same_entries),
        cmocka_unit_test(a_prefix_keeps_two_tables_apart),
        cmocka_unit_test(equal_extra_paths_outside_explicit_are_summed_in_the_tree),
        cmocka_unit_test(equal_paths_of_other_units_are_einval),
        cmocka_unit_test(the_tree_shows_a_host_path_s_bad_bytes_as_replacement_characters),
        cmocka_unit_test(bad_extra_entries_are_einval),
        cmocka_unit_test(extra_amounts_past_the_bound_are_einval_and_at_it_add_up),
        cmocka_unit_test(the_tree_draws_every_prefix_and_entries_the_options_allow),
        cmocka_unit_test(extra_entries_about_memory_would_refuse_are_einval),
        cmocka_unit_test(an_extra_entry_above_other_entries_is_einval),
        cmocka_unit_test(extra_entries_nested_anywhere_are_einval_in_either_order),
        cmocka_unit_test(a_failing_callback_or_writer_stops_the_report),
        cmocka_unit_test(null_arguments_are_einval),
        cmocka_unit_test(atab_write_file_writes_the_dump_to_a_file),
        cmocka_unit_test(reports_are_consistent_while_threads_intern_and_release),
        cmocka_unit_test(the_report_allocates_nothing_right_after_releases_through_the_caches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
