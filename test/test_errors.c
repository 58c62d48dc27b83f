/* SPDX-License-Identifier: MIT */
/*
** test_errors.c - bad input at every entry gives NULL and a clear error
** code, and leaves the table as it was.
*/
#include <pthread.h>

#include "test_util.h"

static void null_arguments_are_einval(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *keep = atab_intern_cstr(t, "keep");
    assert_null(atab_intern(NULL, "a", 1));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_null(atab_intern(t, NULL, 1));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_null(atab_intern_cstr(t, NULL));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_null(atab_intern_utf16(t, NULL, 2));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_null(atab_lookup(NULL, "a", 1));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_int_equal(atab_gc(NULL), 0);
    assert_int_equal(atab_get_stats(t, NULL), ATAB_EINVAL);
    assert_int_equal(atab_count(NULL), 0);
    assert_ptr_equal(atab_ref(NULL), NULL);
    /* every class of short key's length, whose paths test s apart, and a
    ** long one: intern and lookup alike */
    static const size_t lens[] = {1, 3, 8, 9, 16, 17, 32, 33, 200};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        assert_null(atab_intern(t, "x", (size_t)ATAB_MAX_LEN + 1));   /* another error */
        assert_int_equal(atab_last_error(), ATAB_ETOOLONG);
        assert_null(atab_intern(t, NULL, lens[i]));
        assert_int_equal(atab_last_error(), ATAB_EINVAL);
        assert_null(atab_lookup(t, "x", (size_t)ATAB_MAX_LEN + 1));
        assert_int_equal(atab_last_error(), ATAB_ETOOLONG);
        assert_null(atab_lookup(t, NULL, lens[i]));
        assert_int_equal(atab_last_error(), ATAB_EINVAL);
    }
    /* NULL with length 0 is the empty string, not an error */
    const atab_atom *e = atab_intern(t, NULL, 0);
    assert_non_null(e);
    assert_int_equal(atab_len(e), 0);
    assert_int_equal(atab_count(t), 2);
    assert_ptr_equal(atab_lookup(t, "keep", 4), keep);
    atab_table_free(t);
}

static void oversized_lengths_are_etoolong(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    long allocs = c.allocs;
    assert_null(atab_intern(t, "x", ATAB_MAX_LEN + 1));
    assert_int_equal(atab_last_error(), ATAB_ETOOLONG);
    assert_null(atab_intern(t, "x", SIZE_MAX));
    assert_int_equal(atab_last_error(), ATAB_ETOOLONG);
    assert_null(atab_lookup(t, "x", SIZE_MAX));
    assert_int_equal(atab_last_error(), ATAB_ETOOLONG);
    assert_null(atab_intern_utf16(t, (const uint16_t *)"xx", SIZE_MAX));
    assert_int_equal(atab_last_error(), ATAB_ETOOLONG);
    assert_int_equal(c.allocs, allocs);   /* nothing was attempted */
    atab_table_free(t);
}

static void every_code_has_a_message(void **state)
{
    (void)state;
    int codes[] = {ATAB_OK, ATAB_EINVAL, ATAB_ETOOLONG, ATAB_EUTF16,
                   ATAB_ENOMEM, ATAB_ELIMIT, ATAB_EREFS, ATAB_EABI};
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++) {
        const char *m = atab_strerror(codes[i]);
        assert_non_null(m);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(m, atab_strerror(codes[j]));
    }
    assert_string_equal(atab_strerror(12345), "unknown error code");
    assert_non_null(atab_version());
}

static void bad_options_are_einval(void **state)
{
    (void)state;
    atab_allocator broken = {NULL, NULL, NULL, NULL};
    atab_options o;
    memset(&o, 0, sizeof o);
    o.allocator = &broken;
    assert_null(atab_table_new(&o));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    memset(&o, 0, sizeof o);
    o.n_static_sets = 3;   /* but no array */
    assert_null(atab_table_new(&o));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
}

static void the_memory_limit_refuses_inserts_but_keeps_atoms(void **state)
{
    (void)state;
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = ATAB_NO_DEFAULT_STATICS;
    o.memory_limit = 64 * 1024;
    atab_table *t = atab_table_new(&o);
    assert_non_null(t);
    const atab_atom *first = atab_intern_cstr(t, "first");
    char buf[64];
    int i, n = 0;
    for (i = 0; i < 100000; i++) {
        snprintf(buf, sizeof buf, "limit-%d", i);
        if (!atab_intern_cstr(t, buf))
            break;
        n++;
    }
    assert_true(i < 100000);
    assert_int_equal(atab_last_error(), ATAB_ELIMIT);
    atab_stats st;
    atab_get_stats(t, &st);
    assert_true(st.bytes <= o.memory_limit);
    assert_ptr_equal(atab_lookup(t, "first", 5), first);
    assert_int_equal(atab_count(t), (size_t)n + 1);
    atab_table_free(t);
}

/* ---- successful calls leave the last error alone ---- */

/* Makes this thread's last error a known stale one. */
static void stale_error(void)
{
    assert_null(atab_intern(NULL, "x", 1));
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
}

#define STILL_STALE() assert_int_equal(atab_last_error(), ATAB_EINVAL)

static void successful_calls_leave_the_last_error_alone(void **state)
{
    (void)state;
    /* atab_table_new with initial_capacity (its arrays made up front) */
    atab_options o;
    memset(&o, 0, sizeof o);
    o.initial_capacity = 10000;
    stale_error();
    atab_table *t = atab_table_new(&o);
    assert_non_null(t);
    STILL_STALE();
    /* the first intern of a static string (cached in the table's slots) */
    const atab_atom *d = atab_intern_cstr(t, "div");
    assert_non_null(d);
    assert_true(atab_is_static(d));
    STILL_STALE();
    assert_ptr_equal(atab_intern_cstr(t, "div"), d);
    STILL_STALE();
    atab_table_free(t);

    /* misses that grow the table, hits, releases, sweeps, stats, reports */
    t = plain_table(NULL);
    stale_error();
    char buf[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(buf, sizeof buf, "grow-%d", i);
        const atab_atom *a = atab_intern_cstr(t, buf);
        assert_non_null(a);
        STILL_STALE();
        assert_ptr_equal(atab_intern_cstr(t, buf), a);
        assert_int_equal(atab_release(t, a), ATAB_OK);
        if (i % 2)
            assert_int_equal(atab_release(t, a), ATAB_OK);
        STILL_STALE();
    }
    atab_gc(t);   /* the released half: some swept already, from their queue */
    assert_int_equal(atab_count(t), 2500);
    atab_stats st;
    assert_int_equal(atab_get_stats(t, &st), ATAB_OK);
    STILL_STALE();
    atab_table_free(t);
}

typedef struct benign {
    atab_table *t;
    counting_alloc *c;
    const atab_atom *got;
    atab_status err;
    long failed;   /* allocations refused during the intern */
} benign;

/* A first visit whose record cannot be allocated: benign (the locked path
** serves it), so the intern succeeds and the stale error stays. */
static void *intern_without_memory(void *arg)
{
    benign *b = arg;
    stale_error();
    b->c->fail_at = b->c->attempts + 1;
    b->c->fail_after = 1;   /* every allocation from now on fails */
    long before = b->c->attempts;
    b->got = atab_intern_cstr(b->t, "present");
    b->failed = b->c->attempts - before;
    b->err = atab_last_error();
    b->c->fail_at = 0;
    return NULL;
}

static void a_benign_allocation_failure_leaves_the_last_error_alone(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    const atab_atom *a = atab_intern_cstr(t, "present");
    benign b = {t, &c, NULL, ATAB_OK, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, intern_without_memory, &b), 0);
    pthread_join(th, NULL);
    assert_ptr_equal(b.got, a);
    assert_int_equal(b.err, ATAB_EINVAL);
#ifndef ATAB_DEBUG
    assert_true(b.failed >= 1);   /* its record was refused */
#endif
    atab_release(t, a);
    atab_release(t, a);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

/* An insert whose first allocation for its atom fails, and whose retry
** succeeds once the blocks its thread kept from a queue sweep went back
** (table.c: new_atom, carve_block), is a successful call: it returns the
** atom, and must leave the last error alone, as any success does. */
static void an_atom_allocated_on_a_retry_leaves_the_last_error_alone(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records in debug builds: no queues, nothing recycled */
#endif
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = sweeping_table(&al, 3, 16);
    assert_non_null(t);
    char buf[400];
    for (int i = 0; i < 64; i++) {   /* swept from this thread's queue: blocks kept */
        snprintf(buf, sizeof buf, "dead-%05d", i);
        assert_int_equal(atab_release(t, atab_intern_cstr(t, buf)), ATAB_OK);
    }
    assert_true(report_amount(t, "explicit/atoms/dynamic/recycled", 0) > 0);
    memset(buf, 'k', 300);   /* an atom of its own allocation (past 256 bytes) */
    stale_error();
    c.fail_at = c.attempts + 1;   /* its first try, once */
    const atab_atom *a = atab_intern(t, buf, 300);
    c.fail_at = 0;
    assert_non_null(a);   /* the retry got it */
    assert_int_equal(atab_len(a), 300);
    STILL_STALE();
    assert_int_equal(atab_release(t, a), ATAB_OK);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

/* Inserts of 18-byte keys, every third with its first allocation refused
** (once): one that still returns its atom (the short-key insert's block
** refused before the lock, then carved under it: intern.c insert_made) is
** a successful call and leaves the last error alone; one that fails says
** ATAB_ENOMEM. */
static void inserts_that_recover_from_a_refused_allocation_leave_the_last_error_alone(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = plain_table(&al);
    assert_non_null(t);
    assert_non_null(atab_intern_cstr(t, "first"));   /* this thread's record, unrefused */
    char buf[64];
    int recovered = 0, wrong = 0;
    for (int i = 0; i < 3000; i++) {
        int len = snprintf(buf, sizeof buf, "recover-key-%06d", i);
        int armed = i % 3 == 0;   /* the others let the table grow */
        stale_error();
        long before = c.attempts;
        c.fail_at = armed ? before + 1 : 0;
        const atab_atom *a = atab_intern(t, buf, (size_t)len);
        c.fail_at = 0;
        if (!a) {
            assert_int_equal(atab_last_error(), ATAB_ENOMEM);
            continue;
        }
        if (armed && c.attempts > before) {   /* refused, yet interned */
            recovered++;
            if (atab_last_error() != ATAB_EINVAL && !wrong++)
                fprintf(stderr, "key %d: interned after a refusal, last error %d\n", i,
                        (int)atab_last_error());
        }
    }
    assert_true(recovered > 0);
    assert_int_equal(wrong, 0);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

/* atab_write_file is public API: a NULL stream (a failed fopen passed on)
** is bad input, refused with ATAB_EINVAL like any other, never a crash in
** fwrite; the dump returns it, written nothing. */
static void atab_write_file_refuses_a_null_stream(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    assert_int_equal(atab_write_file(NULL, "x", 1), ATAB_EINVAL);
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_int_equal(atab_report_tree(t, atab_write_file, NULL), ATAB_EINVAL);
    assert_int_equal(atab_report_json(t, "p", atab_write_file, NULL), ATAB_EINVAL);
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    atab_table_free(t);
}

/* The finalizer adapters are public API too: NULL data names no atom
** (atab_atom_of_chars(NULL) points before address 0), so it is refused
** with ATAB_EINVAL, nothing touched, the handle still out. */
static void finalizers_refuse_null_data(void **state)
{
    (void)state;
    atab_table *t = plain_table(NULL);
    const atab_atom *a = atab_intern_cstr(t, "held");
    assert_ptr_equal(atab_external_acquire(t, a), a);
    atab_external_finalize(NULL, t);
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    atab_external_finalize_napi(NULL, NULL, t);
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_int_equal(atab_external_handles(t), 1);
    atab_external_finalize((void *)atab_chars(a), t);   /* the real one */
    assert_int_equal(atab_external_handles(t), 0);
    assert_int_equal(atab_release(t, a), ATAB_OK);
    atab_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(null_arguments_are_einval),
        cmocka_unit_test(atab_write_file_refuses_a_null_stream),
        cmocka_unit_test(finalizers_refuse_null_data),
        cmocka_unit_test(oversized_lengths_are_etoolong),
        cmocka_unit_test(every_code_has_a_message),
        cmocka_unit_test(bad_options_are_einval),
        cmocka_unit_test(the_memory_limit_refuses_inserts_but_keeps_atoms),
        cmocka_unit_test(successful_calls_leave_the_last_error_alone),
        cmocka_unit_test(a_benign_allocation_failure_leaves_the_last_error_alone),
        cmocka_unit_test(an_atom_allocated_on_a_retry_leaves_the_last_error_alone),
        cmocka_unit_test(inserts_that_recover_from_a_refused_allocation_leave_the_last_error_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
