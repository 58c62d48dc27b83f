/* SPDX-License-Identifier: MIT */
/*
** test_threads.c - threads interning and releasing overlapping sets while
** sweeps run: identity holds throughout and the counts add up at the end.
*/
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#include "test_util.h"
#include "atab_int.h"

enum { THREADS = 6, WORDS = 2000, ROUNDS = 30 };

typedef struct worker {
    atab_table *t;
    int id;
    const atab_atom *held[WORDS];   /* references this thread still holds */
    int mismatches;
} worker;

static void word(int i, char *buf, size_t cap)
{
    snprintf(buf, cap, "w%d-%s", i, (i % 7) ? "shared" : "x");
}

static void *run(void *arg)
{
    worker *w = arg;
    char buf[32];
    for (int r = 0; r < ROUNDS; r++) {
        /* each thread works on an overlapping window of the words */
        for (int k = 0; k < WORDS / 2; k++) {
            int i = (w->id * 300 + r * 17 + k) % WORDS;
            word(i, buf, sizeof buf);
            const atab_atom *a = atab_intern_cstr(w->t, buf);
            if (!a || strcmp(atab_chars(a), buf) != 0) {
                w->mismatches++;
                continue;
            }
            if (w->held[i]) {
                if (w->held[i] != a)   /* held atoms cannot change identity */
                    w->mismatches++;
                atab_release(w->t, a);
            } else {
                w->held[i] = a;
            }
            if ((k + r) % 3 == 0 && w->held[i]) {   /* drop some again */
                atab_release(w->t, w->held[i]);
                w->held[i] = NULL;
            }
        }
        if (r % 5 == w->id % 5)
            atab_gc(w->t);
    }
    return NULL;
}

static void threads_intern_release_and_sweep_together(void **state)
{
    (void)state;
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = ATAB_NO_DEFAULT_STATICS;
    o.sweep_threshold = 500;   /* self-triggered sweeps too */
    atab_table *t = atab_table_new(&o);
    static worker w[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].t = t;
        w[i].id = i;
        assert_int_equal(pthread_create(&th[i], NULL, run, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);

    /* every held atom is still the one the table returns */
    size_t distinct_held = 0;
    char buf[32];
    for (int i = 0; i < WORDS; i++) {
        const atab_atom *seen = NULL;
        for (int j = 0; j < THREADS; j++) {
            assert_int_equal(w[j].mismatches, 0);
            if (!w[j].held[i])
                continue;
            if (seen)
                assert_ptr_equal(seen, w[j].held[i]);
            seen = w[j].held[i];
        }
        if (!seen)
            continue;
        distinct_held++;
        word(i, buf, sizeof buf);
        const atab_atom *a = atab_lookup(t, buf, strlen(buf));
        assert_ptr_equal(a, seen);
        atab_release(t, a);
    }
    atab_gc(t);
    assert_int_equal(atab_count(t), distinct_held);
    for (int j = 0; j < THREADS; j++)
        for (int i = 0; i < WORDS; i++)
            if (w[j].held[i])
                assert_int_equal(atab_release(t, w[j].held[i]), ATAB_OK);
    atab_gc(t);   /* the releases above also crossed the sweep threshold */
    assert_int_equal(atab_count(t), 0);
    atab_table_free(t);
}

/* References handed between threads: producers intern (hits, counted in
** their own caches), consumers release them, sweeps run all along. Every
** atom a consumer receives must still be intact, and at the end only the
** atoms the main thread holds survive. */
enum { PAIRS = 3, HANDOFFS = 60000, RING = 256 };

typedef struct ring {
    const atab_atom *slot[RING];
    unsigned head, tail;   /* atomic */
    atab_table *t;
    int bad;
} ring;

static void *producer(void *arg)
{
    ring *q = arg;
    char buf[32];
    for (int i = 0; i < HANDOFFS; i++) {
        snprintf(buf, sizeof buf, "handoff-%d", i % 97);
        const atab_atom *a = atab_intern_cstr(q->t, buf);
        while (__atomic_load_n(&q->head, __ATOMIC_ACQUIRE) -
               __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE) == RING)
            sched_yield();
        q->slot[q->head % RING] = a;
        __atomic_store_n(&q->head, q->head + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    ring *q = arg;
    for (int i = 0; i < HANDOFFS; i++) {
        while (__atomic_load_n(&q->tail, __ATOMIC_ACQUIRE) ==
               __atomic_load_n(&q->head, __ATOMIC_ACQUIRE))
            sched_yield();
        const atab_atom *a = q->slot[q->tail % RING];
        __atomic_store_n(&q->tail, q->tail + 1, __ATOMIC_RELEASE);
        if (strncmp(atab_chars(a), "handoff-", 8) != 0)
            q->bad++;
        if (atab_release(q->t, a) != ATAB_OK)
            q->bad++;
        if (i % 5000 == 0)
            atab_gc(q->t);
    }
    return NULL;
}

static void references_released_on_another_thread_balance_out(void **state)
{
    (void)state;
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = ATAB_NO_DEFAULT_STATICS;
    o.sweep_threshold = 20;
    atab_table *t = atab_table_new(&o);
    const atab_atom *kept = atab_intern_cstr(t, "handoff-5");
    static ring q[PAIRS];
    pthread_t th[2 * PAIRS];
    for (int i = 0; i < PAIRS; i++) {
        memset(&q[i], 0, sizeof q[i]);
        q[i].t = t;
        pthread_create(&th[2 * i], NULL, producer, &q[i]);
        pthread_create(&th[2 * i + 1], NULL, consumer, &q[i]);
    }
    for (int i = 0; i < 2 * PAIRS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < PAIRS; i++)
        assert_int_equal(q[i].bad, 0);
    atab_gc(t);
    atab_stats st;
    atab_get_stats(t, &st);
    assert_int_equal(st.atoms, 1);   /* only the one still held */
    assert_int_equal(st.misuse, 0);
    assert_ptr_equal(atab_lookup(t, "handoff-5", 9), kept);
    atab_release(t, kept);
    atab_release(t, kept);
    atab_gc(t);
    assert_int_equal(atab_count(t), 0);
    atab_table_free(t);
}

typedef struct churner {
    atab_table *t;
    int id;
} churner;

/* Interns 3,000 words (shared between threads, and its own), hits and
** releases them a few times over, then releases everything and exits. */
static void *churn_and_exit(void *arg)
{
    churner *c = arg;
    const atab_atom *held[3000];
    char buf[32];
    for (int i = 0; i < 3000; i++) {
        snprintf(buf, sizeof buf, i % 2 ? "c%d-%d" : "shared-%d", i % 2 ? c->id : i, i);
        held[i] = atab_intern_cstr(c->t, buf);
    }
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < 3000; i++)
            if (held[i])
                atab_release(c->t, atab_intern(c->t, atab_chars(held[i]), atab_len(held[i])));
    for (int i = 0; i < 3000; i++)
        if (held[i])
            atab_release(c->t, held[i]);
    return NULL;
}

/* Memory comes back: once everything is released and atab_gc has run, the
** table holds no more than twice what a new table with this thread's record
** does, after 3 rounds of 8 threads that came and went. */
static void memory_comes_back_whatever_threads_used_it(void **state)
{
    (void)state;
    atab_table *t = atab_table_new(NULL);
    atab_stats fresh, st;
    assert_non_null(t);
    const atab_atom *first = atab_intern_cstr(t, "main-thread-word");   /* a record here */
    assert_non_null(first);
    atab_release(t, first);
    atab_gc(t);
    assert_int_equal(atab_get_stats(t, &fresh), ATAB_OK);
    for (int round = 0; round < 3; round++) {
        pthread_t th[8];
        churner c[8];
        for (int i = 0; i < 8; i++) {
            c[i].t = t, c[i].id = round * 8 + i;
            assert_int_equal(pthread_create(&th[i], NULL, churn_and_exit, &c[i]), 0);
        }
        for (int i = 0; i < 8; i++)
            pthread_join(th[i], NULL);
    }
    const atab_atom *a = atab_intern_cstr(t, "main-thread-word");
    assert_non_null(a);
    atab_release(t, a);
    atab_gc(t);
    assert_int_equal(atab_get_stats(t, &st), ATAB_OK);
    assert_int_equal(st.atoms, 0);
    print_message("new table %zu B, after 24 threads and gc %zu B\n", fresh.bytes, st.bytes);
    assert_true(st.bytes <= 2 * fresh.bytes);
    atab_table_free(t);
}

/* ---- records go back when their threads exit ---- */

static int table_bytes_of(void *ud, const char *path, int kind, int units, int64_t amount,
                          const char *description)
{
    (void)kind; (void)units; (void)description;
    if (strcmp(path, "explicit/atoms/table") == 0)
        *(int64_t *)ud = amount;
    return 0;
}

/* The table's own bytes as the report measures them: the table object,
** its slot arrays and its threads' records. */
static int64_t report_table_bytes(atab_table *t)
{
    int64_t b = -1;
    assert_int_equal(atab_report(t, table_bytes_of, &b), ATAB_OK);
    return b;
}

/* One long-lived table, then nine short-lived ones: more tables than the
** thread's 8 lookup slots, so the first table's record is no longer in
** them when the thread exits. */
static void *long_then_short_tables(void *arg)
{
    atab_table *t = arg;
    const atab_atom *a = atab_intern_cstr(t, "long-lived");
    atab_release(t, atab_intern_cstr(t, "long-lived"));   /* a spare in the cache */
    for (int i = 0; i < 9; i++) {
        atab_table *s = plain_table(NULL);
        atab_release(s, atab_intern_cstr(s, "short-lived"));
        atab_table_free(s);
    }
    atab_release(t, a);
    return NULL;
}

static void a_thread_that_used_nine_tables_gives_back_its_record_on_the_first(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    atab_stats st;
    atab_get_stats(t, &st);
    size_t base = st.bytes;
    int64_t base_report = report_table_bytes(t);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, long_then_short_tables, t), 0);
    pthread_join(th, NULL);
    assert_int_equal(atab_gc(t), 1);   /* its spare came back: "long-lived" is unused */
    atab_get_stats(t, &st);
    assert_int_equal(st.bytes, base);   /* no record left */
    assert_int_equal(report_table_bytes(t), base_report);
    assert_int_equal(st.misuse, 0);
    atab_table_free(t);
}

typedef struct short_lived {
    atab_table *t;
    int id;
    const atab_atom *passed;   /* a reference handed to the main thread */
} short_lived;

static void *use_briefly(void *arg)
{
    short_lived *s = arg;
    char buf[32];
    for (int i = 0; i < 20; i++) {
        snprintf(buf, sizeof buf, "brief%d", (s->id + i) % 50);
        atab_release(s->t, atab_intern_cstr(s->t, buf));
    }
    snprintf(buf, sizeof buf, "passed%d", s->id % 10);
    s->passed = atab_intern_cstr(s->t, buf);
    return NULL;
}

/* Hundreds of short-lived threads (ATAB_THREADS_SHORT, default 300), 30 at
** a time, each leaving spares and handing one reference on: when they are
** gone, so are their records, and the references they passed on hold. */
static void many_short_lived_threads_leave_no_records_behind(void **state)
{
    (void)state;
    enum { BATCH = 30 };
    const char *e = getenv("ATAB_THREADS_SHORT");
    int n = e && atoi(e) > 0 ? atoi(e) : 300;
    atab_table *t = plain_table(NULL);
    atab_stats st;
    atab_get_stats(t, &st);
    size_t base = st.bytes;
    int64_t base_report = report_table_bytes(t);
    short_lived s[BATCH];
    pthread_t th[BATCH];
    for (int done = 0; done < n; done += BATCH) {
        for (int i = 0; i < BATCH; i++) {
            s[i].t = t;
            s[i].id = done + i;
            assert_int_equal(pthread_create(&th[i], NULL, use_briefly, &s[i]), 0);
        }
        for (int i = 0; i < BATCH; i++) {
            pthread_join(th[i], NULL);
            assert_non_null(s[i].passed);
            assert_int_equal(atab_release(t, s[i].passed), ATAB_OK);
        }
    }
    atab_gc(t);
    atab_get_stats(t, &st);
    assert_int_equal(st.atoms, 0);
    assert_int_equal(st.misuse, 0);
    /* the main thread released through its own record: that one stays */
    assert_true(report_table_bytes(t) - base_report <= 2 * (int64_t)sizeof(atab__rec) + 126);
    size_t mine = st.bytes - base;
    assert_true(mine <= sizeof(atab__rec) + 63);
    atab_table_free(t);
}

typedef struct fe_churn {
    atab_table *t;
    int stop;
} fe_churn;

/* Interns and releases its own keys, with sweeps, until told to stop. */
static void *fe_churner(void *arg)
{
    fe_churn *c = arg;
    char buf[32];
    for (unsigned i = 0; !__atomic_load_n(&c->stop, __ATOMIC_RELAXED); i++) {
        snprintf(buf, sizeof buf, "churn-%u", i % 5000);
        const atab_atom *a = atab_intern_cstr(c->t, buf);
        assert_non_null(a);
        atab_release(c->t, a);
        if (i % 997 == 0)
            atab_gc(c->t);
    }
    return NULL;
}

typedef struct fe_held {
    const atab_atom *held[500];
    int visits[500];
} fe_held;

static int fe_check(void *ud, const atab_atom *a, uint32_t count)
{
    fe_held *h = ud;
    int i;
    if (sscanf(atab_chars(a), "held-%d", &i) == 1) {
        assert_ptr_equal(h->held[i], a);
        assert_int_equal(count, 2);   /* this thread's two; nobody else's */
        h->visits[i]++;
    } else {
        assert_memory_equal(atab_chars(a), "churn-", 6);   /* readable: referenced */
    }
    return 0;
}

/* Beside a thread interning, releasing and sweeping, every atom held
** through the walk is visited once with its exact count. */
static void foreach_beside_a_churning_thread_sees_every_held_atom_once(void **state)
{
    (void)state;
    atab_options o;
    memset(&o, 0, sizeof o);
    o.sweep_threshold = 64;
    atab_table *t = atab_table_new(&o);
    fe_held h;
    char buf[32];
    for (int i = 0; i < 500; i++) {
        snprintf(buf, sizeof buf, "held-%d", i);
        h.held[i] = atab_intern_cstr(t, buf);
        atab_intern_cstr(t, buf);
    }
    fe_churn c = {t, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, fe_churner, &c), 0);
    for (int round = 0; round < 20; round++) {
        memset(h.visits, 0, sizeof h.visits);
        assert_int_equal(atab_foreach(t, fe_check, &h), ATAB_OK);
        for (int i = 0; i < 500; i++)
            assert_int_equal(h.visits[i], 1);
    }
    __atomic_store_n(&c.stop, 1, __ATOMIC_RELAXED);
    assert_int_equal(pthread_join(th, NULL), 0);
    for (int i = 0; i < 500; i++)
        atab_release(t, h.held[i]), atab_release(t, h.held[i]);
    atab_stats st;
    assert_int_equal(atab_get_stats(t, &st), ATAB_OK);
    assert_int_equal(st.misuse, 0);
    assert_int_equal(st.unused, st.atoms);   /* nobody holds anything */
    atab_table_free(t);
}

/* The shards' lock (base.h): threads that outnumber the CPUs, each taking
** it around a non-atomic read-modify-write, lose no update; holders that
** sleep while holding it push takers past their spin, onto the futex. */
typedef struct lock_case {
    atab__lock lock;
    unsigned long counter;   /* only under the lock */
    int sleepy;              /* holders yield the CPU now and then */
} lock_case;

enum { LOCK_THREADS = 8, LOCK_ROUNDS = 20000 };

static void *lock_and_count(void *p)
{
    lock_case *c = p;
    for (int i = 0; i < LOCK_ROUNDS; i++) {
        atab__lock_take(&c->lock);
        unsigned long v = c->counter;
        if (c->sleepy && i % 64 == 0)
            sched_yield();   /* held while another thread runs */
        c->counter = v + 1;
        atab__lock_drop(&c->lock);
    }
    return NULL;
}

static void the_shard_lock_loses_no_update_under_contention(void **state)
{
    (void)state;
    for (int sleepy = 0; sleepy < 2; sleepy++) {
        lock_case c = {{0}, 0, sleepy};
        pthread_t th[LOCK_THREADS];
        for (int i = 0; i < LOCK_THREADS; i++)
            assert_int_equal(pthread_create(&th[i], NULL, lock_and_count, &c), 0);
        for (int i = 0; i < LOCK_THREADS; i++)
            pthread_join(th[i], NULL);
        assert_int_equal(c.counter, (unsigned long)LOCK_THREADS * LOCK_ROUNDS);
        assert_int_equal(c.lock.word, 0);   /* free, with nobody marked asleep */
    }
}

/* ---- the solo thread's bias ended while it streams inserts ---- */

enum { SOLO_KEYS = 3000, OTHER_KEYS = 300, SOLO_ROUNDS = 150 };

typedef struct solo_run {
    atab_table *t;
    unsigned delay;   /* the other thread's spins before its first insert */
    int go;           /* the solo thread has claimed t (atomic) */
    int solo_failed, other_failed;   /* an intern returned NULL: each thread's own */
} solo_run;

/* The solo thread: its first insert claims t, then a stream of inserts,
** most of them solo ones (table.h), each key held. */
static void *solo_stream(void *arg)
{
    solo_run *r = arg;
    char k[24];
    r->solo_failed |= !atab_intern_cstr(r->t, "s-first");
    __atomic_store_n(&r->go, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < SOLO_KEYS; i++) {
        snprintf(k, sizeof k, "s%d", i);
        r->solo_failed |= !atab_intern_cstr(r->t, k);
    }
    return NULL;
}

/* The other thread: after a while, inserts of its own (its first lock
** ends the bias, somewhere in the solo thread's stream). */
static void *other_inserts(void *arg)
{
    solo_run *r = arg;
    char k[24];
    while (!__atomic_load_n(&r->go, __ATOMIC_ACQUIRE))
        sched_yield();
    for (volatile unsigned i = 0; i < r->delay; i++)
        ;
    for (int i = 0; i < OTHER_KEYS; i++) {
        snprintf(k, sizeof k, "b%d", i);
        r->other_failed |= !atab_intern_cstr(r->t, k);
    }
    return NULL;
}

/* Each round one thread streams inserts as the table's solo thread while
** another ends the bias at a point that varies from round to round. No
** key is lost or made twice, the count is exact, and every shard's count
** of keys is its array's full slots: no solo insert met a lock's holder. */
static void the_bias_ended_mid_stream_loses_no_key(void **state)
{
    (void)state;
    srand(1);
    for (int round = 0; round < SOLO_ROUNDS; round++) {
        solo_run r = {0};
        atab_options o = {0};
        o.sweep_threshold = SIZE_MAX;
        o.flags = ATAB_NO_DEFAULT_STATICS;
        assert_non_null(r.t = atab_table_new(&o));
        r.delay = (unsigned)rand() % 60000;
        pthread_t a, b;
        assert_int_equal(pthread_create(&a, NULL, solo_stream, &r), 0);
        assert_int_equal(pthread_create(&b, NULL, other_inserts, &r), 0);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        assert_false(r.solo_failed);
        assert_false(r.other_failed);
        assert_int_equal(atab_count(r.t), SOLO_KEYS + OTHER_KEYS + 1);
        char k[24];
        for (int i = 0; i < SOLO_KEYS + OTHER_KEYS; i++) {
            if (i < SOLO_KEYS)
                snprintf(k, sizeof k, "s%d", i);
            else
                snprintf(k, sizeof k, "b%d", i - SOLO_KEYS);
            const atab_atom *x = atab_lookup(r.t, k, strlen(k));
            assert_non_null(x);
            assert_int_equal(atab__count(x), 2);   /* its insert's and the lookup's */
        }
        for (unsigned sh = 0; sh < ATAB__SHARDS; sh++) {
            atab__arr v = atab__arr_of(*r.t->shards[sh].arr);
            size_t full = 0;
            for (size_t j = 0; j < atab__arr_cap(v); j++)
                full += atab__slot_full(v, j) != 0;
            assert_int_equal(full, r.t->shards[sh].used);
        }
        atab_table_free(r.t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_intern_release_and_sweep_together),
        cmocka_unit_test(references_released_on_another_thread_balance_out),
        cmocka_unit_test(memory_comes_back_whatever_threads_used_it),
        cmocka_unit_test(a_thread_that_used_nine_tables_gives_back_its_record_on_the_first),
        cmocka_unit_test(many_short_lived_threads_leave_no_records_behind),
        cmocka_unit_test(foreach_beside_a_churning_thread_sees_every_held_atom_once),
        cmocka_unit_test(the_shard_lock_loses_no_update_under_contention),
        cmocka_unit_test(the_bias_ended_mid_stream_loses_no_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
