/* SPDX-License-Identifier: MIT */
/*
** test_stress.c - concurrency stress: at least 8 threads doing every
** operation at once (intern UTF-8 and UTF-16, lookup, ref, release, gc,
** the reporter, stats) on shared and thread-private keys, with a small
** sweep threshold so sweeps, growth and compaction happen under them.
** During the run: an atom a thread holds keeps its identity and bytes.
** At the end: every atom still held resolves to the same pointer, and once
** all are released and swept the table is back to zero atoms.
**
** ATAB_STRESS_SECONDS (default 2) and ATAB_STRESS_THREADS (default 8, at
** least 8) set the run; `make stress` runs it long. Under TSan in CI.
** Static lookups (the default set) and external handles (kept across
** other threads' sweeps) run among the others. To add an operation: one
** enum value before N_OPS and one case in do_op().
*/
#include <pthread.h>
#include <time.h>

#include "test_util.h"
#include "atomtab_atoms.h"   /* ATAB_ATOM: the default static set */

enum { SHARED_KEYS = 4096, HELD = 64, KEYLEN = 64, HANDLES = 8 };

enum {
    OP_INTERN, OP_INTERN_U16, OP_LOOKUP, OP_REF, OP_RELEASE, OP_CHURN,
    OP_GC, OP_REPORT, OP_STATS, OP_STATIC, OP_EXTERNAL,
    N_OPS
};

static const char *const op_names[N_OPS] = {
    "intern", "intern_utf16", "lookup", "ref", "release", "churn (private key)",
    "gc", "report", "stats", "static", "external",
};

typedef struct held_ref {
    const atab_atom *a;
    int key;   /* shared key index */
} held_ref;

typedef struct worker {
    atab_table *t;
    int id;
    uint64_t rng;
    int *stop;
    held_ref held[HELD];
    const atab_atom *handle[HANDLES];   /* external handles this thread holds */
    long ops[N_OPS];
    long errors;            /* a wrong atom, wrong bytes or a failed call */
    unsigned churn;         /* private keys made so far */
} worker;

static uint64_t next_rand(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

static size_t shared_key(int k, char *buf)
{
    return (size_t)snprintf(buf, KEYLEN, k % 3 ? "stress-%d" : "str\xc3\xa9ss-%d", k);
}

/* Checks an atom got for key k: its bytes, and the held one's identity. */
static void got(worker *w, int k, const atab_atom *a, const char *buf, size_t n)
{
    if (!a || atab_len(a) != n || memcmp(atab_chars(a), buf, n) != 0) {
        w->errors++;
        return;
    }
    for (int i = 0; i < HELD; i++)
        if (w->held[i].a && w->held[i].key == k && w->held[i].a != a)
            w->errors++;   /* a held atom cannot change identity */
}

/* Keeps the reference in a free slot, or drops it. */
static void keep(worker *w, int k, const atab_atom *a)
{
    int slot = (int)(next_rand(&w->rng) % HELD);
    if (!w->held[slot].a) {
        w->held[slot].a = a;
        w->held[slot].key = k;
    } else if (atab_release(w->t, a) != ATAB_OK) {
        w->errors++;
    }
}

static int count_entry(void *ud, const char *path, int kind, int units,
                       int64_t amount, const char *desc)
{
    (void)kind; (void)units; (void)desc;
    if (strcmp(path, "atoms-dynamic") == 0)
        *(int64_t *)ud = amount;
    return 0;
}

static int null_writer(void *ud, const char *buf, size_t len)
{
    (void)ud; (void)buf; (void)len;
    return 0;
}

static void do_op(worker *w, unsigned op)
{
    char buf[KEYLEN];
    uint16_t u[KEYLEN];
    int k = (int)(next_rand(&w->rng) % SHARED_KEYS);
    size_t n = shared_key(k, buf);
    held_ref *h = &w->held[next_rand(&w->rng) % HELD];
    const atab_atom *a;
    atab_stats st;
    int64_t atoms = -1;
    switch (op) {
    case OP_INTERN:
        a = atab_intern(w->t, buf, n);
        got(w, k, a, buf, n);
        if (a)
            keep(w, k, a);
        break;
    case OP_INTERN_U16:
        a = atab_intern_utf16(w->t, u, u8_to_u16(buf, n, u));
        got(w, k, a, buf, n);
        if (a)
            keep(w, k, a);
        break;
    case OP_LOOKUP:
        if ((a = atab_lookup(w->t, buf, n)) != NULL) {
            got(w, k, a, buf, n);
            keep(w, k, a);
        }
        break;
    case OP_REF:
        if (h->a)
            keep(w, h->key, atab_ref(h->a));
        break;
    case OP_RELEASE:
        if (h->a && atab_release(w->t, h->a) != ATAB_OK)
            w->errors++;
        h->a = NULL;
        break;
    case OP_CHURN:   /* a private key, released at once: growth and sweeps */
        n = (size_t)snprintf(buf, sizeof buf, "churn-%d-%u", w->id, w->churn++);
        a = atab_intern(w->t, buf, n);
        got(w, -1, a, buf, n);
        if (a && atab_release(w->t, a) != ATAB_OK)
            w->errors++;
        break;
    case OP_GC:
        atab_gc(w->t);
        break;
    case OP_REPORT:
        if (atab_report(w->t, count_entry, &atoms) != ATAB_OK || atoms < 0)
            w->errors++;
        if (atab_report_tree(w->t, null_writer, NULL) != ATAB_OK)
            w->errors++;
        break;
    case OP_STATIC: {   /* default-set strings: the static atom, every entry */
        static const uint16_t div16[] = {'d', 'i', 'v'};
        unsigned how = (unsigned)(next_rand(&w->rng) % 3);
        a = how == 0 ? atab_intern(w->t, "span", 4)
            : how == 1 ? atab_lookup(w->t, "class", 5) : atab_intern_utf16(w->t, div16, 3);
        if (a != (how == 0 ? ATAB_ATOM(span) : how == 1 ? ATAB_ATOM(class) : ATAB_ATOM(div)))
            w->errors++;
        else if (atab_release(w->t, a) != ATAB_OK)   /* a no-op */
            w->errors++;
        break;
    }
    case OP_EXTERNAL: {   /* take a handle on a held atom, or drop one */
        const atab_atom **hd = &w->handle[next_rand(&w->rng) % HANDLES];
        if (*hd) {
            if (atab_external_release(w->t, *hd) != ATAB_OK)
                w->errors++;
            *hd = NULL;
        } else if (h->a) {
            if ((*hd = atab_external_acquire(w->t, h->a)) != h->a)
                w->errors++;
        }
        break;
    }
    case OP_STATS:
        if (atab_get_stats(w->t, &st) != ATAB_OK || st.unused > st.atoms ||
            st.misuse != 0)
            w->errors++;
        break;
    }
    w->ops[op]++;
}

/* Mostly interns, lookups and releases; a gc, report or stats now and then. */
static unsigned pick_op(worker *w)
{
    unsigned r = (unsigned)(next_rand(&w->rng) % 10000);
    if (r < 2)
        return OP_GC;
    if (r < 4)
        return OP_REPORT;
    if (r < 8)
        return OP_STATS;
    static const unsigned common[] = {OP_INTERN, OP_INTERN, OP_INTERN_U16, OP_LOOKUP,
                                      OP_LOOKUP, OP_REF, OP_RELEASE, OP_RELEASE,
                                      OP_RELEASE, OP_CHURN, OP_CHURN, OP_STATIC,
                                      OP_EXTERNAL};
    return common[r % (sizeof common / sizeof *common)];
}

static void *run(void *arg)
{
    worker *w = arg;
    while (!__atomic_load_n(w->stop, __ATOMIC_RELAXED))
        for (int i = 0; i < 256; i++)
            do_op(w, pick_op(w));
    return NULL;
}

static int env_int(const char *name, int dflt, int min)
{
    const char *e = getenv(name);
    int v = e ? atoi(e) : dflt;
    return v < min ? min : v;
}

static void all_operations_at_once_keep_identity_and_counts(void **state)
{
    (void)state;
    int seconds = env_int("ATAB_STRESS_SECONDS", 2, 1);
    int nthreads = env_int("ATAB_STRESS_THREADS", 8, 8);
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = 0;                         /* random seed, default statics: as a host gets */
    o.sweep_threshold = 64;              /* sweeps happen all the time */
    atab_table *t = atab_table_new(&o);
    assert_non_null(t);
    int stop = 0;
    worker *w = calloc((size_t)nthreads, sizeof *w);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    assert_non_null(w);
    assert_non_null(th);
    for (int i = 0; i < nthreads; i++) {
        w[i].t = t;
        w[i].id = i;
        w[i].rng = 0x9e3779b97f4a7c15u * (uint64_t)(i + 1);
        w[i].stop = &stop;
        assert_int_equal(pthread_create(&th[i], NULL, run, &w[i]), 0);
    }
    struct timespec d = {seconds, 0};
    nanosleep(&d, NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < nthreads; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);

    long total = 0, per_op[N_OPS] = {0}, errors = 0;
    char buf[KEYLEN];
    for (int i = 0; i < nthreads; i++) {
        errors += w[i].errors;
        for (int op = 0; op < N_OPS; op++)
            per_op[op] += w[i].ops[op], total += w[i].ops[op];
        for (int j = 0; j < HELD; j++) {   /* held atoms resolve to the same */
            held_ref *h = &w[i].held[j];
            if (!h->a)
                continue;
            size_t n = shared_key(h->key, buf);
            const atab_atom *a = atab_lookup(t, buf, n);
            assert_ptr_equal(a, h->a);
            assert_int_equal(atab_release(t, a), ATAB_OK);
        }
    }
    printf("[  STRESS  ] %d threads, %d s: %ld operations (", nthreads, seconds, total);
    for (int op = 0; op < N_OPS; op++)
        printf("%s%s %ld", op ? ", " : "", op_names[op], per_op[op]);
    printf(")\n");
    assert_int_equal(errors, 0);
    for (int i = 0; i < nthreads; i++) {
        for (int j = 0; j < HELD; j++)
            if (w[i].held[j].a)
                assert_int_equal(atab_release(t, w[i].held[j].a), ATAB_OK);
        for (int j = 0; j < HANDLES; j++)   /* handles kept their atoms alive */
            if (w[i].handle[j]) {
                assert_true(atab_len(w[i].handle[j]) > 0);
                assert_int_equal(atab_external_release(t, w[i].handle[j]), ATAB_OK);
            }
    }
    assert_int_equal(atab_external_handles(t), 0);
    atab_gc(t);
    atab_stats st;
    assert_int_equal(atab_get_stats(t, &st), ATAB_OK);
    assert_int_equal(st.atoms, 0);    /* back to the baseline */
    assert_int_equal(st.unused, 0);
    assert_int_equal(st.misuse, 0);
    assert_int_equal(atab_count(t), 0);
    atab_table_free(t);
    free(w);
    free(th);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_operations_at_once_keep_identity_and_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
