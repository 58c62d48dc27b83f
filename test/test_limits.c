/* SPDX-License-Identifier: MIT */
/*
** test_limits.c - limits and hostile input at every public entry: NULL
** table or string, lengths past ATAB_MAX_LEN and SIZE_MAX, invalid UTF-16
** (short and long keys), the memory limit, reference-count saturation,
** and in debug builds double releases and pointers that are not atoms.
** Each call returns its error and leaves the table as it was: same counts,
** same bytes, no allocation, every atom found at the same pointer.
*/
#include <pthread.h>

#include "test_util.h"
#include "atab_int.h"   /* ATAB__REF_SAT: the saturation point */

/* What "unchanged" compares. */
typedef struct snap {
    atab_stats st;
    long attempts;
} snap;

typedef struct fixture {
    counting_alloc c;
    atab_allocator al;
    atab_table *t;
    const atab_atom *held[3];
} fixture;

static const char *const held_keys[3] = {"alpha", "b\xc3\xa9ta", ""};

static void setup(fixture *f)
{
    memset(f, 0, sizeof *f);
    f->al = ca_allocator(&f->c);
    f->t = plain_table(&f->al);
    assert_non_null(f->t);
    for (int i = 0; i < 3; i++)
        assert_non_null(f->held[i] = atab_intern_cstr(f->t, held_keys[i]));
}

static snap take(fixture *f)
{
    snap s;
    assert_int_equal(atab_get_stats(f->t, &s.st), ATAB_OK);
    s.attempts = f->c.attempts;
    return s;
}

/* The table is as it was at `s` and every held atom is where it was. */
static void unchanged(fixture *f, snap s)
{
    atab_stats now;
    assert_int_equal(f->c.attempts, s.attempts);   /* nothing allocated */
    assert_int_equal(atab_get_stats(f->t, &now), ATAB_OK);
    assert_int_equal(now.atoms, s.st.atoms);
    assert_int_equal(now.unused, s.st.unused);
    assert_int_equal(now.bytes, s.st.bytes);
    assert_int_equal(now.misuse, s.st.misuse);
    for (int i = 0; i < 3; i++) {
        const atab_atom *a = atab_lookup(f->t, held_keys[i], strlen(held_keys[i]));
        assert_ptr_equal(a, f->held[i]);
        atab_release(f->t, a);
    }
}

static void teardown(fixture *f)
{
    atab_table_free(f->t);
    assert_int_equal(f->c.live, 0);
}

#define EXPECT_NULL(call, code)                          \
    do {                                                 \
        assert_null(call);                               \
        assert_int_equal(atab_last_error(), (code));     \
    } while (0)

#define EXPECT_RC(call, code)                            \
    do {                                                 \
        assert_int_equal((call), (code));                \
        assert_int_equal(atab_last_error(), (code));     \
    } while (0)

static int null_entry(void *ud, const char *path, int kind, int units,
                      int64_t amount, const char *desc)
{
    (void)ud; (void)path; (void)kind; (void)units; (void)amount; (void)desc;
    return 0;
}

static int null_writer(void *ud, const char *buf, size_t len)
{
    (void)ud; (void)buf; (void)len;
    return 0;
}

static void null_table_or_string_at_every_entry(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    snap s = take(&f);
    const uint16_t u[] = {'a'};
    atab_stats st;
    EXPECT_NULL(atab_intern(NULL, "a", 1), ATAB_EINVAL);
    EXPECT_NULL(atab_intern(f.t, NULL, 1), ATAB_EINVAL);
    EXPECT_NULL(atab_intern(f.t, NULL, SIZE_MAX), ATAB_EINVAL);
    EXPECT_NULL(atab_intern_cstr(NULL, "a"), ATAB_EINVAL);
    EXPECT_NULL(atab_intern_cstr(f.t, NULL), ATAB_EINVAL);
    EXPECT_NULL(atab_intern_utf16(NULL, u, 1), ATAB_EINVAL);
    EXPECT_NULL(atab_intern_utf16(f.t, NULL, 1), ATAB_EINVAL);
    EXPECT_NULL(atab_lookup(NULL, "a", 1), ATAB_EINVAL);
    EXPECT_NULL(atab_lookup(f.t, NULL, 1), ATAB_EINVAL);
    EXPECT_NULL(atab_lookup_utf16(NULL, u, 1), ATAB_EINVAL);
    EXPECT_NULL(atab_lookup_utf16(f.t, NULL, 1), ATAB_EINVAL);
    EXPECT_RC(atab_release(NULL, f.held[0]), ATAB_EINVAL);
    EXPECT_RC(atab_release(f.t, NULL), ATAB_EINVAL);
    EXPECT_RC(atab_get_stats(NULL, &st), ATAB_EINVAL);
    EXPECT_RC(atab_get_stats(f.t, NULL), ATAB_EINVAL);
    EXPECT_RC(atab_report(NULL, null_entry, NULL), ATAB_EINVAL);
    EXPECT_RC(atab_report(f.t, NULL, NULL), ATAB_EINVAL);
    EXPECT_RC(atab_report_tree(NULL, null_writer, NULL), ATAB_EINVAL);
    EXPECT_RC(atab_report_tree(f.t, NULL, NULL), ATAB_EINVAL);
    EXPECT_RC(atab_report_json(NULL, "p", null_writer, NULL), ATAB_EINVAL);
    EXPECT_RC(atab_report_json(f.t, "p", NULL, NULL), ATAB_EINVAL);
    assert_int_equal(atab_gc(NULL), 0);
    assert_int_equal(atab_count(NULL), 0);
    assert_int_equal(atab_report_has_usable_size(NULL), 0);
    assert_null(atab_ref(NULL));
    atab_table_free(NULL);
    /* a NULL string of length 0 is the empty string: the held one */
    const atab_atom *e = atab_intern(f.t, NULL, 0);
    assert_ptr_equal(e, f.held[2]);
    atab_release(f.t, e);
    e = atab_intern_utf16(f.t, NULL, 0);
    assert_ptr_equal(e, f.held[2]);
    atab_release(f.t, e);
    unchanged(&f, s);
    teardown(&f);
}

static void lengths_past_the_maximum_and_size_max(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    snap s = take(&f);
    const char *p = "x";
    const uint16_t u[] = {'x'};
    size_t lens[] = {ATAB_MAX_LEN + 1, SIZE_MAX / 2, SIZE_MAX - 1, SIZE_MAX};
    for (int i = 0; i < 4; i++) {   /* refused before a byte is read */
        EXPECT_NULL(atab_intern(f.t, p, lens[i]), ATAB_ETOOLONG);
        EXPECT_NULL(atab_lookup(f.t, p, lens[i]), ATAB_ETOOLONG);
        EXPECT_NULL(atab_intern_utf16(f.t, u, lens[i]), ATAB_ETOOLONG);
        EXPECT_NULL(atab_lookup_utf16(f.t, u, lens[i]), ATAB_ETOOLONG);
    }
    unchanged(&f, s);
    teardown(&f);
}

/* Unpaired surrogates, at the start, middle and end of short keys and of
** keys past the 256-byte stack conversion (the chunked path). */
static void invalid_utf16_short_and_long(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    static uint16_t buf[600];
    const uint16_t bad[][2] = {{0xd800, 'a'}, {'a', 0xdc00}, {0xdbff, 0xdbff},
                               {0xdfff, 0xd800}};
    for (size_t len = 2; len <= 600; len = len < 16 ? len + 1 : len * 3) {
        for (int b = 0; b < 4; b++) {
            for (size_t pos = 0; pos + 2 <= len; pos += (len / 3 ? len / 3 : 1)) {
                for (size_t i = 0; i < len; i++)
                    buf[i] = (uint16_t)(i % 3 ? 'a' + i % 26 : 0xe9);
                buf[pos] = bad[b][0];
                buf[pos + 1] = bad[b][1];
                if (bad[b][0] == 'a')   /* the lone low at the very end */
                    buf[len - 1] = 0xdc00, buf[len - 2] = 'a';
                snap s = take(&f);
                EXPECT_NULL(atab_intern_utf16(f.t, buf, len), ATAB_EUTF16);
                EXPECT_NULL(atab_lookup_utf16(f.t, buf, len), ATAB_EUTF16);
                unchanged(&f, s);
            }
        }
    }
    /* a lone high as the very last unit of a long key */
    for (size_t i = 0; i < 600; i++)
        buf[i] = 'z';
    buf[599] = 0xd83d;
    EXPECT_NULL(atab_intern_utf16(f.t, buf, 600), ATAB_EUTF16);
    /* and a valid pair there works */
    buf[598] = 0xd83d, buf[599] = 0xde00;
    const atab_atom *a = atab_intern_utf16(f.t, buf, 600);
    assert_non_null(a);
    assert_int_equal(atab_len(a), 598 + 4);
    atab_release(f.t, a);
    teardown(&f);
}

/* An absent key is not an error: a lookup clears a stale error. */
static void a_lookup_miss_leaves_no_stale_error(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    const uint16_t lone[] = {0xd800};
    EXPECT_NULL(atab_intern_utf16(f.t, lone, 1), ATAB_EUTF16);
    EXPECT_NULL(atab_lookup(f.t, "absent", 6), ATAB_OK);
    EXPECT_NULL(atab_intern(f.t, NULL, 3), ATAB_EINVAL);
    const uint16_t absent[] = {'n', 'o'};
    EXPECT_NULL(atab_lookup_utf16(f.t, absent, 2), ATAB_OK);
    teardown(&f);
}

static void the_memory_limit_refuses_what_would_pass_it(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_options o = plain_options(&al, 0);
    o.memory_limit = 100;   /* below the table object itself */
    EXPECT_NULL(atab_table_new(&o), ATAB_ELIMIT);
    assert_int_equal(c.live, 0);

    o.memory_limit = 48 * 1024;
    atab_table *t = atab_table_new(&o);
    assert_non_null(t);
    enum { MAX = 10000 };
    static const atab_atom *kept[MAX];
    static int kept_id[MAX];   /* the key of kept[i]: "limited-<kept_id[i]>" */
    char buf[64];
    /* fill every shard: keys go on until 200 in a row are refused (one
    ** refused may only have needed its shard to grow, where another shard
    ** still had a free slot) */
    int n = 0, refused = 0, tried = 0;
    for (; tried < 4 * MAX && refused < 200 && n < MAX; tried++) {
        snprintf(buf, sizeof buf, "limited-%d", tried);
        if ((kept[n] = atab_intern_cstr(t, buf)) != NULL)
            kept_id[n++] = tried, refused = 0;
        else
            refused++;
    }
    assert_true(n > 100 && n < MAX && refused == 200);
    assert_int_equal(atab_last_error(), ATAB_ELIMIT);
    atab_stats before, after;
    atab_get_stats(t, &before);
    assert_true(before.bytes <= o.memory_limit);
    assert_int_equal(before.bytes, c.bytes);
    /* at the limit: new keys fail (UTF-8 and UTF-16), nothing changes ... */
    const uint16_t nu[] = {'n', 'e', 'w', '-', 'u', 't', 'f', '1', '6', '-', 'k', 'e', 'y', 0xe9};
    for (int i = 0; i < 50; i++) {   /* no shorter than the keys that filled it */
        snprintf(buf, sizeof buf, "another-%05d", i);
        EXPECT_NULL(atab_intern_cstr(t, buf), ATAB_ELIMIT);
    }
    EXPECT_NULL(atab_intern_utf16(t, nu, sizeof nu / sizeof nu[0]), ATAB_ELIMIT);
    atab_get_stats(t, &after);
    assert_int_equal(after.atoms, before.atoms);
    assert_int_equal(after.bytes, before.bytes);
    /* ... and existing atoms still work: hits, lookups, refs */
    for (int i = 0; i < n; i++) {
        snprintf(buf, sizeof buf, "limited-%d", kept_id[i]);
        assert_ptr_equal(atab_intern_cstr(t, buf), kept[i]);
        assert_ptr_equal(atab_lookup(t, buf, strlen(buf)), kept[i]);
        atab_release(t, kept[i]);
        atab_release(t, kept[i]);
    }
    /* freeing room lets inserts succeed again */
    for (int i = 0; i < n / 2; i++)
        atab_release(t, kept[i]);
    assert_true(atab_gc(t) > 0);
    assert_non_null(atab_intern_cstr(t, "another-0"));
    atab_get_stats(t, &after);
    assert_true(after.bytes <= o.memory_limit);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

/* The bytes of a table made with o that holds no atom, with this
** thread's record (made by a lookup), if any. */
static size_t bytes_before_any_atom(const atab_options *o)
{
    atab_table *t = atab_table_new(o);
    assert_non_null(t);
    assert_null(atab_lookup(t, "x", 1));
    atab_stats st;
    assert_int_equal(atab_get_stats(t, &st), ATAB_OK);
    atab_table_free(t);
    return st.bytes;
}

/* A table's first atom needs its first chunk, and the chunks' directory
** with it. Where the memory limit has room for the directory but not for
** the chunk, the intern fails with ATAB_ELIMIT and leaves the table as it
** was, its bytes included (atomtab.h, atab_intern: only a chunk it had may
** stay): no directory is kept for a chunk that was never had. */
static void an_intern_refused_its_first_chunk_leaves_the_bytes_as_they_were(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_options o = plain_options(&al, 0);
    atab_stats before = {0}, after;
    before.bytes = bytes_before_any_atom(&o);

    o.memory_limit = before.bytes + 512;   /* room for small blocks, not a 1 KB chunk */
    atab_table *t = atab_table_new(&o);
    assert_non_null(t);
    assert_null(atab_lookup(t, "x", 1));
    assert_int_equal(c.bytes, before.bytes);
    EXPECT_NULL(atab_intern(t, "x", 1), ATAB_ELIMIT);
    assert_int_equal(atab_get_stats(t, &after), ATAB_OK);
    assert_int_equal(after.atoms, 0);
    assert_int_equal(after.bytes, before.bytes);
    assert_int_equal(c.bytes, before.bytes);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

/* Every memory limit a table's first atom can meet short of what it
** needs (its chunk, the chunks' directory, its shard's first slot array):
** the intern fails with ATAB_ELIMIT and makes no atom. What it may keep is
** the memory it had for new atoms (atomtab.h): the chunk its atom was
** carved from, when the array was the block refused, never all it needed;
** and failing again at the same limit keeps nothing more. */
static void a_refused_first_intern_keeps_at_most_its_chunk_at_every_limit(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_options o = plain_options(&al, 0);
    atab_stats base = {0}, st;
    base.bytes = bytes_before_any_atom(&o);
    atab_table *t = atab_table_new(&o);
    assert_null(atab_lookup(t, "x", 1));
    const atab_atom *a = atab_intern(t, "x", 1);
    assert_non_null(a);
    assert_int_equal(atab_get_stats(t, &st), ATAB_OK);
    size_t need = st.bytes - base.bytes;   /* what the first atom took */
    atab_release(t, a);
    atab_table_free(t);
    for (size_t extra = 0; extra < need; extra += 8) {
        o.memory_limit = base.bytes + extra;
        t = atab_table_new(&o);
        assert_non_null(t);
        assert_null(atab_lookup(t, "x", 1));
        EXPECT_NULL(atab_intern(t, "x", 1), ATAB_ELIMIT);
        assert_int_equal(atab_get_stats(t, &st), ATAB_OK);
        size_t kept = st.bytes;
        if (st.atoms != 0 || kept >= base.bytes + need || kept > o.memory_limit)
            fail_msg("limit %zu bytes past the table's: %zu atoms, %zu bytes (%zu before)",
                     extra, st.atoms, kept, base.bytes);
        for (int i = 0; i < 3; i++) {   /* again, and with other keys */
            EXPECT_NULL(atab_intern(t, i ? "yz" : "x", i ? 2 : 1), ATAB_ELIMIT);
            assert_int_equal(atab_get_stats(t, &st), ATAB_OK);
            assert_int_equal(st.bytes, kept);
            assert_int_equal(st.atoms, 0);
        }
        atab_table_free(t);
        assert_int_equal(c.live, 0);
    }
}

#define RECYCLED "explicit/atoms/dynamic/recycled"   /* left out when none */

/* A table of seed `seed` on allocator al under a memory limit, whose
** threads' queues hold 256 atoms (plain_options, no static sets). */
static atab_table *limited_table(const atab_allocator *al, uint64_t seed, size_t limit)
{
    atab_options o = plain_options(al, seed);
    o.memory_limit = limit;
    o.sweep_threshold = 256;
    atab_table *t = atab_table_new(&o);
    assert_non_null(t);
    return t;
}

/* A thread's sweep keeps no blocks for its next new atoms on a table with
** a memory limit (they would count against it, and refuse other threads'
** atoms: another_threads_kept_blocks_give_way_to_new_atoms_at_the_memory_limit):
** they go back to their chunks, and new atoms are made up to the limit. */
static void kept_blocks_give_way_to_new_atoms_at_the_memory_limit(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records in debug builds: no queues, nothing recycled */
#endif
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = limited_table(&al, 0, 48 * 1024);
    char buf[64];
    for (int i = 0; i < 256; i++) {   /* a queue's worth of 10-byte atoms, swept */
        snprintf(buf, sizeof buf, "dead-%05d", i);
        assert_int_equal(atab_release(t, atab_intern_cstr(t, buf)), ATAB_OK);
    }
    assert_int_equal(report_amount(t, RECYCLED, 0), 0);   /* none kept at a memory limit */
    enum { MAX = 10000 };
    static const atab_atom *kept[MAX];
    int n = 0, refused = 0;
    for (int tried = 0; tried < 4 * MAX && refused < 200 && n < MAX; tried++) {
        snprintf(buf, sizeof buf, "a-longer-held-key-%06d", tried);   /* 24 bytes */
        if ((kept[n] = atab_intern_cstr(t, buf)) != NULL)
            n++, refused = 0;
        else
            refused++;
    }
    assert_true(n > 100 && n < MAX && refused == 200);
    assert_int_equal(atab_last_error(), ATAB_ELIMIT);
    assert_int_equal(report_amount(t, RECYCLED, 0), 0);   /* given way before the first refusal */
    atab_stats st;
    atab_get_stats(t, &st);
    assert_true(st.bytes <= 48 * 1024);
    assert_int_equal(st.bytes, c.bytes);
    for (int i = 0; i < n; i++)
        assert_int_equal(atab_release(t, kept[i]), ATAB_OK);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
    assert_false(c.size_mismatch);
}

/* Another thread's kept blocks. W interns and releases a queue's worth of
** 10-byte atoms (its sweep keeps their blocks for its next new atoms), then
** waits, alive, using the table no more. This thread then interns held
** 10-byte keys until the memory limit refuses one: at that refusal no
** thread may still keep a block of that size class (the report's
** recycled entry), as no thread may take a run of freed blocks that
** another's atom then lacks (chunk.h: atab__chunk_carve_many, not with a
** memory limit). */
typedef struct idle_churner {
    atab_table *t;
    int churned, go;   /* atomic */
    void *failed;
} idle_churner;

static void *churn_and_idle(void *arg)
{
    idle_churner *w = arg;
    char buf[64];
    for (int i = 0; i < 256; i++) {
        snprintf(buf, sizeof buf, "idle-%05d", i);
        const atab_atom *a = atab_intern_cstr(w->t, buf);
        if (!a || atab_release(w->t, a) != ATAB_OK)
            w->failed = arg;
    }
    __atomic_store_n(&w->churned, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&w->go, __ATOMIC_ACQUIRE))
        sched_yield();
    return NULL;
}

static void another_threads_kept_blocks_give_way_to_new_atoms_at_the_memory_limit(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records in debug builds: no queues, nothing recycled */
#endif
    enum { MAXK = 20000 };
    static const atab_atom *held[MAXK];
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = limited_table(&al, 0, 64 * 1024);
    assert_null(atab_lookup(t, "x", 1));   /* this thread's record, before the limit is near */
    idle_churner w = {t, 0, 0, NULL};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, churn_and_idle, &w), 0);
    while (!__atomic_load_n(&w.churned, __ATOMIC_ACQUIRE))
        sched_yield();
    assert_null(w.failed);
    char buf[32];
    int n = 0;
    for (; n < MAXK; n++) {
        snprintf(buf, sizeof buf, "held-%05d", n);   /* 10 bytes: W's blocks' class */
        if ((held[n] = atab_intern_cstr(t, buf)) == NULL)
            break;
    }
    assert_true(n < MAXK);
    assert_int_equal(atab_last_error(), ATAB_ELIMIT);
    int64_t kept = report_amount(t, RECYCLED, 0);
    __atomic_store_n(&w.go, 1, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(th, NULL), 0);
    if (kept != 0)
        fail_msg("key %d refused at the limit while another thread kept %lld bytes of "
                 "blocks of its size class", n, (long long)kept);
    for (int i = 0; i < n; i++)
        assert_int_equal(atab_release(t, held[i]), ATAB_OK);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

/* A queue's worth of 10-byte atoms interned and released on t by a thread
** that then exits. */
static void *churn_and_exit(void *arg)
{
    atab_table *t = arg;
    char buf[64];
    for (int i = 0; i < 256; i++) {
        snprintf(buf, sizeof buf, "gone-%05d", i);
        const atab_atom *a = atab_intern_cstr(t, buf);
        if (!a || atab_release(t, a) != ATAB_OK)
            return arg;   /* failed */
    }
    return NULL;
}

typedef struct long_intern {
    atab_table *t;
    const char *s;
    size_t len;
    const atab_atom *a;
} long_intern;

static void *intern_long_there(void *arg)
{
    long_intern *li = arg;
    li->a = atab_intern(li->t, li->s, li->len);
    return NULL;
}

/* How churn_then_long_atom leaves chunks for the long atom. */
enum churn {
    SWEPT_HERE,     /* this thread's queue sweep: the blocks kept for its next atoms */
    EXITED,         /* a thread that exits: its chunks left empty */
    EXITED_NO_REC   /* as EXITED, the long atom interned by a new thread whose record
                       the allocator refuses (its first allocation): it has none */
};

/* 256 10-byte atoms interned and released at a memory limit (queues of
** 256), as `how` says, then an atom of `len` bytes (made alone, past the
** chunks' blocks). The table's bytes before the long atom (*left) and
** after it (*made; 0 when it was refused). */
static void churn_then_long_atom(size_t limit, size_t len, enum churn how, size_t *left,
                                 size_t *made)
{
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = limited_table(&al, 7, limit);
    char *big = malloc(len);
    assert_non_null(big);
    memset(big, 'L', len);
    if (how == SWEPT_HERE) {
        char buf[64];
        for (int i = 0; i < 256; i++) {   /* a queue's worth, swept: blocks kept */
            snprintf(buf, sizeof buf, "dead-%05d", i);
            assert_int_equal(atab_release(t, atab_intern_cstr(t, buf)), ATAB_OK);
        }
    } else {
        pthread_t th;
        void *failed;
        assert_null(atab_lookup(t, "x", 1));   /* this thread's record, before the limit is near */
        assert_int_equal(pthread_create(&th, NULL, churn_and_exit, t), 0);
        assert_int_equal(pthread_join(th, &failed), 0);
        assert_null(failed);
    }
    atab_stats st;
    atab_get_stats(t, &st);
    *left = st.bytes;
    long_intern li = {t, big, len, NULL};
    if (how == EXITED_NO_REC) {
        pthread_t th;
        c.fail_at = c.attempts + 1, c.fail_after = 0;   /* the new thread's record, only */
        assert_int_equal(pthread_create(&th, NULL, intern_long_there, &li), 0);
        assert_int_equal(pthread_join(th, NULL), 0);
    } else {
        intern_long_there(&li);
    }
    atab_get_stats(t, &st);
    *made = li.a ? st.bytes : 0;
    if (li.a)
        atab_release(t, li.a);
    free(big);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

/* An atom of len bytes is made at a limit one byte short of the room it
** and its insert took in a run with no limit to speak of (`measure`), as
** `how` leaves the chunks: so the chunks left empty went back first. */
static void long_atom_fits_when_the_chunks_go_back(size_t len, enum churn measure,
                                                   enum churn how)
{
    size_t left, made, again, made_then;
    churn_then_long_atom((size_t)1 << 30, len, measure, &left, &made);
    assert_true(made > left);
    size_t need = made - left;   /* the atom, and whatever its insert grew */
    churn_then_long_atom(left + need - 1, len, how, &again, &made_then);
    assert_int_equal(again, left);   /* the same table up to the long atom */
    assert_int_not_equal(made_then, 0);
}

/* The chunks a thread's kept blocks empty when they are given back for an
** allocation the memory limit refused go back to the allocator
** (thread.h: atab__recycled_free), so an atom made alone that fits once
** they are gone is made. The kept blocks fill two chunks (1 KB and 2 KB)
** and part of a third, the thread's current one; the limit leaves the long
** atom one byte short of room while those two chunks are held. */
static void kept_blocks_given_way_free_the_chunks_they_empty_for_a_long_atom(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records in debug builds: no queues, nothing recycled */
#endif
    long_atom_fits_when_the_chunks_go_back(2000, SWEPT_HERE, SWEPT_HERE);
}

/* The chunks a thread that exited left empty (its three: 1, 2 and 4 KB,
** fewer than a purge waits for) go back to the allocator before an atom
** made alone is refused at the memory limit: the limit leaves the long
** atom one byte short of room while they are held (and room for the
** exiting thread's record and queue, which it gave back). */
static void chunks_an_exited_thread_emptied_give_way_to_a_long_atom(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records in debug builds: no queues, no bumps of their own */
#endif
    long_atom_fits_when_the_chunks_go_back(20000, EXITED, EXITED);
}

/* As chunks_an_exited_thread_emptied_give_way_to_a_long_atom, the long
** atom interned by a thread with no record on the table (the allocator
** refused it): the chunks left empty go back all the same. */
static void chunks_left_empty_give_way_to_a_long_atom_of_a_thread_without_a_record(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records in debug builds: no queues, no bumps of their own */
#endif
    long_atom_fits_when_the_chunks_go_back(20000, EXITED, EXITED_NO_REC);
}

/* The chunks an exited thread left empty (churn_and_exit's: 1, 2 and 4
** KB, fewer than a purge waits for) go back to the allocator before the
** memory limit refuses an insert whose shard must grow (its slot array),
** as they do before a chunk or an atom made alone is refused. This
** thread interns held keys until the limit refuses one; at that refusal
** none of those chunks may still be out (ea_alloc records them). Over a
** range of limits, so that some refusals are a growth's, not a chunk's. */
enum { EA_MAX = 8 };

typedef struct exited_alloc {
    counting_alloc c;
    void *chunk[EA_MAX];   /* the exiting thread's chunks still out */
    int n;
} exited_alloc;

static __thread int ea_is_exiting;   /* set on churn_and_exit's thread */

static void *ea_alloc(void *ud, size_t size)
{
    exited_alloc *e = ud;
    void *p = ca_alloc(&e->c, size);
    if (p && ea_is_exiting && (size == 1024 || size == 2048 || size == 4096) && e->n < EA_MAX)
        e->chunk[e->n++] = p;
    return p;
}

static void ea_free(void *ud, void *p, size_t size)
{
    exited_alloc *e = ud;
    for (int i = 0; i < e->n; i++)
        if (e->chunk[i] == p)
            e->chunk[i] = e->chunk[--e->n];
    ca_free(&e->c, p, size);
}

static void *churn_and_exit_marked(void *arg)
{
    ea_is_exiting = 1;
    return churn_and_exit(arg);
}

static void chunks_an_exited_thread_emptied_give_way_to_a_growing_shard(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records in debug builds: no bumps of their own */
#endif
    enum { MAXK = 20000 };
    static const atab_atom *held[MAXK];
    for (size_t limit = 48 * 1024; limit <= 160 * 1024; limit += 2 * 1024) {
        exited_alloc e;
        memset(&e, 0, sizeof e);
        atab_allocator al = {ea_alloc, ea_free, ca_usable, &e};
        atab_options o = plain_options(&al, 7);
        o.memory_limit = limit;
        o.sweep_threshold = 256;
        atab_table *t = atab_table_new(&o);
        assert_non_null(t);
        assert_null(atab_lookup(t, "x", 1));   /* this thread's record, before the limit is near */
        pthread_t th;
        void *failed;
        assert_int_equal(pthread_create(&th, NULL, churn_and_exit_marked, t), 0);
        assert_int_equal(pthread_join(th, &failed), 0);
        assert_null(failed);
        assert_int_equal(e.n, 3);   /* its chunks, empty, still out */
        char buf[32];
        int n = 0;
        for (; n < MAXK; n++) {
            snprintf(buf, sizeof buf, "held-%07d", n);
            if ((held[n] = atab_intern_cstr(t, buf)) == NULL)
                break;
        }
        assert_true(n < MAXK);
        assert_int_equal(atab_last_error(), ATAB_ELIMIT);
        if (e.n != 0)
            fail_msg("limit %zu: key %d refused while the exited thread's %d empty chunks "
                     "were still out", limit, n, e.n);
        for (int i = 0; i < n; i++)
            assert_int_equal(atab_release(t, held[i]), ATAB_OK);
        atab_table_free(t);
        assert_int_equal(e.c.live, 0);
    }
}

/* The chunks a thread's sweep left empty (the 1 and 2 KB before its
** current one: a queue's worth of 10-byte atoms, whose blocks go back to
** their chunks at a memory limit; fewer than a purge waits for) go back to
** the allocator before the memory limit refuses atab_intern_lower's folded
** copy of a key past its stack buffer (an allocation of the table's), as
** they do before it refuses the atom itself: at a limit one byte short of
** that copy while they are held, the fold is made and interned. */
enum { FOLDED_LEN = 1000 };

/* A table at `limit` whose thread swept a queue's worth of atoms (the
** chunks it emptied still out), with atom `held` made and then `prep` run
** (when not NULL); *left its bytes in use then; *made what `last` (a step
** that allocates) returned. */
typedef int (*last_step)(atab_table *t, const atab_atom *held);

static void churn_then(size_t limit, size_t *left, int *made, last_step prep, last_step last)
{
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_table *t = limited_table(&al, 7, limit);
    char buf[64];
    for (int i = 0; i < 256; i++) {   /* a queue's worth, swept */
        snprintf(buf, sizeof buf, "dead-%05d", i);
        assert_int_equal(atab_release(t, atab_intern_cstr(t, buf)), ATAB_OK);
    }
    const atab_atom *held = atab_intern_cstr(t, "held");
    assert_non_null(held);
    if (prep)
        prep(t, held);
    atab_stats st;
    atab_get_stats(t, &st);
    *left = st.bytes;
    *made = last(t, held);
    assert_int_equal(atab_release(t, held), ATAB_OK);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

static int folded_key(atab_table *t, const atab_atom *held)
{
    (void)held;
    static char upper[FOLDED_LEN];
    memset(upper, 'F', sizeof upper);
    const atab_atom *a = atab_intern_lower(t, upper, sizeof upper);
    if (!a) {
        assert_int_equal(atab_last_error(), ATAB_ELIMIT);
        return 0;
    }
    assert_int_equal(atab_chars(a)[0], 'f');
    atab_release(t, a);
    return 1;
}

/* `step` run on the churned table (after `prep`) with no limit in the way
** (it must be made), then at a limit one byte short of *need bytes past what the table
** holds after the churn: made there too, once the emptied chunks are back
** (at that limit the same table, up to the step). */
static void made_one_byte_short(last_step prep, last_step step, const size_t *need,
                                const char *what)
{
#ifdef ATAB_DEBUG
    skip();   /* no records in debug builds: no queues, no bumps of their own */
#endif
    size_t left, again;
    int made;
    churn_then((size_t)1 << 30, &left, &made, prep, step);
    assert_true(made);
    assert_true(*need > 0);
    churn_then(left + *need - 1, &again, &made, prep, step);
    assert_int_equal(again, left);
    if (!made)
        fail_msg("%s was refused ATAB_ELIMIT at %zu bytes in use of a limit of %zu while chunks "
                 "a sweep emptied were still out", what, again, left + *need - 1);
}

/* The copy (FOLDED_LEN bytes) one byte short of room: the atom, its slot
** array and the copy fit once the emptied 3 KB are back. */
static void chunks_a_sweep_emptied_give_way_to_a_folded_copy(void **state)
{
    (void)state;
    static const size_t need = FOLDED_LEN;
    made_one_byte_short(NULL, folded_key, &need, "atab_intern_lower's copy");
}

/* The same for host caches' own allocations (the table's list of caches,
** each cache, its first array of entries): at a limit one byte short of
** what four caches of the held atom's string take while the emptied chunks
** are held, the caches are made and keep it. */
static size_t hc_bytes;   /* what the cache took, with no limit in the way */

static void *hc_create(void *ud, atab_table *t, const atab_atom *a, unsigned *string_refs)
{
    (void)ud, (void)t;
    *string_refs = 0;   /* a copy of its own: no reference on the atom */
    return (void *)(uintptr_t)a;
}

static void hc_drop(void *ud, void *s)
{
    (void)ud, (void)s;
}

static int host_cache_step(atab_table *t, const atab_atom *held)
{
    enum { CACHES = 4 };   /* 4 x 456 bytes: past what the sweeps above need beyond their end */
    atab_stats st;
    atab_get_stats(t, &st);
    size_t before = st.bytes;
    atab_host_ops ops = {hc_create, NULL, hc_drop, NULL};
    atab_host_cache *hc[CACHES] = {NULL};
    int made = 1;
    for (int i = 0; i < CACHES && made; i++) {
        hc[i] = atab_host_cache_new(t, &ops);
        void *s = hc[i] ? atab_host_cache_get(hc[i], held) : NULL;
        if (!s)
            assert_int_equal(atab_last_error(), ATAB_ELIMIT);
        else
            assert_ptr_equal(s, held);
        made = s != NULL;
    }
    atab_get_stats(t, &st);
    if (made)
        hc_bytes = st.bytes - before;
    for (int i = 0; i < CACHES; i++)
        atab_host_cache_free(hc[i]);
    return made;
}

static void chunks_a_sweep_emptied_give_way_to_a_host_cache(void **state)
{
    (void)state;
    made_one_byte_short(NULL, host_cache_step, &hc_bytes, "a host cache");
}

/* The same for atab_foreach's list of a shard's atoms (past 128 of them,
** allocated from the table's allocator under the shard's lock): at a
** limit one byte short of that list while the chunks a sweep emptied are
** held, the visit is made. The kept atoms, of another size class than the
** swept ones (so they take none of their blocks back), all fall in one
** shard. */
enum { ONE_SHARD = 140 };

static int count_visit(void *ud, const atab_atom *a, uint32_t count)
{
    (void)a, (void)count;
    ++*(size_t *)ud;
    return 0;
}

static const atab_atom *one_shard[ONE_SHARD];

static int intern_one_shard(atab_table *t, const atab_atom *held)
{
    (void)held;
    char buf[64];
    int n = 0;
    for (long i = 0; n < ONE_SHARD; i++) {
        snprintf(buf, sizeof buf, "kept-in-one-shard-%06ld", i);
        if (atab__h_shard(atab__table_hash(t, buf, strlen(buf))) != 0)
            continue;
        assert_non_null(one_shard[n++] = atab_intern_cstr(t, buf));
    }
    return 1;
}

static int foreach_step(atab_table *t, const atab_atom *held)
{
    (void)held;
    size_t seen = 0;
    int rc = atab_foreach(t, count_visit, &seen);
    if (rc == ATAB_OK)
        assert_int_equal(seen, ONE_SHARD + 1);   /* and held, of another shard or this */
    else
        assert_int_equal(rc, ATAB_ELIMIT);
    assert_int_equal(atab_release_all(t, one_shard, ONE_SHARD), ATAB_OK);
    return rc == ATAB_OK;
}

static void chunks_a_sweep_emptied_give_way_to_atab_foreach(void **state)
{
    (void)state;
    static const size_t list = ONE_SHARD * 16;   /* life.c: seen_atom, 16 bytes */
    made_one_byte_short(intern_one_shard, foreach_step, &list, "atab_foreach");
}

/* A block's bytes are given back to the memory limit only once the block
** is back with the allocator (atab_options.memory_limit: the bytes the
** table requests from it). Were they given back first, another thread
** could be charged them, and allocate, while the old block is still out:
** the allocator would then hold more than the limit for the table. Here
** the free hook, on the long atom's free, has another thread intern a
** second long atom (with an uppercase byte, so its folded copy is
** allocated first, under no lock of the table) and waits until that
** thread allocated or gave up. */
enum { OVERLAP_LIMIT = 64 * 1024, OVERLAP_LEN = 40 * 1024 };

typedef struct overlap {
    atab_table *t;
    pthread_mutex_t m;
    size_t out, peak;   /* bytes out with the allocator, and the most */
    int armed, settled;
    pthread_t other;
    const atab_atom *got;
} overlap;

static __thread int ov_is_other;   /* set on the other thread */

static void *ov_alloc(void *ud, size_t size)
{
    overlap *v = ud;
    void *p = malloc(size);
    pthread_mutex_lock(&v->m);
    if (p && (v->out += size) > v->peak)
        v->peak = v->out;
    if (ov_is_other)
        __atomic_store_n(&v->settled, 1, __ATOMIC_RELEASE);   /* it allocated */
    pthread_mutex_unlock(&v->m);
    return p;
}

static void *ov_other(void *arg)
{
    overlap *v = arg;
    static char key[OVERLAP_LEN];
    ov_is_other = 1;
    memset(key, 'b', sizeof key);
    key[0] = 'B';
    v->got = atab_intern_lower(v->t, key, sizeof key);
    __atomic_store_n(&v->settled, 1, __ATOMIC_RELEASE);   /* or it gave up */
    return NULL;
}

static void ov_free(void *ud, void *p, size_t size)
{
    overlap *v = ud;
    if (v->armed == 1 && size > OVERLAP_LEN) {   /* the long atom's block */
        v->armed = 2;
        assert_int_equal(pthread_create(&v->other, NULL, ov_other, v), 0);
        while (!__atomic_load_n(&v->settled, __ATOMIC_ACQUIRE))
            sched_yield();
    }
    pthread_mutex_lock(&v->m);
    v->out -= size;
    pthread_mutex_unlock(&v->m);
    free(p);
}

static void a_freed_block_is_back_with_the_allocator_before_its_bytes_are_charged_again(void **state)
{
    (void)state;
    overlap v = {.m = PTHREAD_MUTEX_INITIALIZER};
    atab_allocator al = {ov_alloc, ov_free, NULL, &v};
    atab_options o = plain_options(&al, 0);
    o.memory_limit = OVERLAP_LIMIT;
    o.sweep_threshold = SIZE_MAX;   /* freed by atab_gc, on this thread */
    assert_non_null(v.t = atab_table_new(&o));
    static char key[OVERLAP_LEN];
    memset(key, 'a', sizeof key);
    const atab_atom *a = atab_intern(v.t, key, sizeof key);
    assert_non_null(a);
    assert_int_equal(atab_release(v.t, a), ATAB_OK);
    v.armed = 1;
    assert_int_equal(atab_gc(v.t), 1);
    assert_int_equal(v.armed, 2);
    assert_int_equal(pthread_join(v.other, NULL), 0);
    if (v.got)
        assert_int_equal(atab_release(v.t, v.got), ATAB_OK);
    assert_true(v.peak <= OVERLAP_LIMIT);
    atab_table_free(v.t);
    assert_int_equal(v.out, 0);
}

/* A thread's chunks grow to ATAB__CHUNK_BYTES (8 KB); where the memory
** limit refuses one that large, a smaller one is carved (down to 1 KB), so
** the limit's last kilobytes still take small atoms. A table with no limit
** shows where the thread takes an 8 KB chunk (its bytes grow by that much
** at one intern of a 200-byte atom, a block from a chunk); a table with
** the same seed and keys is limited to 4 KB more than it had just before
** that intern. Its interns go on past that point, until 300 in a row are
** refused: each key's shard then has free slots (each holds a few keys),
** so a refusal is the chunk's, and less room is left than 1 KB. */
enum { CARVE_KEY = 200, CARVE_MAX = 2000 };

static const atab_atom *carve_key(atab_table *t, int i)
{
    char buf[CARVE_KEY + 1];
    memset(buf, 'k', CARVE_KEY);
    int len = snprintf(buf, sizeof buf, "carved-%d-", i);
    buf[len] = 'k';   /* the key stays CARVE_KEY bytes long */
    return atab_intern(t, buf, CARVE_KEY);
}

static void the_last_room_under_a_memory_limit_is_carved_in_smaller_chunks(void **state)
{
    (void)state;
    counting_alloc c = {0};
    atab_allocator al = ca_allocator(&c);
    atab_options o = plain_options(&al, 7);
    atab_table *t = atab_table_new(&o);
    assert_non_null(t);
    size_t before = 0, limit = 0;
    int at = -1;
    for (int i = 0; i < CARVE_MAX && at < 0; i++) {
        assert_non_null(carve_key(t, i));
        if (c.bytes - before >= 8192 && c.bytes - before < 8192 + 512 && before > 32768)
            at = i, limit = before + 4096;
        before = c.bytes;
    }
    assert_true(at > 0);
    atab_table_free(t);
    assert_int_equal(c.live, 0);

    o.memory_limit = limit;
    assert_non_null(t = atab_table_new(&o));
    static const atab_atom *kept[CARVE_MAX];
    int n = 0, refused = 0;
    for (int i = 0; refused < 300 && i < CARVE_MAX; i++) {
        if ((kept[n] = carve_key(t, i)) != NULL)
            n++, refused = 0;
        else
            assert_int_equal(atab_last_error(), ATAB_ELIMIT), refused++;
    }
    assert_int_equal(refused, 300);
    assert_true(n > at);   /* past the 8 KB chunk the limit refused */
    atab_stats st;
    assert_int_equal(atab_get_stats(t, &st), ATAB_OK);
    assert_int_equal(st.bytes, c.bytes);
    assert_true(st.bytes <= limit);
    assert_true(limit - st.bytes < 1024);
    for (int i = 0; i < n; i++)
        assert_int_equal(atab_release(t, kept[i]), ATAB_OK);
    atab_table_free(t);
    assert_int_equal(c.live, 0);
}

/* Counts saturate: neither atab_ref nor the thread caches' deltas wrap,
** and a saturated atom is never freed. */
static void reference_counts_saturate_and_never_wrap(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    const atab_atom *a = atab_intern_cstr(f.t, "hot");
    /* white-box: the count just under the saturation point */
    __atomic_store_n(&((atab_atom *)a)->atab__refcnt, (uint32_t)ATAB__REF_SAT - 3,
                     __ATOMIC_RELAXED);
    for (int i = 0; i < 10; i++)
        assert_ptr_equal(atab_ref(a), a);
    uint32_t c = __atomic_load_n(&a->atab__refcnt, __ATOMIC_RELAXED);
    assert_true(c >= (uint32_t)ATAB__REF_SAT && c < 0x80000000u);   /* no wrap */
    for (int i = 0; i < 100; i++)   /* hits count in the thread cache */
        assert_ptr_equal(atab_lookup(f.t, "hot", 3), a);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(atab_release(f.t, a), ATAB_OK);
    atab_stats st;
    atab_get_stats(f.t, &st);   /* flushes the caches into the count */
    assert_int_equal(__atomic_load_n(&a->atab__refcnt, __ATOMIC_RELAXED), c);
    assert_int_equal(atab_gc(f.t), 0);
    assert_ptr_equal(atab_lookup(f.t, "hot", 3), a);
    assert_int_equal(st.misuse, 0);

    /* the same through the caches alone: a cached delta past the top */
    const atab_atom *b = atab_intern_cstr(f.t, "warm");
    __atomic_store_n(&((atab_atom *)b)->atab__refcnt, (uint32_t)ATAB__REF_SAT - 2,
                     __ATOMIC_RELAXED);
    for (int i = 0; i < 50; i++)
        atab_lookup(f.t, "warm", 4);
    atab_get_stats(f.t, &st);
    c = __atomic_load_n(&b->atab__refcnt, __ATOMIC_RELAXED);
    assert_true(c >= (uint32_t)ATAB__REF_SAT && c < 0x80000000u);
    for (int i = 0; i < 200; i++)
        atab_release(f.t, b);
    assert_int_equal(atab_gc(f.t), 0);
    assert_ptr_equal(atab_lookup(f.t, "warm", 4), b);
    teardown(&f);
}

typedef struct hot_thread {
    atab_table *t;
    int keep;   /* references this thread still holds when it exits */
} hot_thread;

/* Hits and releases "hot" through this thread's cache (spares taken and
** kept), and exits holding `keep` references: its spares go back at exit. */
static void *hit_hot(void *arg)
{
    hot_thread *h = arg;
    for (int i = 0; i < 5000; i++) {
        const atab_atom *a = atab_lookup(h->t, "hot", 3);
        atab_lookup(h->t, "hot", 3);
        atab_lookup(h->t, "hot", 3);
        atab_release(h->t, a);
        atab_release(h->t, a);
        atab_release(h->t, a);
    }
    for (int i = 0; i < h->keep; i++)
        atab_lookup(h->t, "hot", 3);
    return NULL;
}

/* Counts near and above 2^31, reached here by setting
** the count (white-box), then moved by several threads' cached spares:
** they saturate (a count at or past ATAB__REF_SAT never changes again and
** is never freed), never wrap, never overflow (UBSan), never misuse. */
static void counts_near_and_above_2_31_held_through_caches_saturate(void **state)
{
    (void)state;
    enum { THREADS = 4 };
    static const uint32_t starts[] = {ATAB__REF_SAT - 5, 0x7ffffff0u, 0x80000003u,
                                      ATAB__REF_DEAD - 3};
    for (size_t k = 0; k < sizeof starts / sizeof starts[0]; k++) {
        atab_table *t = plain_table(NULL);
        const atab_atom *a = atab_intern_cstr(t, "hot");
        __atomic_store_n(&((atab_atom *)a)->atab__refcnt, starts[k], __ATOMIC_RELAXED);
        pthread_t th[THREADS];
        hot_thread h[THREADS];
        for (int i = 0; i < THREADS; i++) {
            h[i].t = t;
            h[i].keep = 3 + i;
            assert_int_equal(pthread_create(&th[i], NULL, hit_hot, &h[i]), 0);
        }
        for (int i = 0; i < THREADS; i++)
            pthread_join(th[i], NULL);
        atab_stats st;
        atab_get_stats(t, &st);
        uint32_t c = __atomic_load_n(&a->atab__refcnt, __ATOMIC_RELAXED);
        assert_true(c >= ATAB__REF_SAT && c != ATAB__REF_DEAD);   /* saturated */
        if (starts[k] >= ATAB__REF_SAT)
            assert_int_equal(c, starts[k]);   /* never changes again */
        assert_int_equal(st.misuse, 0);
        assert_int_equal(st.unused, 0);
        for (int i = 0; i < 100; i++)
            assert_int_equal(atab_release(t, a), ATAB_OK);
        assert_int_equal(atab_gc(t), 0);   /* never freed */
        assert_ptr_equal(atab_lookup(t, "hot", 3), a);
        atab_table_free(t);
    }
}

/* Debug builds check every release: a second release of the last
** reference is ATAB_EREFS and a pointer that is not an atom of the table
** is ATAB_EINVAL, both before the count is touched. */
static void debug_builds_refuse_double_release_and_non_atoms(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    fixture f;
    setup(&f);
    const atab_atom *a = atab_intern_cstr(f.t, "twice");
    assert_int_equal(atab_release(f.t, a), ATAB_OK);
    snap s = take(&f);
    EXPECT_RC(atab_release(f.t, a), ATAB_EREFS);
    EXPECT_RC(atab_release(f.t, a), ATAB_EREFS);
    assert_int_equal(a->atab__refcnt, 0);   /* not driven below zero */
    s.st.misuse += 2;   /* the refused releases are counted, nothing else */
    unchanged(&f, s);

    /* look-alikes: a copy of a real atom at another address, and a header
    ** with bytes the table does not hold */
    struct { atab_atom h; char c[8]; } fake;
    memcpy(&fake, f.held[0], sizeof(atab_atom) + 6);
    EXPECT_RC(atab_release(f.t, &fake.h), ATAB_EINVAL);
    memcpy(fake.c, "ghost", 6);
    fake.h.atab__len_flags = 5u << ATAB__LEN_SHIFT;
    fake.h.atab__refcnt = 1;
    EXPECT_RC(atab_release(f.t, &fake.h), ATAB_EINVAL);
    assert_int_equal(fake.h.atab__refcnt, 1);   /* untouched */

    /* an atom of another table */
    atab_table *other = plain_table(NULL);
    const atab_atom *o = atab_intern_cstr(other, "alpha");
    EXPECT_RC(atab_release(f.t, o), ATAB_EINVAL);
    assert_int_equal(atab_release(other, o), ATAB_OK);
    atab_table_free(other);
    s.st.misuse += 3;   /* each pointer not an atom of f.t: counted, nothing else */
    unchanged(&f, s);
    teardown(&f);
#else
    skip();   /* release builds: see test_refcount (refused the same way) */
#endif
}

/* A shard at the largest size class (ATAB__MAX_CODE, 6,524,464 slots) that
** reaches its load limit cannot grow: each insert past it rebuilt the
** whole array into a new block of the same class (58 MB allocated, copied
** and retired per intern), and once the array was full the insert's walk
** past group B found no free slot and never ended, the shard's lock held.
** Keys made for one shard under a fixed seed (bench/flood.c) take it
** there. Now the shard fills as after a failed growth, and the intern that
** would take its last free slot is refused with ATAB_ENOMEM. About 6.5
** million interns and 240 MB: run where ATAB_BIG_SHARD=1, as `make test`
** sets it (not under valgrind, the sanitizers' meson runs or qemu). */
static long largest_allocs;
static void *largest_alloc(void *ud, size_t n)
{
    (void)ud;
    if (n == atab__code_bytes(ATAB__MAX_CODE))
        largest_allocs++;
    return malloc(n);
}
static void largest_free(void *ud, void *p, size_t n)
{
    (void)ud;
    (void)n;
    free(p);
}
static size_t largest_usable(void *ud, const void *p, size_t n)
{
    (void)ud;
    (void)p;
    return n;
}

static void a_shard_at_the_largest_class_fills_without_copying_its_array(void **state)
{
    (void)state;
    const char *big = getenv("ATAB_BIG_SHARD");
    if (!big || strcmp(big, "1") != 0)
        skip();
    atab_allocator al = {largest_alloc, largest_free, largest_usable, NULL};
    atab_options o = plain_options(&al, 42);
    o.sweep_threshold = SIZE_MAX;
    atab_table *t = atab_table_new(&o);
    assert_non_null(t);
    atab__shard *sh = &t->shards[0];
    char b[32];
    unsigned long long ctr = 0;
    long at_limit = -1, past = 0;
    char first[32] = "";
    const atab_atom *firsta = NULL;
    for (;;) {
        int l = snprintf(b, sizeof b, "%llx", ctr++);
        if (atab__hash_bytes(42, b, (size_t)l) >> (64 - ATAB__SHARD_BITS))
            continue;   /* shard 0's keys only */
        if (at_limit < 0 && sh->used >= sh->limit &&
            atab__code_of(*sh->arr) == ATAB__MAX_CODE)
            at_limit = largest_allocs;
        const atab_atom *a = atab_intern(t, b, (size_t)l);
        if (!a) {
            assert_int_equal(atab_last_error(), ATAB_ENOMEM);
            break;
        }
        if (!firsta)
            firsta = a, strcpy(first, b);
        if (at_limit >= 0 && ++past <= 5 && largest_allocs != at_limit) {
            print_error("intern %ld past the load limit allocated a largest-class array "
                        "again (%ld, was %ld)\n", past, largest_allocs, at_limit);
            fail();
        }
    }
    assert_true(at_limit >= 0);
    assert_int_equal(largest_allocs, at_limit);
    assert_int_equal(sh->used, atab__shard_cap(sh) - 1);   /* one slot left free */
    assert_null(atab_lookup(t, b, strlen(b)));   /* the refused key: absent, the probe ends */
    assert_int_equal(atab_last_error(), ATAB_OK);
    assert_true(atab_lookup(t, first, strlen(first)) == firsta);   /* the first: found */
    atab_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(null_table_or_string_at_every_entry),
        cmocka_unit_test(lengths_past_the_maximum_and_size_max),
        cmocka_unit_test(invalid_utf16_short_and_long),
        cmocka_unit_test(a_lookup_miss_leaves_no_stale_error),
        cmocka_unit_test(the_memory_limit_refuses_what_would_pass_it),
        cmocka_unit_test(an_intern_refused_its_first_chunk_leaves_the_bytes_as_they_were),
        cmocka_unit_test(a_refused_first_intern_keeps_at_most_its_chunk_at_every_limit),
        cmocka_unit_test(kept_blocks_give_way_to_new_atoms_at_the_memory_limit),
        cmocka_unit_test(kept_blocks_given_way_free_the_chunks_they_empty_for_a_long_atom),
        cmocka_unit_test(another_threads_kept_blocks_give_way_to_new_atoms_at_the_memory_limit),
        cmocka_unit_test(chunks_an_exited_thread_emptied_give_way_to_a_long_atom),
        cmocka_unit_test(chunks_left_empty_give_way_to_a_long_atom_of_a_thread_without_a_record),
        cmocka_unit_test(chunks_an_exited_thread_emptied_give_way_to_a_growing_shard),
        cmocka_unit_test(chunks_a_sweep_emptied_give_way_to_a_folded_copy),
        cmocka_unit_test(chunks_a_sweep_emptied_give_way_to_a_host_cache),
        cmocka_unit_test(chunks_a_sweep_emptied_give_way_to_atab_foreach),
        cmocka_unit_test(a_freed_block_is_back_with_the_allocator_before_its_bytes_are_charged_again),
        cmocka_unit_test(the_last_room_under_a_memory_limit_is_carved_in_smaller_chunks),
        cmocka_unit_test(reference_counts_saturate_and_never_wrap),
        cmocka_unit_test(counts_near_and_above_2_31_held_through_caches_saturate),
        cmocka_unit_test(debug_builds_refuse_double_release_and_non_atoms),
        cmocka_unit_test(a_shard_at_the_largest_class_fills_without_copying_its_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
