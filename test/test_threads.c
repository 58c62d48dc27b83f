/*
** test_threads.c - threads interning and releasing overlapping sets while
** sweeps run: identity holds throughout and the counts add up at the end.
*/
#include <pthread.h>
#include <stdio.h>

#include "test_util.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_intern_release_and_sweep_together),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
