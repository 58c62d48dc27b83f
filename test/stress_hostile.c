/* SPDX-License-Identifier: MIT */
/*
** stress_hostile.c - a long stress as a hostile host runs the library:
** 32+ threads on any number of cores, every kind at once, on tables whose
** allocators fail at random, with membarrier made unavailable (readers
** take the full-fence path), checked all along and at quiescent points.
**
** Threads (STRESS_THREADS, at least 32; the rest are shared workers):
**   shared    intern (UTF-8, UTF-16), lookup, ref, release, external
**             handles on the shared tables' common keys, holding some;
**   churn     keys seen once, released at once: sweeps under everyone;
**   spawner   short-lived threads that take references and handles and
**             exit holding them, passing them on through the hand-off queue;
**   receiver  releases what the hand-off queue brings, from other threads;
**   tables    tables created, used by short-lived helpers, freed with
**             external handles still out (released later by receivers);
**   gc        atab_gc on the shared tables;
**   report    atab_report, its tree and JSON, stats and counts, at any time;
**   walker    atab_foreach on the shared tables, its callback taking and
**             releasing references and releasing new atoms (its thread's
**             queue sweeps run under the walk's references);
**   limits    tables with a memory limit: one thread's large interns are
**             refused again and again while another's small ones must fit.
** Checks: an atom has its string's bytes; a string keeps its atom while
** anyone holds it (pinned keys: every thread gets the pinned atom; a thread
** interning a string it holds gets the held atom); misuse stays 0; failed
** calls fail only with ATAB_ENOMEM (ATAB_ELIMIT only for a request past a
** memory limit). At each quiescent point (every STRESS_QUIESCE_MS, all
** threads stopped): for every shared table, every atom held has exactly
** the count its holders hold, atoms - unused is the number of distinct
** atoms held, every unused atom is on a queue or counted for a sweep, the
** handle count is exact, and the table's bytes are its allocator's. At the end every table is freed and
** every allocator has every block back.
**
** STRESS_TIME seconds (default 10). `make stress-hostile` runs it; under
** ASan and TSan through the meson builds (.ci/run, STRESS_SAN).
*/
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "atab_int.h"   /* atab__count, atab__membarrier_state */
#include "test_u16.h"

#define N_SHARED 4        /* tables alive for the whole run */
#define KEYS 1024         /* common keys per shared table */
#define PINNED 64         /* of those, held by main for the whole run */
#define HELD 48           /* references a shared worker holds at most */
#define QUEUE 8192        /* the hand-off queue */
#define KEYLEN 48

static void fail(const char *what, int line)
{
    fprintf(stderr, "stress_hostile: check failed: %s (line %d)\n", what, line);
    abort();
}
#define CHECK(c) ((c) ? (void)0 : fail(#c, __LINE__))

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

static _Thread_local uint64_t tl_rng;

static uint64_t tl_rand(void)
{
    if (!tl_rng)
        tl_rng = (uint64_t)(uintptr_t)&tl_rng * 0x9e3779b97f4a7c15u | 1;
    return rnd(&tl_rng);
}

/* ---- a counting allocator that fails at random (thread-safe) ---- */

typedef struct hal {
    long live, allocs, fails;   /* atomic */
    size_t bytes;               /* atomic: requested bytes outstanding */
    unsigned fail_one_in;       /* 0: never fails */
    struct hal *next;           /* every allocator made, checked at the end */
} hal;

static void *hal_alloc(void *ud, size_t size)
{
    hal *h = ud;
    if (h->fail_one_in && tl_rand() % h->fail_one_in == 0) {
        __atomic_add_fetch(&h->fails, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    size_t *p = malloc(size + 16);
    if (!p)
        return NULL;
    p[0] = size;
    __atomic_add_fetch(&h->live, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&h->allocs, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&h->bytes, size, __ATOMIC_RELAXED);
    return p + 2;
}

static void hal_free(void *ud, void *p, size_t size)
{
    hal *h = ud;
    if (!p)
        return;
    size_t *b = (size_t *)p - 2;
    CHECK(b[0] == size);   /* every free names its block's size */
    __atomic_sub_fetch(&h->live, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&h->bytes, size, __ATOMIC_RELAXED);
    free(b);
}

static pthread_mutex_t hal_lock = PTHREAD_MUTEX_INITIALIZER;
static hal *hal_list;

static hal *hal_new(unsigned fail_one_in)
{
    hal *h = calloc(1, sizeof *h);
    CHECK(h != NULL);
    h->fail_one_in = fail_one_in;
    pthread_mutex_lock(&hal_lock);
    h->next = hal_list;
    hal_list = h;
    pthread_mutex_unlock(&hal_lock);
    return h;
}

/* A table on its own allocator; retried while the allocator fails. */
static atab_table *table_new(hal *h, atab_allocator *hooks, size_t threshold, int statics)
{
    atab_options o;
    memset(&o, 0, sizeof o);
    hooks->alloc = hal_alloc, hooks->free = hal_free, hooks->usable_size = NULL;
    hooks->ud = h;
    o.allocator = hooks;
    o.sweep_threshold = threshold;
    o.flags = statics ? 0 : ATAB_NO_DEFAULT_STATICS;
    for (;;) {
        atab_table *t = atab_table_new(&o);
        if (t)
            return t;
        CHECK(atab_last_error() == ATAB_ENOMEM);
    }
}

/* ---- shared state ---- */

typedef struct shared_table {
    atab_table *t;
    hal *h;
    atab_allocator hooks;
    const atab_atom *pinned[PINNED];   /* held by main for the whole run */
} shared_table;

static shared_table tabs[N_SHARED];
static int stop;   /* atomic */
static double run_seconds;
/* Workers hold it shared around each batch; main takes it to stop them
** all at a quiescent point (writers first, so main is never starved). */
static pthread_rwlock_t quiesce;

enum {
    C_INTERN, C_INTERN16, C_LOOKUP, C_REF, C_RELEASE, C_ACQUIRE, C_HRELEASE,
    C_ENOMEM, C_CHURN, C_GC, C_SWEPT, C_REPORT, C_STATS, C_THREADS, C_HANDOFF,
    C_TABLES, C_QUIESCE, C_WALK, C_LIMIT_OK, C_LIMIT_REFUSED, N_COUNTS
};
static const char *const count_names[N_COUNTS] = {
    "interns", "interns (UTF-16)", "lookups", "refs", "releases", "handles taken",
    "handles released", "ENOMEM (refused, table unchanged)", "churn interns", "gc calls",
    "atoms swept by gc", "reports", "stats", "short-lived threads", "hand-offs",
    "tables created and freed", "quiescent checks", "walks", "small interns under a limit",
    "large interns refused by a limit",
};
static long counts[N_COUNTS];   /* atomic */

static void count(int what, long n)
{
    __atomic_add_fetch(&counts[what], n, __ATOMIC_RELAXED);
}

static long counted(int what)
{
    return __atomic_load_n(&counts[what], __ATOMIC_RELAXED);
}

static size_t key_of(int k, char *buf)
{
    return (size_t)snprintf(buf, KEYLEN, k % 4 ? "hostile-%d" : "h\xc3\xb4stile-%d", k);
}

/* An atom got for a string: its bytes. */
static void check_bytes(const atab_atom *a, const char *s, size_t n)
{
    CHECK(atab_len(a) == n && memcmp(atab_chars(a), s, n) == 0 && atab_chars(a)[n] == '\0');
}

/* A failed intern: only for want of memory, on a table that may fail. */
static void check_refused(const atab_table *t)
{
    CHECK(atab_last_error() == ATAB_ENOMEM);
    for (int i = 0; i < N_SHARED; i++)
        if (tabs[i].t == t)
            CHECK(tabs[i].h->fail_one_in != 0);
    count(C_ENOMEM, 1);
}

/* ---- held references ---- */

typedef struct ref {
    atab_table *t;   /* NULL: an empty slot */
    const atab_atom *a;
    int tab, key;    /* shared table and key, or -1 */
    int handle;      /* an external handle, not a plain reference */
} ref;

static void ref_drop(const ref *r)
{
    if (r->handle) {
        CHECK(atab_external_release(r->t, r->a) == ATAB_OK);
        count(C_HRELEASE, 1);
    } else {
        CHECK(atab_release(r->t, r->a) == ATAB_OK);
        count(C_RELEASE, 1);
    }
}

/* The hand-off queue: references and handles given up by one thread (one
** that exits, or a table's owner) and dropped by another. */
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static ref q[QUEUE];
static size_t q_n;

static void hand_off(const ref *r)
{
    pthread_mutex_lock(&q_lock);
    int full = q_n == QUEUE;
    if (!full)
        q[q_n++] = *r;
    pthread_mutex_unlock(&q_lock);
    if (full)
        ref_drop(r);   /* the receivers are behind: drop it here */
    else
        count(C_HANDOFF, 1);
}

/* Takes one from anywhere in the queue (so handles of freed tables are
** released in any order); 0 when it is empty. */
static int take_off(ref *r)
{
    pthread_mutex_lock(&q_lock);
    int got = q_n > 0;
    if (got) {
        size_t i = tl_rand() % q_n;
        *r = q[i];
        q[i] = q[--q_n];
    }
    pthread_mutex_unlock(&q_lock);
    return got;
}

/* ---- shared workers ---- */

typedef struct worker {
    ref held[HELD];
    pthread_t th;
} worker;

static worker *workers;
static int n_workers;

static int stopping(void)
{
    return __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

/* Keeps a reference in a random slot, dropping the one there. */
static void keep(worker *w, const ref *r)
{
    ref *slot = &w->held[tl_rand() % HELD];
    if (slot->t)
        ref_drop(slot);
    *slot = *r;
}

/* An atom got for key k of table i, with a reference: its bytes, the
** pinned atom for a pinned key, and the atom this thread holds for k. */
static void got(worker *w, int i, int k, const atab_atom *a, const char *s, size_t n)
{
    check_bytes(a, s, n);
    if (k < PINNED)
        CHECK(a == tabs[i].pinned[k]);
    for (int j = 0; w && j < HELD; j++)
        if (w->held[j].t && w->held[j].tab == i && w->held[j].key == k)
            CHECK(w->held[j].a == a);
}

/* Interns (or looks up) key k on shared table i; the atom with a
** reference, or NULL (refused, or absent for a lookup). */
static const atab_atom *get_key(worker *w, int i, int k, int how)
{
    char s[KEYLEN];
    uint16_t u[KEYLEN];
    size_t n = key_of(k, s);
    const atab_atom *a;
    if (how == 1) {
        a = atab_intern_utf16(tabs[i].t, u, u8_to_u16(s, n, u));
        count(C_INTERN16, 1);
    } else if (how == 2) {
        a = atab_lookup(tabs[i].t, s, n);
        count(C_LOOKUP, 1);
        if (!a) {
            CHECK(atab_last_error() == ATAB_OK && k >= PINNED);
            return NULL;
        }
    } else {
        a = atab_intern(tabs[i].t, s, n);
        count(C_INTERN, 1);
    }
    if (!a) {
        check_refused(tabs[i].t);
        return NULL;
    }
    got(w, i, k, a, s, n);
    return a;
}

static void worker_op(worker *w)
{
    int i = (int)(tl_rand() % N_SHARED), k = (int)(tl_rand() % KEYS);
    unsigned op = (unsigned)(tl_rand() % 16);
    ref *h = &w->held[tl_rand() % HELD], r = {NULL, NULL, -1, -1, 0};
    const atab_atom *a;
    if (op < 7) {   /* intern, UTF-16, lookup */
        if ((a = get_key(w, i, k, op % 3)) != NULL) {
            r.t = tabs[i].t, r.a = a, r.tab = i, r.key = k;
            keep(w, &r);
        }
    } else if (op < 9) {   /* another reference on a held atom */
        if (h->t && !h->handle) {
            CHECK(atab_ref(h->a) == h->a);
            count(C_REF, 1);
            r = *h;
            keep(w, &r);
        }
    } else if (op < 13) {
        if (h->t) {
            ref_drop(h);
            h->t = NULL;
        }
    } else if (op < 15) {   /* an external handle on a held atom */
        if (h->t) {
            CHECK(atab_external_acquire(h->t, h->a) == h->a);
            count(C_ACQUIRE, 1);
            r = *h;
            r.handle = 1;
            keep(w, &r);
        }
    } else if (h->t) {   /* given up to a receiver */
        hand_off(h);
        h->t = NULL;
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    while (!stopping()) {
        pthread_rwlock_rdlock(&quiesce);
        for (int n = 0; n < 64; n++)
            worker_op(w);
        pthread_rwlock_unlock(&quiesce);
    }
    pthread_rwlock_rdlock(&quiesce);
    for (int j = 0; j < HELD; j++)
        if (w->held[j].t)
            ref_drop(&w->held[j]), w->held[j].t = NULL;
    pthread_rwlock_unlock(&quiesce);
    return NULL;
}

/* ---- churn, gc, report ---- */

static void *churn_main(void *arg)
{
    char s[KEYLEN];
    unsigned long id = (unsigned long)(uintptr_t)arg, n = 0;
    while (!stopping()) {
        pthread_rwlock_rdlock(&quiesce);
        for (int j = 0; j < 64; j++) {
            atab_table *t = tabs[tl_rand() % N_SHARED].t;
            size_t len = (size_t)snprintf(s, sizeof s, "churn-%lu-%lu", id, n++);
            const atab_atom *a = atab_intern(t, s, len);
            count(C_CHURN, 1);
            if (!a) {
                check_refused(t);
                continue;
            }
            check_bytes(a, s, len);
            if (j % 4 == 0) {   /* a second reference, and a lookup's */
                CHECK(atab_ref(a) == a && atab_release(t, a) == ATAB_OK);
                const atab_atom *b = atab_lookup(t, s, len);
                CHECK(b == a);   /* held: found, the same atom */
                CHECK(atab_release(t, b) == ATAB_OK);
                count(C_REF, 1), count(C_LOOKUP, 1), count(C_RELEASE, 2);
            }
            CHECK(atab_release(t, a) == ATAB_OK);
            count(C_RELEASE, 1);
        }
        pthread_rwlock_unlock(&quiesce);
    }
    return NULL;
}

static void *gc_main(void *arg)
{
    (void)arg;
    while (!stopping()) {
        pthread_rwlock_rdlock(&quiesce);
        count(C_SWEPT, (long)atab_gc(tabs[tl_rand() % N_SHARED].t));
        count(C_GC, 1);
        pthread_rwlock_unlock(&quiesce);
        usleep(500);
    }
    return NULL;
}

static int count_entry(void *ud, const char *path, int kind, int units, int64_t amount,
                       const char *desc)
{
    (void)kind; (void)units; (void)desc;
    if (strcmp(path, "atoms-dynamic") == 0)
        *(int64_t *)ud = amount;
    return 0;
}

static int null_writer(void *ud, const char *buf, size_t len)
{
    (void)buf;
    *(size_t *)ud += len;
    return 0;
}

static void *report_main(void *arg)
{
    (void)arg;
    while (!stopping()) {
        pthread_rwlock_rdlock(&quiesce);
        atab_table *t = tabs[tl_rand() % N_SHARED].t;
        atab_stats st;
        int64_t atoms = -1;
        size_t bytes = 0;
        CHECK(atab_report(t, count_entry, &atoms) == ATAB_OK && atoms >= 0);
        CHECK(atab_report_tree(t, null_writer, &bytes) == ATAB_OK && bytes > 0);
        CHECK(atab_report_json(t, "stress\"hostile", null_writer, &bytes) == ATAB_OK);
        CHECK(atab_get_stats(t, &st) == ATAB_OK);
        CHECK(st.misuse == 0 && st.unused <= st.atoms && st.atoms >= PINNED);
        CHECK(atab_count(t) >= PINNED);
        count(C_REPORT, 3), count(C_STATS, 1);
        pthread_rwlock_unlock(&quiesce);
        usleep(1000);
    }
    return NULL;
}

/* ---- walks ---- */

typedef struct walk_ctx {
    atab_table *t;
    unsigned long id, n;
} walk_ctx;

/* Each atom readable; every 4th gets a reference of the walker's own,
** released inside the walk; every 8th call releases a new atom, so the
** walker's queue fills and is swept while the walk holds a shard's atoms. */
static int walk_fn(void *ud, const atab_atom *a, uint32_t count_now)
{
    walk_ctx *w = ud;
    char s[KEYLEN];
    (void)count_now;
    CHECK(!atab_is_static(a) && atab_chars(a)[atab_len(a)] == '\0');
    if (++w->n % 4 == 0)
        CHECK(atab_ref(a) == a && atab_release(w->t, a) == ATAB_OK);
    if (w->n % 8 == 0) {
        size_t len = (size_t)snprintf(s, sizeof s, "walk-%lu-%lu", w->id, w->n);
        const atab_atom *b = atab_intern(w->t, s, len);
        if (!b) {
            check_refused(w->t);
            return 0;
        }
        check_bytes(b, s, len);
        CHECK(atab_release(w->t, b) == ATAB_OK);
    }
    return 0;
}

static void *walker_main(void *arg)
{
    walk_ctx w = {NULL, (unsigned long)(uintptr_t)arg, 0};
    while (!stopping()) {
        pthread_rwlock_rdlock(&quiesce);
        int i = (int)(tl_rand() % N_SHARED), rc;
        w.t = tabs[i].t;
        if ((rc = atab_foreach(w.t, walk_fn, &w)) != ATAB_OK)   /* its block refused */
            CHECK(rc == ATAB_ENOMEM && tabs[i].h->fail_one_in != 0);
        count(C_WALK, 1);
        pthread_rwlock_unlock(&quiesce);
        usleep(2000);
    }
    return NULL;
}

/* ---- memory limits under refused requests ---- */

#define LIMIT_ROOM 4096   /* what a limited table has left once settled */

typedef struct limit_ctx {
    atab_table *t;
    int warm;            /* 1: the large interner's record is made; 2: the room too */
    int done;            /* the small interns are over (atomic) */
    unsigned long id;
} limit_ctx;

/* A large key, again and again: each time refused, for the limit. */
static void *limit_large(void *arg)
{
    limit_ctx *c = arg;
    char *big = malloc(LIMIT_ROOM + 2000);
    CHECK(big != NULL);
    memset(big, 'L', LIMIT_ROOM + 2000);
    CHECK(atab_release(c->t, atab_intern_cstr(c->t, "large-warm")) == ATAB_OK);
    __atomic_store_n(&c->warm, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&c->warm, __ATOMIC_ACQUIRE) != 2)   /* the room made */
        usleep(100);
    while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
        CHECK(atab_intern(c->t, big, LIMIT_ROOM + 2000) == NULL);
        CHECK(atab_last_error() == ATAB_ELIMIT);
        count(C_LIMIT_REFUSED, 1);
    }
    free(big);
    return NULL;
}

/* New 47-byte keys, each released at once (the table sweeps at every
** unused atom): they fit in the room, so none may be refused. */
static void limit_small(limit_ctx *c)
{
    char s[KEYLEN];
    for (int j = 0; j < 2000 && !stopping(); j++) {
        size_t len = (size_t)snprintf(s, sizeof s, "%-36lu-small-%04d", c->id, j);
        const atab_atom *a = atab_intern(c->t, s, len);
        CHECK(a != NULL);   /* never refused for another thread's request */
        check_bytes(a, s, len);
        CHECK(atab_release(c->t, a) == ATAB_OK);
        count(C_LIMIT_OK, 1);
    }
}

/* A table LIMIT_ROOM under its limit once this thread's and the large
** interner's records are made; the two run; then everything goes. */
static void limit_round(unsigned long id)
{
    atab_allocator hooks = {hal_alloc, hal_free, NULL, hal_new(0)};
    atab_options o = {.sweep_threshold = 1, .memory_limit = 96 * 1024,
                      .flags = ATAB_NO_DEFAULT_STATICS, .allocator = &hooks};
    limit_ctx c = {atab_table_new(&o), 0, 0, id};
    CHECK(c.t != NULL);
    CHECK(atab_release(c.t, atab_intern_cstr(c.t, "small-warm")) == ATAB_OK);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, limit_large, &c) == 0);
    while (!__atomic_load_n(&c.warm, __ATOMIC_ACQUIRE))
        usleep(100);
    atab_gc(c.t);
    atab_stats st;
    CHECK(atab_get_stats(c.t, &st) == ATAB_OK);
    size_t len = o.memory_limit - st.bytes - LIMIT_ROOM - sizeof(atab_atom) - 1;
    char *ballast = malloc(len);
    const atab_atom *b = ballast ? atab_intern(c.t, memset(ballast, 'B', len), len) : NULL;
    CHECK(b != NULL);
    __atomic_store_n(&c.warm, 2, __ATOMIC_RELEASE);
    limit_small(&c);
    __atomic_store_n(&c.done, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    CHECK(atab_release(c.t, b) == ATAB_OK);
    atab_table_free(c.t);
    free(ballast);
}

static void *limits_main(void *arg)
{
    unsigned long id = (unsigned long)(uintptr_t)arg * 1000000;
    while (!stopping()) {
        pthread_rwlock_rdlock(&quiesce);
        limit_round(id++);
        pthread_rwlock_unlock(&quiesce);
    }
    return NULL;
}

/* ---- short-lived threads, and the receivers of what they leave ---- */

/* Takes references and handles on one shared table, drops some, and exits
** holding the rest: they go to the hand-off queue, and its thread's spare
** references come back to the counts as the thread exits. */
static void *short_main(void *arg)
{
    int i = (int)(uintptr_t)arg;
    ref held[24];
    int n = 0;
    for (int j = 0; j < 16; j++) {
        int k = (int)(tl_rand() % KEYS);
        const atab_atom *a = get_key(NULL, i, k, j % 3);
        if (!a)
            continue;
        ref r = {tabs[i].t, a, i, k, 0};
        held[n++] = r;
        if (j % 3 == 0) {   /* another reference, as a handle */
            CHECK(atab_external_acquire(r.t, a) == a);
            count(C_ACQUIRE, 1);
            r.handle = 1;
            held[n++] = r;
        }
    }
    for (int j = 0; j < n; j++) {
        if (j % 4 == 0)
            ref_drop(&held[j]);   /* dropped by the thread that took it */
        else
            hand_off(&held[j]);
    }
    return NULL;
}

static void *spawner_main(void *arg)
{
    (void)arg;
    pthread_t th[4];
    while (!stopping()) {
        pthread_rwlock_rdlock(&quiesce);   /* held for its threads' lives */
        int n = 0;
        for (; n < 4; n++)
            if (pthread_create(&th[n], NULL, short_main,
                               (void *)(uintptr_t)(tl_rand() % N_SHARED)) != 0)
                break;
        for (int j = 0; j < n; j++)
            pthread_join(th[j], NULL);
        count(C_THREADS, n);
        pthread_rwlock_unlock(&quiesce);
    }
    return NULL;
}

/* Drops what the queue brings; for a shared table's plain reference, first
** checks that interning its key gives the atom held. */
static void receive(const ref *r)
{
    if (r->tab >= 0 && !r->handle && tl_rand() % 4 == 0) {
        char s[KEYLEN];
        size_t n = key_of(r->key, s);
        const atab_atom *a = atab_intern(r->t, s, n);   /* held: a hit, never refused */
        count(C_INTERN, 1);
        CHECK(a == r->a);
        CHECK(atab_release(r->t, a) == ATAB_OK);
        count(C_RELEASE, 1);
    }
    ref_drop(r);
}

static void *receiver_main(void *arg)
{
    (void)arg;
    ref r;
    for (;;) {
        int got = 0, done = stopping();
        pthread_rwlock_rdlock(&quiesce);
        for (; got < 64 && take_off(&r); got++)
            receive(&r);
        pthread_rwlock_unlock(&quiesce);
        if (!got && done)
            return NULL;   /* stopped, and the queue is empty */
        if (!got)
            usleep(200);
    }
}

/* ---- tables created and freed ---- */

typedef struct helper {
    atab_table *t;
    ref held[32];
    int n;
} helper;

/* A short-lived thread on a private table: takes references, exits
** holding them (its owner drops them after it has gone). */
static void *helper_main(void *arg)
{
    helper *h = arg;
    char s[KEYLEN];
    for (int j = 0; j < 32; j++) {
        int k = (int)(tl_rand() % 64);
        size_t n = (size_t)snprintf(s, sizeof s, "table-key-%d", k);
        const atab_atom *a = atab_intern(h->t, s, n);
        count(C_INTERN, 1);
        if (!a) {
            CHECK(atab_last_error() == ATAB_ENOMEM);
            count(C_ENOMEM, 1);
            continue;
        }
        check_bytes(a, s, n);
        h->held[h->n++] = (ref){h->t, a, -1, k, 0};
    }
    return NULL;
}

/* Checks a private table once its helpers are gone: the atoms with
** holders are the distinct atoms held, each with its holders' count. */
static void check_private(atab_table *t, hal *al, helper *hs, int nh)
{
    atab_stats st;
    size_t distinct = 0;
    CHECK(atab_get_stats(t, &st) == ATAB_OK && st.misuse == 0);
    for (int x = 0; x < nh; x++)
        for (int j = 0; j < hs[x].n; j++) {
            const atab_atom *a = hs[x].held[j].a;
            long refs = 0, first = 1;
            for (int y = 0; y < nh; y++)
                for (int z = 0; z < hs[y].n; z++) {
                    if (hs[y].held[z].a != a)
                        continue;
                    first &= y > x || (y == x && z >= j);
                    refs++;
                    CHECK(hs[y].held[z].key == hs[x].held[j].key);   /* one atom a string */
                }
            CHECK(atab__count(a) == (uint32_t)refs);
            distinct += first;
        }
    CHECK(st.atoms - st.unused == distinct);
    CHECK(st.bytes == __atomic_load_n(&al->bytes, __ATOMIC_RELAXED));
}

static void table_round(void)
{
    hal *al = hal_new(tl_rand() % 2 ? 64 : 0);
    atab_allocator hooks;
    static const size_t thresholds[] = {1, 8, 64, 0};
    atab_table *t = table_new(al, &hooks, thresholds[tl_rand() % 4], (int)(tl_rand() % 2));
    helper hs[2];
    pthread_t th[2];
    int nh = 0;
    for (; nh < 2; nh++) {
        hs[nh].t = t, hs[nh].n = 0;
        if (pthread_create(&th[nh], NULL, helper_main, &hs[nh]) != 0)
            break;
    }
    for (int x = 0; x < nh; x++)
        pthread_join(th[x], NULL);
    count(C_THREADS, nh);
    check_private(t, al, hs, nh);
    for (int x = 0; x < nh; x++)   /* some as handles, left out past the free */
        for (int j = 0; j < hs[x].n; j++) {
            ref r = hs[x].held[j];
            if (tl_rand() % 8 == 0) {
                CHECK(atab_external_acquire(t, r.a) == r.a);
                count(C_ACQUIRE, 1);
                r.handle = 1;
                hand_off(&r);
            }
            ref_drop(&hs[x].held[j]);
        }
    atab_table_free(t);   /* deferred while a handle is out */
    count(C_TABLES, 1);
}

static void *tables_main(void *arg)
{
    (void)arg;
    while (!stopping()) {
        pthread_rwlock_rdlock(&quiesce);
        table_round();
        pthread_rwlock_unlock(&quiesce);
    }
    return NULL;
}

/* ---- quiescent points ---- */

/* The references held on table i, by atom: every holder's (main's pinned
** ones, the workers', the queue's), in an open-addressing map. */
typedef struct tally {
    const atab_atom **a;
    long *refs;
    size_t cap, distinct;
    long handles;
} tally;

static void tally_add(tally *c, const ref *r)
{
    uint64_t x = (uint64_t)(uintptr_t)r->a * 0x9e3779b97f4a7c15u;
    size_t s = (size_t)(x >> 32) & (c->cap - 1);
    while (c->a[s] && c->a[s] != r->a)
        s = (s + 1) & (c->cap - 1);
    if (!c->a[s])
        c->a[s] = r->a, c->distinct++;
    c->refs[s]++;
    c->handles += r->handle;
}

static void count_plain_zero(void *ud, const atab_atom *a)
{
    if (!atab_is_static(a) && (__atomic_load_n(atab__count_word(a), __ATOMIC_RELAXED) & ~ATAB__REF_SPARED) == 0)
        ++*(size_t *)ud;
}

static void check_table(int i)
{
    tally c = {NULL, NULL, 1, 0, 0};
    size_t most = PINNED + (size_t)n_workers * HELD + QUEUE;
    while (c.cap < 2 * most)
        c.cap *= 2;
    c.a = calloc(c.cap, sizeof *c.a);
    c.refs = calloc(c.cap, sizeof *c.refs);
    CHECK(c.a && c.refs);
    for (int k = 0; k < PINNED; k++)
        tally_add(&c, &(ref){tabs[i].t, tabs[i].pinned[k], i, k, 0});
    for (int w = 0; w < n_workers; w++)
        for (int j = 0; j < HELD; j++)
            if (workers[w].held[j].t && workers[w].held[j].tab == i)
                tally_add(&c, &workers[w].held[j]);
    for (size_t j = 0; j < q_n; j++)
        if (q[j].tab == i)
            tally_add(&c, &q[j]);
    atab_stats st;
    CHECK(atab_get_stats(tabs[i].t, &st) == ATAB_OK);   /* the caches flushed */
    CHECK(st.misuse == 0);
    CHECK(st.atoms - st.unused == c.distinct);
    size_t plain_zeros = 0;   /* unused, on no queue: counted for a sweep */
    size_t counted = __atomic_load_n(&tabs[i].t->unused, __ATOMIC_RELAXED);
    atab__table_visit_shards(tabs[i].t, NULL, count_plain_zero, &plain_zeros);
    if (plain_zeros > counted)
        fprintf(stderr, "stress_hostile: table %d: %zu unused atoms on no queue, %zu counted\n",
                i, plain_zeros, counted);
    CHECK(plain_zeros <= counted);
    for (size_t s = 0; s < c.cap; s++)
        if (c.a[s])
            CHECK(atab__count(c.a[s]) == (uint32_t)c.refs[s]);
    CHECK(atab_external_handles(tabs[i].t) == (size_t)c.handles);
    CHECK(st.bytes == __atomic_load_n(&tabs[i].h->bytes, __ATOMIC_RELAXED));
    free(c.a);
    free(c.refs);
}

static void quiescent_check(void)
{
    pthread_rwlock_wrlock(&quiesce);   /* every thread between batches */
    for (int i = 0; i < N_SHARED; i++)
        check_table(i);
    count(C_QUIESCE, 1);
    pthread_rwlock_unlock(&quiesce);
}

/* ---- the run ---- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long env_long(const char *name, long def)
{
    const char *s = getenv(name);
    return s && *s ? atol(s) : def;
}

static void setup_tables(void)
{
    /* fail 1 in N allocations (0: never), sweep threshold (0: default) */
    static const unsigned fail_one_in[N_SHARED] = {0, 0, 200, 40};
    static const size_t threshold[N_SHARED] = {0, 32, 256, 4};
    char s[KEYLEN];
    for (int i = 0; i < N_SHARED; i++) {
        tabs[i].h = hal_new(fail_one_in[i]);
        tabs[i].t = table_new(tabs[i].h, &tabs[i].hooks, threshold[i], i % 2);
        for (int k = 0; k < PINNED; k++) {
            size_t n = key_of(k, s);
            while ((tabs[i].pinned[k] = atab_intern(tabs[i].t, s, n)) == NULL)
                CHECK(atab_last_error() == ATAB_ENOMEM);
            check_bytes(tabs[i].pinned[k], s, n);
        }
    }
}

/* Everything given back: every table empty once swept, and freed; every
** allocator, the freed tables' included, with no block out. */
static void teardown(void)
{
    ref r;
    while (take_off(&r))
        ref_drop(&r);
    for (int i = 0; i < N_SHARED; i++)
        check_table(i);
    for (int i = 0; i < N_SHARED; i++) {
        for (int k = 0; k < PINNED; k++)
            CHECK(atab_release(tabs[i].t, tabs[i].pinned[k]) == ATAB_OK);
        atab_gc(tabs[i].t);
        CHECK(atab_count(tabs[i].t) == 0 && atab_external_handles(tabs[i].t) == 0);
        atab_table_free(tabs[i].t);
    }
    long tables = 0;
    while (hal_list) {
        hal *h = hal_list;
        CHECK(h->live == 0 && h->bytes == 0);
        hal_list = h->next;
        free(h);
        tables++;
    }
    printf("stress_hostile: %ld allocators, every block freed\n", tables);
}

typedef struct role {
    const char *name;
    void *(*fn)(void *);
    int n;
} role;

int main(void)
{
    run_seconds = (double)env_long("STRESS_TIME", 10);
    long quiesce_ms = env_long("STRESS_QUIESCE_MS", 1000);
    int threads = (int)env_long("STRESS_THREADS", 32);
    role roles[] = {
        {"churn", churn_main, 4}, {"spawner", spawner_main, 2},
        {"receiver", receiver_main, 2}, {"tables", tables_main, 2},
        {"gc", gc_main, 2}, {"report", report_main, 2},
        {"walker", walker_main, 1}, {"limits", limits_main, 1},
    };
    int fixed = 0, n_roles = (int)(sizeof roles / sizeof roles[0]);
    for (int r = 0; r < n_roles; r++)
        fixed += roles[r].n;
    n_workers = threads - fixed < 18 ? 18 : threads - fixed;
    if (!getenv("STRESS_MEMBARRIER"))   /* the full-fence path, as without membarrier */
        atab__membarrier_state = -1;
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&quiesce, &ra);
    setup_tables();
    workers = calloc((size_t)n_workers, sizeof *workers);
    CHECK(workers != NULL);
    pthread_t others[64];
    int n_others = 0;
    for (int w = 0; w < n_workers; w++)
        CHECK(pthread_create(&workers[w].th, NULL, worker_main, &workers[w]) == 0);
    for (int r = 0; r < n_roles; r++)
        for (int j = 0; j < roles[r].n; j++)
            CHECK(pthread_create(&others[n_others++], NULL, roles[r].fn,
                                 (void *)(uintptr_t)j) == 0);
    printf("stress_hostile: %d threads (%d shared workers, %d in other roles, and "
           "short-lived ones), %d tables shared, %.0f s, membarrier %s\n",
           n_workers + fixed, n_workers, fixed, N_SHARED, run_seconds,
           atab__membarrier_state < 0 ? "off (full fences)" : "as the kernel has it");
    fflush(stdout);
    double start = now(), last = start, next = start + quiesce_ms / 1000.0;
    while (now() - start < run_seconds) {
        usleep(20000);
        if (now() >= next) {
            quiescent_check();
            next = now() + quiesce_ms / 1000.0;
        }
        if (now() - last >= 60) {
            last = now();
            printf("stress_hostile: %.0f s: %ld interns, %ld releases, %ld quiescent checks\n",
                   last - start, counted(C_INTERN) + counted(C_INTERN16) + counted(C_CHURN),
                   counted(C_RELEASE), counted(C_QUIESCE));
            fflush(stdout);
        }
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int w = 0; w < n_workers; w++)
        pthread_join(workers[w].th, NULL);
    for (int j = 0; j < n_others; j++)
        pthread_join(others[j], NULL);
    double took = now() - start;
    teardown();
    long total = 0;
    for (int c = 0; c < N_COUNTS; c++) {
        printf("  %-36s %12ld\n", count_names[c], counts[c]);
        if (c < C_GC)
            total += counts[c];
    }
    printf("stress_hostile: %ld table operations in %.1f s, every check held\n", total, took);
    free(workers);
    return 0;
}
