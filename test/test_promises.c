/* SPDX-License-Identifier: MIT */
/*
** test_promises.c - four promises of the lifecycle held against a hostile
** host, each in the schedule that would break it, most driven by pause
** points (src/hooks.h): a double release that takes another thread's spare
** references never frees the atom under that thread unreported, and a
** table with ATAB_CHECKED_REFS refuses it; a request the memory limit
** refuses is never seen by other threads' allocations; atab_foreach's
** references never leave an unused atom that no sweep would find; atab_gc
** leaves no queue block behind, and a record it holds makes none. Run under ASan and TSan in CI, where a
** free too early is a report.
*/
#include "test_hooks.h"

enum { ROLE_A = 1, ROLE_B = 2, ROLE_C = 3 };

/* Debug builds have no records: no spares, no queues to test. */
static void need_sections(void)
{
#ifdef ATAB_DEBUG
    skip();
#endif
}

/* ---- a thread that runs steps on demand ----
** The test posts a step; the thread runs it and says it is done, and stays
** alive (its record and cache with it) until told to quit. */

typedef struct stepper {
    worker w;
    sem_t go, done;
    int step;                  /* what to run next; 0: quit */
    void (*run)(void *ctx, int step);
    void *ctx;
} stepper;

static void *stepper_main(void *arg)
{
    stepper *s = arg;
    for (;;) {
        while (sem_wait(&s->go) != 0)
            ;
        int step = __atomic_load_n(&s->step, __ATOMIC_ACQUIRE);
        if (!step)
            return NULL;
        s->run(s->ctx, step);
        sem_post(&s->done);
    }
}

static void stepper_start(stepper *s, int role, void (*run)(void *, int), void *ctx)
{
    sem_init(&s->go, 0, 0);
    sem_init(&s->done, 0, 0);
    s->run = run;
    s->ctx = ctx;
    worker_start(&s->w, role, stepper_main, s);
}

/* Starts a step without waiting for it (it may stop at a pause). */
static void step_post(stepper *s, int step)
{
    __atomic_store_n(&s->step, step, __ATOMIC_RELEASE);
    sem_post(&s->go);
}

static void step_wait(stepper *s)
{
    struct timespec ts = deadline_in(WAIT_S * 1000L);
    int rc;
    while ((rc = sem_timedwait(&s->done, &ts)) != 0 && errno == EINTR)
        ;
    if (rc != 0)
        hang("a step did not finish");
}

static void step_run(stepper *s, int step)
{
    step_post(s, step);
    step_wait(s);
}

static void stepper_quit(stepper *s)
{
    step_post(s, 0);
    worker_join(&s->w);
    sem_destroy(&s->go);
    sem_destroy(&s->done);
}

/* ---- 1: a double release that takes another thread's spares ---- */

typedef struct spare_case {
    atab_table *t;
    const char *key;
    const atab_atom *got;   /* B's atom */
    int rc;
} spare_case;

enum { B_INTERN_RELEASE = 1, B_INTERN, B_READ_RELEASE };

static void spare_steps(void *ctx, int step)
{
    spare_case *c = ctx;
    if (step == B_INTERN_RELEASE) {   /* B keeps its reference as a spare */
        const atab_atom *a = atab_intern_cstr(c->t, c->key);
        c->rc = atab_release(c->t, a);
    } else if (step == B_INTERN) {    /* takes its spare back */
        c->got = atab_intern_cstr(c->t, c->key);
    } else {                          /* reads what it holds, then lets go */
        c->rc = c->got && atab_len(c->got) == strlen(c->key) &&
                        memcmp(atab_chars(c->got), c->key, strlen(c->key)) == 0
                    ? atab_release(c->t, c->got)
                    : -100;
    }
}

/* The schedule: main interns X; B interns X and releases it (a
** spare); main releases X (a spare too: nobody holds X) and releases it
** again, the misuse. Then, per `order`: B interns X and atab_gc runs
** (0), or a queue sweep runs first, at the double release (threshold 2:
** main's queue is full then), which must leave X (a cache kept spares of
** it), and B interns after it (1). B must end up holding the very atom,
** never freed under it; the misuse is counted; in
** a checked table (order 0 only: with a queue, main's first release would
** sweep X away) the double release itself is refused. */
static void spare_schedule(int order, int checked)
{
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    spare_case c = {0};
    stepper b;
    atab_stats st;
    pauses_reset();
    atab_options o = plain_options(&al, 7);
    o.sweep_threshold = order == 1 ? 2 : SIZE_MAX;
    o.flags |= checked ? ATAB_CHECKED_REFS : 0;
    c.t = atab_table_new(&o);
    c.key = "x-released-twice";
    stepper_start(&b, ROLE_B, spare_steps, &c);
    const atab_atom *x = atab_intern_cstr(c.t, c.key);
    int x_blk = wa_watch(&wa, x);
    if (order == 1) {   /* main's queue gets one atom first: X fills it */
        const atab_atom *w = atab_intern_cstr(c.t, "w-queued-first");
        assert_int_equal(atab_release(c.t, w), ATAB_OK);
    }
    step_run(&b, B_INTERN_RELEASE);
    assert_int_equal(c.rc, ATAB_OK);
    assert_int_equal(atab_release(c.t, x), ATAB_OK);   /* main's own */
    int rc = atab_release(c.t, x);                     /* the double release */
    if (checked)
        assert_int_equal(rc, ATAB_EREFS);
    step_run(&b, B_INTERN);
    assert_ptr_equal(c.got, x);   /* the atom it kept a spare of, not a new one */
    atab_gc(c.t);
    assert_int_equal(wa_frees(&wa, x_blk), 0);   /* B holds it */
    assert_int_equal(atab__count(x), 1);
    atab_get_stats(c.t, &st);
    assert_int_equal(st.misuse, 1);
    step_run(&b, B_READ_RELEASE);
    assert_int_equal(c.rc, ATAB_OK);
    stepper_quit(&b);
    atab_gc(c.t);
    assert_int_equal(wa_frees(&wa, x_blk), 1);   /* unheld now: freed */
    atab_table_free(c.t);
    assert_int_equal(wa.live, 0);
}

static void double_release_taking_a_spare_is_caught_when_its_thread_interns_again(void **state)
{
    (void)state;
    need_sections();
    spare_schedule(0, 0);
}

static void double_release_taking_a_spare_survives_the_queue_sweep(void **state)
{
    (void)state;
    need_sections();
    spare_schedule(1, 0);
}

static void checked_table_refuses_the_double_release(void **state)
{
    (void)state;
    spare_schedule(0, 1);
}

/* B stops inside its hit, in its section before it takes its spare
** ("cache:entry": its cache's entry matched the key, a key past the
** short-key path); main releases twice; B's take then finds the count
** short of its spare, and keeps the atom. */
static void double_release_while_the_spare_holder_is_in_its_hit(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    spare_case c = {0};
    stepper b;
    atab_stats st;
    pauses_reset();
    c.t = race_table(&al);
    c.key = "x-released-twice-a-key-longer-than-short";
    stepper_start(&b, ROLE_B, spare_steps, &c);
    const atab_atom *x = atab_intern_cstr(c.t, c.key);
    int x_blk = wa_watch(&wa, x);
    step_run(&b, B_INTERN_RELEASE);
    assert_int_equal(atab_release(c.t, x), ATAB_OK);
    pause_at *p = pause_arm("cache:entry", ROLE_B, c.t);
    step_post(&b, B_INTERN);
    pause_wait(p);
    assert_int_equal(atab_release(c.t, x), ATAB_OK);   /* the double release */
    pause_release(p);
    step_wait(&b);
    assert_ptr_equal(c.got, x);
    atab_gc(c.t);
    assert_int_equal(wa_frees(&wa, x_blk), 0);
    atab_get_stats(c.t, &st);
    assert_int_equal(st.misuse, 1);
    step_run(&b, B_READ_RELEASE);
    assert_int_equal(c.rc, ATAB_OK);
    stepper_quit(&b);
    assert_int_equal(atab_gc(c.t), 1);
    atab_table_free(c.t);
    assert_int_equal(wa.live, 0);
}

/* A full sweep F (atab_gc) stops between two records' flushes
** ("flush:record", at main's record; B's, made after it, comes first).
** B then interns X and releases it, and main releases X twice. Until F's
** kills are done B's record stays off its cache: B's release drops its
** reference from the count instead of keeping it there as a spare (a
** spare that main's second release would take off the count, with F
** then freeing X while B's entry names it). So the count shows the double
** release: refused and counted; F frees X, unheld; B's next intern of X
** makes a new atom, whole. */
static void gc_steps(void *ctx, int step)
{
    (void)step;
    spare_case *c = ctx;
    c->rc = (int)atab_gc(c->t);
}

static void double_release_during_a_full_sweeps_kills_is_refused(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    spare_case c = {0}, g = {0};
    stepper b, f;
    atab_stats st;
    pauses_reset();
    c.t = g.t = race_table(&al);
    c.key = "x-released-twice";
    const atab_atom *x = atab_intern_cstr(c.t, c.key);   /* main's record first */
    int x_blk = wa_watch(&wa, x);
    stepper_start(&b, ROLE_B, spare_steps, &c);
    const char *key = c.key;
    c.key = "b-own-key";
    step_run(&b, B_INTERN_RELEASE);   /* B's record, listed before main's */
    c.key = key;
    pause_at *p = pause_arm("flush:record", ROLE_A, my_rec(c.t));
    stepper_start(&f, ROLE_A, gc_steps, &g);
    step_post(&f, 1);
    pause_wait(p);   /* B's record flushed, main's next */
    step_run(&b, B_INTERN_RELEASE);
    assert_int_equal(c.rc, ATAB_OK);
    assert_int_equal(atab__count(x), 1);   /* B's reference went back to the count */
    assert_int_equal(atab_release(c.t, x), ATAB_OK);      /* main's own */
    assert_int_equal(atab_release(c.t, x), ATAB_EREFS);   /* the double release */
    pause_release(p);
    step_wait(&f);
    assert_true(g.rc >= 1);
    assert_int_equal(wa_frees(&wa, x_blk), 1);   /* unheld: freed by F */
    atab_get_stats(c.t, &st);
    assert_int_equal(st.misuse, 1);
    step_run(&b, B_INTERN);
    assert_non_null(c.got);
    assert_int_equal(atab__count(c.got), 1);
    step_run(&b, B_READ_RELEASE);
    assert_int_equal(c.rc, ATAB_OK);
    stepper_quit(&b);
    stepper_quit(&f);
    atab_table_free(c.t);
    assert_int_equal(wa.live, 0);
}

/* Main keeps spares of X in its cache (a lookup's refill) besides the one
** reference it holds, and nobody else holds X. A full sweep F stops while
** it holds main's record ("flush:record"), before it gives main's spares
** back; main's releases then go to the count, its cache being F's. Its
** last reference's release is taken, and its double release must be
** refused as it is with no sweep under way: before, the release to the
** count saw only the count, which still held main's spares, so the double
** release took one of them (ATAB_OK), F's give-back found the count short
** (a misuse, counted) and X was kept for good, at a count no entry holds. */
static void double_release_while_a_sweep_holds_this_thread_s_spares_is_refused(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    spare_case g = {0};
    stepper f;
    atab_stats st;
    pauses_reset();
    g.t = race_table(&al);
    const char *key = "x-spared-by-main";
    const atab_atom *x = atab_intern_cstr(g.t, key);
    int x_blk = wa_watch(&wa, x);
    assert_ptr_equal(atab_lookup(g.t, key, strlen(key)), x);   /* main's entry */
    assert_ptr_equal(atab_lookup(g.t, key, strlen(key)), x);   /* its refill: spares */
    assert_int_equal(atab_release(g.t, x), ATAB_OK);   /* kept as spares */
    assert_int_equal(atab_release(g.t, x), ATAB_OK);
    assert_true(atab__count(x) > 1);   /* main's one reference and its spares */
    pause_at *p = pause_arm("flush:record", ROLE_A, my_rec(g.t));
    stepper_start(&f, ROLE_A, gc_steps, &g);
    step_post(&f, 1);
    pause_wait(p);   /* F holds main's record, its spares not given back yet */
    assert_int_equal(atab_release(g.t, x), ATAB_OK);      /* main's last reference */
    assert_int_equal(atab_release(g.t, x), ATAB_EREFS);   /* the double release */
    assert_int_equal(atab_last_error(), ATAB_EREFS);
    pause_release(p);
    step_wait(&f);
    assert_int_equal(g.rc, 1);
    assert_int_equal(wa_frees(&wa, x_blk), 1);   /* unheld: freed by F */
    atab_get_stats(g.t, &st);
    assert_int_equal(st.misuse, 1);
    assert_int_equal(st.atoms, 0);
    stepper_quit(&f);
    atab_table_free(g.t);
    assert_int_equal(wa.live, 0);
}

/* Another table's atom that its own table's holders hold, released to t
** while a full sweep F of t holds this thread's record ("flush:record"):
** refused (ATAB_EINVAL, counted, the count untouched), as it is with no
** sweep under way. Before, the release went to the count unchecked and took
** one of those holders' references (3 became 2). */
static void another_tables_atom_released_while_a_sweep_holds_the_record_is_refused(void **state)
{
    (void)state;
    need_sections();
    spare_case g = {0};
    stepper f;
    atab_stats st;
    pauses_reset();
    atab_table *t1 = race_table(NULL);
    g.t = race_table(NULL);
    const atab_atom *a = atab_intern_cstr(t1, "held-in-t1");
    assert_ptr_equal(atab_ref(a), a);
    assert_ptr_equal(atab_ref(a), a);   /* t1's holders hold 3 */
    const atab_atom *b = atab_intern_cstr(g.t, "main-s-record-on-t");
    pause_at *p = pause_arm("flush:record", ROLE_A, my_rec(g.t));
    stepper_start(&f, ROLE_A, gc_steps, &g);
    step_post(&f, 1);
    pause_wait(p);   /* F holds main's record on t */
    assert_int_equal(atab_release(g.t, a), ATAB_EINVAL);
    assert_int_equal(atab_last_error(), ATAB_EINVAL);
    assert_int_equal(atab__count(a), 3);
    assert_int_equal(atab_release(g.t, b), ATAB_OK);   /* t's own, as before */
    pause_release(p);
    step_wait(&f);
    atab_get_stats(g.t, &st);
    assert_int_equal(st.misuse, 1);
    stepper_quit(&f);
    for (int i = 0; i < 3; i++)
        assert_int_equal(atab_release(t1, a), ATAB_OK);
    assert_int_equal(atab_gc(t1), 1);
    atab_table_free(t1);
    atab_table_free(g.t);
}

/* The same double release while F is paused in its walk ("sweep:kill", at
** an unused atom Y of a shard it walks before X's) and another thread S
** asks for the table's stats, whose flush of its own must leave F's hold
** on the records alone: else B's release keeps a spare there, main's
** double release takes it, and F's walk frees X under B's entry. */
static void *stats_main(void *arg)
{
    atab_stats st;
    atab_get_stats(((spare_case *)arg)->t, &st);
    return NULL;
}

static void stats_during_a_full_sweeps_walk_leave_its_hold(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    spare_case c = {0}, g = {0};
    stepper b, f;
    worker sw;
    char xk[32], yk[32];
    pauses_reset();
    c.t = g.t = race_table(&al);
    unsigned xs = 0;
    for (int i = 0; xs == 0; i++) {   /* a shard with one before it */
        snprintf(xk, sizeof xk, "x-released-twice-%d", i);
        xs = shard_of_key(c.t, xk);
    }
    for (int i = 0;; i++) {   /* a key of a shard before it */
        snprintf(yk, sizeof yk, "y-unused-%d", i);
        if (shard_of_key(c.t, yk) < xs)
            break;
    }
    c.key = xk;
    const atab_atom *x = atab_intern_cstr(c.t, xk);   /* main's record first */
    int x_blk = wa_watch(&wa, x);
    const atab_atom *y = atab_intern_cstr(c.t, yk);
    assert_int_equal(atab_release(c.t, y), ATAB_OK);   /* unused: the walk kills it */
    stepper_start(&b, ROLE_B, spare_steps, &c);
    c.key = "b-own-key";
    step_run(&b, B_INTERN_RELEASE);
    c.key = xk;
    atab__rec *mine = my_rec(c.t);
    pause_at *pk = pause_arm("sweep:kill", ROLE_A, y);
    pause_at *ps = pause_arm("flush:record", ROLE_C, mine);
    stepper_start(&f, ROLE_A, gc_steps, &g);
    step_post(&f, 1);
    pause_wait(pk);   /* F's flush is done; its walk stops at Y, X's shard ahead */
    worker_start(&sw, ROLE_C, stats_main, &c);
    pause_wait(ps);   /* S's flush at main's record, its last */
    pause_release(ps);
    assert_true(worker_held(&sw));   /* S past its flush, waiting at Y's shard */
    assert_int_equal(__atomic_load_n(&mine->flush_req, __ATOMIC_ACQUIRE), 1);
    step_run(&b, B_INTERN_RELEASE);
    assert_int_equal(atab__count(x), 1);   /* B's reference went back to the count */
    assert_int_equal(atab_release(c.t, x), ATAB_OK);
    assert_int_equal(atab_release(c.t, x), ATAB_EREFS);   /* the double release */
    pause_release(pk);
    step_wait(&f);
    worker_join(&sw);
    assert_int_equal(wa_frees(&wa, x_blk), 1);   /* unheld: freed by F */
    atab_stats st;
    atab_get_stats(c.t, &st);
    assert_int_equal(st.misuse, 1);
    stepper_quit(&b);
    stepper_quit(&f);
    atab_table_free(c.t);
    assert_int_equal(wa.live, 0);
}

/* The same promise where B's spares come from its hits: B's first hit of
** X makes its cache's entry and marks X SPARED in the same CAS (asserted
** before any release could mark it), its second refills the entry with
** ATAB__SPARE_TAKE references, and a release puts one more there. Main then releases X once more than it
** holds for every one of B's spares and references: X's count reaches 0
** on main's queue, which is full and swept. The sweep must leave X, whose
** block B's entry still names; B's next intern finds the spares stolen
** (a misuse) and takes the very atom again. Of B's two references the
** misuse took one, so B's second release is refused, and nothing is
** freed until B has let go. */
typedef struct hit_case {
    atab_table *t;
    const char *key;
    const atab_atom *got, *again;
    int rc, rc2;
} hit_case;

enum { H_FIRST = 1, H_MORE, H_AGAIN, H_LET_GO };

static void hit_spare_steps(void *ctx, int step)
{
    hit_case *c = ctx;
    if (step == H_FIRST) {   /* its entry, no spares yet */
        c->got = atab_intern_cstr(c->t, c->key);
    } else if (step == H_MORE) {   /* spares from a refill, then one more */
        c->rc = atab_release(c->t, atab_intern_cstr(c->t, c->key));
    } else if (step == H_AGAIN) {
        c->again = atab_intern_cstr(c->t, c->key);
    } else {
        size_t n = strlen(c->key);
        int ok = c->got && c->again && atab_len(c->got) == n &&
                 memcmp(atab_chars(c->got), c->key, n) == 0;
        c->rc = ok ? atab_release(c->t, c->got) : -100;
        c->rc2 = ok ? atab_release(c->t, c->again) : -100;
    }
}

static void spares_from_hits_survive_a_foreign_over_release_and_the_queue_sweep(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    hit_case c = {0};
    stepper b;
    atab_stats st;
    pauses_reset();
    atab_options o = plain_options(&al, 7);
    o.sweep_threshold = 2;   /* main's queue: full at its second atom */
    c.t = atab_table_new(&o);
    c.key = "x-spared-by-hits";
    stepper_start(&b, ROLE_B, hit_spare_steps, &c);
    const atab_atom *x = atab_intern_cstr(c.t, c.key);
    int x_blk = wa_watch(&wa, x);
    const atab_atom *w = atab_intern_cstr(c.t, "w-queued-first");
    assert_int_equal(atab_release(c.t, w), ATAB_OK);
    step_run(&b, H_FIRST);
    assert_ptr_equal(c.got, x);
    assert_int_equal(*atab__count_word(x), 2 | ATAB__REF_SPARED);
    step_run(&b, H_MORE);
    assert_int_equal(c.rc, ATAB_OK);
    uint32_t held = atab__count(x);   /* main's 1, B's 1 and B's spares */
    assert_int_equal(held, 2 + ATAB__SPARE_TAKE);
    for (uint32_t i = 0; i < held; i++)   /* main's own, then B's, misused */
        assert_int_equal(atab_release(c.t, x), ATAB_OK);
    assert_int_equal(atab__count(x), 0);
    assert_int_equal(wa_frees(&wa, x_blk), 0);   /* the queue sweep left it */
    step_run(&b, H_AGAIN);
    assert_ptr_equal(c.again, x);
    atab_gc(c.t);
    assert_int_equal(wa_frees(&wa, x_blk), 0);   /* B holds it */
    atab_get_stats(c.t, &st);
    assert_true(st.misuse >= 1);
    step_run(&b, H_LET_GO);
    assert_int_equal(c.rc, ATAB_OK);
    assert_int_equal(c.rc2, ATAB_EREFS);   /* the reference main's misuse took */
    stepper_quit(&b);
    atab_gc(c.t);
    assert_int_equal(wa_frees(&wa, x_blk), 1);   /* unheld now: freed */
    atab_table_free(c.t);
    assert_int_equal(wa.live, 0);
}

/* ---- 2: a refused request is never seen by other threads ---- */

typedef struct limit_case {
    atab_table *t;
    char *big;
    size_t big_len;
    const atab_atom *got;
    atab_status err;
} limit_case;

enum { A_WARM = 1, A_INTERN_BIG };

static void limit_steps(void *ctx, int step)
{
    limit_case *c = ctx;
    if (step == A_WARM) {   /* A's record, made before the room is measured */
        assert_int_equal(atab_release(c->t, atab_intern_cstr(c->t, "warm-a")), ATAB_OK);
    } else {
        c->got = atab_intern(c->t, c->big, c->big_len);
        c->err = atab_last_error();
    }
}

static unsigned shard_of_bytes(atab_table *t, const char *s, size_t len)
{
    return atab__h_shard(atab__hash_bytes(t->seed, s, len));   /* any length */
}

/* A table 4 KB under its limit. Thread A interns a key that passes the
** limit, and stops once refused ("charge:refused", its shard's lock held);
** meanwhile the main thread's 47-byte interns (in other shards) fit, and
** the table's bytes never count A's request. */
static void small_interns_fit_while_another_thread_is_refused(void **state)
{
    (void)state;
    counting_alloc ca = {0};
    atab_allocator al = ca_allocator(&ca);
    limit_case c = {0};
    stepper a;
    pauses_reset();
    atab_options o = plain_options(&al, 7);
    o.memory_limit = 64 * 1024;
    c.t = atab_table_new(&o);
    stepper_start(&a, ROLE_A, limit_steps, &c);
    step_run(&a, A_WARM);
    const atab_atom *warm = atab_intern_cstr(c.t, "warm");   /* this thread's record */
    size_t ballast_len = o.memory_limit - atab__bytes(c.t) - 4096 - 9;
    char *ballast = malloc(ballast_len);
    memset(ballast, 'b', ballast_len);
    const atab_atom *bal = atab_intern(c.t, ballast, ballast_len);
    assert_non_null(bal);
    size_t room = o.memory_limit - atab__bytes(c.t);
    assert_true(room > 3000 && room <= 4096);
    c.big_len = room + 2000;   /* refused: its atom alone passes the limit */
    c.big = malloc(c.big_len);
    memset(c.big, 'a', c.big_len);
    unsigned big_shard = shard_of_bytes(c.t, c.big, c.big_len);
    pause_at *p = pause_arm("charge:refused", ROLE_A, c.t);
    step_post(&a, A_INTERN_BIG);
    pause_wait(p);
    assert_int_equal(atab__bytes(c.t), o.memory_limit - room);   /* nothing of A's */
    for (int i = 0, n = 0; n < 8; i++) {   /* the room holds them */
        char key[48];
        snprintf(key, sizeof key, "%046d", i);
        if (shard_of_bytes(c.t, key, 46) == big_shard)
            continue;   /* A holds that shard's lock */
        const atab_atom *s = atab_intern(c.t, key, 46);
        assert_non_null(s);
        assert_int_equal(atab_release(c.t, s), ATAB_OK);
        assert_true(atab__bytes(c.t) <= o.memory_limit);
        n++;
    }
    pause_release(p);
    step_wait(&a);
    assert_null(c.got);
    assert_int_equal(c.err, ATAB_ELIMIT);
    stepper_quit(&a);
    assert_int_equal(atab_release(c.t, bal), ATAB_OK);
    assert_int_equal(atab_release(c.t, warm), ATAB_OK);
    atab_table_free(c.t);
    free(ballast);
    free(c.big);
    assert_int_equal(ca.live, 0);
}

/* ---- 3: atab_foreach's references never orphan an atom ---- */

/* Atoms at an unqueued 0 beyond what t->unused counts: atoms that no
** queue sweep and no threshold sweep would ever free (0 when none). */
static void count_plain_zero(void *ud, const atab_atom *a)
{
    size_t *n = ud;
    if (!atab_is_static(a) && (__atomic_load_n(atab__count_word(a), __ATOMIC_RELAXED) & ~ATAB__REF_SPARED) == 0)
        ++*n;
}

static size_t orphans(atab_table *t)
{
    size_t zeros = 0, counted = __atomic_load_n(&t->unused, __ATOMIC_RELAXED);
    atab__table_visit_shards(t, NULL, count_plain_zero, &zeros);
    return zeros > counted ? zeros - counted : 0;
}

typedef struct walk_case {
    atab_table *t;
    const atab_atom *target;   /* the atom the schedule's fn stops at */
    unsigned round, calls;
    sem_t in_fn, go_on;   /* the schedule's: fn stops on its first call */
    int stop_in_fn;
} walk_case;

/* Releases a new atom of its own from inside the walk: with a queue one
** short of full, the release sweeps the queue while the walk holds some
** of its atoms. */
static int release_inside(void *ud, const atab_atom *a, uint32_t count)
{
    walk_case *c = ud;
    char key[32];
    (void)a; (void)count;
    if (c->calls++)
        return 0;
    snprintf(key, sizeof key, "inside-%u", c->round);
    assert_int_equal(atab_release(c->t, atab_intern_cstr(c->t, key)), ATAB_OK);
    return 0;
}

/* Rounds of: 63 new atoms released (a queue of 64 one short), then a walk
** whose fn releases one more. Every atom at 0 stays on a queue or counted,
** so memory stays bounded without atab_gc. */
static void foreach_releasing_inside_fn_leaves_no_atom_unswept(void **state)
{
    (void)state;
    counting_alloc ca = {0};
    atab_allocator al = ca_allocator(&ca);
    walk_case c = {0};
    size_t most = 0;
    c.t = sweeping_table(&al, 3, 64);
    for (c.round = 0; c.round < 300; c.round++) {
        for (int i = 0; i < 63; i++) {
            char key[32];
            snprintf(key, sizeof key, "r%u-k%d", c.round, i);
            assert_int_equal(atab_release(c.t, atab_intern_cstr(c.t, key)), ATAB_OK);
        }
        c.calls = 0;
        assert_int_equal(atab_foreach(c.t, release_inside, &c), ATAB_OK);
        assert_int_equal(orphans(c.t), 0);
        if (atab_count(c.t) > most)
            most = atab_count(c.t);
    }
    assert_true(most <= 4 * 64);   /* a queue, the threshold, and a walk's worth */
    atab_table_free(c.t);
    assert_int_equal(ca.live, 0);
}

/* Runs a full sweep from inside the walk, on its first call. */
static int gc_inside(void *ud, const atab_atom *a, uint32_t count)
{
    walk_case *c = ud;
    (void)a;
    assert_int_equal(count, 0);   /* every atom was unused before the walk */
    if (!c->calls++)
        atab_gc(c->t);   /* frees the other shards' atoms; the walk holds these */
    return 0;
}

/* Atoms at 0, counted towards t->unused, that a walk holds while a full
** sweep runs (which starts t->unused again from 0, and cannot free them):
** the walk's drop leaves each at 0 counted again, or no threshold sweep
** would ever free it. */
static void a_full_sweep_inside_fn_leaves_the_walks_atoms_counted(void **state)
{
    (void)state;
    counting_alloc ca = {0};
    atab_allocator al = ca_allocator(&ca);
    walk_case c = {0};
    c.t = sweeping_table(&al, 3, SIZE_MAX);
    for (int i = 0; i < 200; i++) {
        char key[32];
        snprintf(key, sizeof key, "walked-%d", i);
        assert_int_equal(atab_release(c.t, atab_intern_cstr(c.t, key)), ATAB_OK);
    }
    assert_int_equal(atab_foreach(c.t, gc_inside, &c), ATAB_OK);
    assert_true(c.calls > 0 && atab_count(c.t) > 0);   /* the first shard's, kept */
    assert_true(atab_count(c.t) < 200);                /* the others swept */
    assert_int_equal(orphans(c.t), 0);
    atab_stats st;
    assert_int_equal(atab_get_stats(c.t, &st), ATAB_OK);
    assert_int_equal(st.unused, st.atoms);
    assert_int_equal(atab_gc(c.t), st.atoms);
    atab_table_free(c.t);
    assert_int_equal(ca.live, 0);
}

static int stop_in_fn(void *ud, const atab_atom *a, uint32_t count)
{
    walk_case *c = ud;
    (void)count;
    if (a == c->target && !c->calls++) {
        sem_post(&c->in_fn);
        while (sem_wait(&c->go_on) != 0)
            ;
    }
    return 0;
}

static void *do_walk(void *arg)
{
    walk_case *c = arg;
    atab_foreach(c->t, stop_in_fn, c);
    return NULL;
}

typedef struct queue_owner {
    atab_table *t;
    const atab_atom *x;
} queue_owner;

enum { A_QUEUE_X = 1, A_FILL_QUEUE };

static void queue_owner_steps(void *ctx, int step)
{
    queue_owner *o = ctx;
    if (step == A_QUEUE_X) {   /* X on A's queue (room for 2) */
        o->x = atab_intern_cstr(o->t, "x-on-a-queue");
        assert_int_equal(atab_release(o->t, o->x), ATAB_OK);
    } else {                   /* a new atom fills it: A sweeps it */
        const atab_atom *y = atab_intern_cstr(o->t, "y-fills-the-queue");
        assert_int_equal(atab_release(o->t, y), ATAB_OK);
    }
}

/* A walker W stops in fn, holding X, which is on thread A's queue; A's
** queue sweep takes X off, live; W then drops its reference: X at 0 must
** be counted for a sweep (it is on no queue now). */
static void queue_sweep_while_the_walk_holds_a_queued_atom(void **state)
{
    (void)state;
    need_sections();
    counting_alloc ca = {0};
    atab_allocator al = ca_allocator(&ca);
    walk_case c = {0};
    queue_owner o = {0};
    stepper a;
    worker w;
    pauses_reset();
    c.t = o.t = sweeping_table(&al, 3, 2);
    sem_init(&c.in_fn, 0, 0);
    sem_init(&c.go_on, 0, 0);
    stepper_start(&a, ROLE_A, queue_owner_steps, &o);
    step_run(&a, A_QUEUE_X);
    assert_int_equal(atab__count(o.x), 0);
    c.target = o.x;
    worker_start(&w, ROLE_B, do_walk, &c);
    while (sem_wait(&c.in_fn) != 0)
        ;
    assert_int_equal(atab__count(o.x), 1);   /* the walk's */
    step_run(&a, A_FILL_QUEUE);              /* X leaves A's queue live */
    sem_post(&c.go_on);
    worker_join(&w);
    assert_int_equal(atab__count(o.x), 0);
    assert_int_equal(orphans(c.t), 0);
    assert_true(atab_gc(c.t) >= 1);
    stepper_quit(&a);
    sem_destroy(&c.in_fn);
    sem_destroy(&c.go_on);
    atab_table_free(c.t);
    assert_int_equal(ca.live, 0);
}

static void *queue_five_and_exit(void *arg)
{
    atab_table *t = arg;
    for (int i = 0; i < 5; i++) {
        char key[32];
        snprintf(key, sizeof key, "left-at-exit-%d", i);
        assert_int_equal(atab_release(t, atab_intern_cstr(t, key)), ATAB_OK);
    }
    return NULL;
}

/* A thread exits with atoms on its queue (the default threshold: its
** queue holds 2,048, and its zeros go to t->unused 32 at a time): its
** exit takes them off, and they stay counted for a sweep. */
static void a_thread_exiting_with_queued_atoms_leaves_them_counted(void **state)
{
    (void)state;
    need_sections();
    counting_alloc ca = {0};
    atab_allocator al = ca_allocator(&ca);
    worker w;
    atab_table *t = sweeping_table(&al, 3, 0);
    pauses_reset();
    worker_start(&w, ROLE_A, queue_five_and_exit, t);
    worker_join(&w);
    assert_int_equal(atab_count(t), 5);
    assert_int_equal(orphans(t), 0);
    atab_table_free(t);
    assert_int_equal(ca.live, 0);
}

/* ---- 4: atab_gc leaves no queue block behind ---- */

static void *do_gc_only(void *arg)
{
    atab_gc(arg);
    return NULL;
}

typedef struct park_case {
    atab_table *t;
    const atab_atom *w, *x;
    void *queue;               /* A's queue block */
    atab__rec *rec;            /* A's record */
} park_case;

enum { A_MAKE_QUEUE = 1, A_SWEEP };

static void park_steps(void *ctx, int step)
{
    park_case *c = ctx;
    if (step == A_MAKE_QUEUE) {   /* W queued (room for 2): the queue made */
        c->w = atab_intern_cstr(c->t, "w-queued-first");
        c->x = atab_intern_cstr(c->t, "x-fills-the-queue");
        assert_int_equal(atab_release(c->t, c->w), ATAB_OK);
        c->rec = my_rec(c->t);
        c->queue = atab__queue_block(c->rec->queue);
    } else {                      /* X fills it: A sweeps its queue */
        assert_int_equal(atab_release(c->t, c->x), ATAB_OK);
    }
}

/* A's queue sweep stops before its first kill ("queue:kill"); the main
** thread revives both atoms, so the sweep frees nothing; atab_gc (G) stops
** while it holds A's record ("flush:record"); A's sweep then ends and
** finds its record held. Once G is done, A's queue block must be gone. */
static void queue_put_back_while_gc_holds_the_record_leaves_no_block(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    park_case c = {0};
    stepper a;
    worker g;
    pauses_reset();
    c.t = sweeping_table(&al, 7, 2);
    stepper_start(&a, ROLE_A, park_steps, &c);
    step_run(&a, A_MAKE_QUEUE);
    assert_non_null(c.queue);
    int q_blk = wa_watch(&wa, c.queue);
    pause_at *pk = pause_arm("queue:kill", ROLE_A, NULL);
    step_post(&a, A_SWEEP);
    pause_wait(pk);
    assert_ptr_equal(atab_intern_cstr(c.t, "w-queued-first"), c.w);     /* revived */
    assert_ptr_equal(atab_intern_cstr(c.t, "x-fills-the-queue"), c.x);
    pause_at *pf = pause_arm("flush:record", ROLE_B, c.rec);
    worker_start(&g, ROLE_B, do_gc_only, c.t);
    pause_wait(pf);
    pause_release(pk);
    step_wait(&a);   /* its sweep ended while G holds its record */
    pause_release(pf);
    worker_join(&g);
    assert_int_equal(wa_frees(&wa, q_blk), 1);
    atab_stats st;
    atab_get_stats(c.t, &st);
    assert_int_equal(st.atoms, 2);
    assert_int_equal(st.misuse, 0);
    stepper_quit(&a);
    assert_int_equal(atab_release(c.t, c.w), ATAB_OK);
    assert_int_equal(atab_release(c.t, c.x), ATAB_OK);
    atab_table_free(c.t);
    assert_int_equal(wa.live, 0);
}

/* ---- 1b: a double release of an atom a full sweep killed ---- */

typedef struct dead_case {
    atab_table *t;
    const atab_atom *x, *y;
    int rc;
} dead_case;

enum { D_INTERN = 1, D_AFTER_KILL, D_RELEASE };

#define DEAD_KEY "x-killed-then-released"

static void dead_steps(void *ctx, int step)
{
    dead_case *c = ctx;
    if (step == D_INTERN) {   /* its cache's entry for X made, then left with no spare */
        c->x = atab_intern_cstr(c->t, DEAD_KEY);
        assert_ptr_equal(atab_intern_cstr(c->t, DEAD_KEY), c->x);
        assert_int_equal(atab_release(c->t, c->x), ATAB_OK);
        assert_int_equal(atab_release(c->t, c->x), ATAB_OK);
    } else if (step == D_AFTER_KILL) {   /* the double release, then the key again */
        c->rc = atab_release(c->t, c->x);
        c->y = atab_intern_cstr(c->t, DEAD_KEY);
    } else {
        assert_int_equal(atab_release(c->t, c->y), ATAB_OK);
    }
}

/* B interns X twice and releases it twice: X is unused, and B's cache has
** had an entry for it. A full sweep G (which empties that entry) kills X
** and stops before its grace period ("sweep:free"), its hold on the
** caches over. B releases X again: a double release of a killed atom,
** which must be refused and counted, never kept as a spare. B's next
** intern makes a new atom, the one the table holds. */
static void double_release_of_an_atom_a_full_sweep_killed_is_refused(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    dead_case c = {0};
    stepper b;
    worker g;
    atab_stats st;
    pauses_reset();
    c.t = race_table(&al);
    stepper_start(&b, ROLE_B, dead_steps, &c);
    step_run(&b, D_INTERN);
    pause_at *p = pause_arm("sweep:free", ROLE_A, c.t);
    worker_start(&g, ROLE_A, do_gc_only, c.t);
    pause_wait(p);
    assert_null(atab_lookup(c.t, DEAD_KEY, strlen(DEAD_KEY)));   /* killed, unlinked */
    step_run(&b, D_AFTER_KILL);
    pause_release(p);
    worker_join(&g);
    assert_int_equal(c.rc, ATAB_EREFS);
    assert_non_null(c.y);
    assert_ptr_equal(atab_lookup(c.t, DEAD_KEY, strlen(DEAD_KEY)), c.y);   /* the table's */
    assert_int_equal(atab__count(c.y), 2);   /* B's and the lookup's */
    assert_int_equal(atab_release(c.t, c.y), ATAB_OK);
    atab_get_stats(c.t, &st);
    assert_int_equal(st.misuse, 1);
    step_run(&b, D_RELEASE);
    stepper_quit(&b);
    assert_int_equal(atab_gc(c.t), 1);
    atab_table_free(c.t);
    assert_int_equal(wa.live, 0);
}

/* ---- 5: a record a full sweep holds makes no queue block ---- */

#define CHURN_N 64

typedef struct churn_case {
    atab_table *t;
    const atab_atom *x[2], *a[CHURN_N];
    atab__rec *rec;            /* A's record */
} churn_case;

enum { C_INTERN = 1, C_FILL, C_RELEASE };

static void churn_steps(void *ctx, int step)
{
    churn_case *c = ctx;
    if (step == C_INTERN) {   /* x0 queued: the queue made, with room for x1 */
        c->x[0] = atab_intern_cstr(c->t, "x0-queued-first");
        c->x[1] = atab_intern_cstr(c->t, "x1-fills-the-queue");
        for (int i = 0; i < CHURN_N; i++) {
            char name[32];
            snprintf(name, sizeof name, "churned-%d", i);
            c->a[i] = atab_intern_cstr(c->t, name);
            assert_non_null(c->a[i]);
        }
        assert_int_equal(atab_release(c->t, c->x[0]), ATAB_OK);
        c->rec = my_rec(c->t);
    } else if (step == C_FILL) {   /* the full queue's sweep: held by then */
        assert_int_equal(atab_release(c->t, c->x[1]), ATAB_OK);
    } else {
        for (int i = 0; i < CHURN_N; i++)
            assert_int_equal(atab_release(c->t, c->a[i]), ATAB_OK);
    }
}

/* A fills its queue, and its sweep stops before it takes it ("queue:take").
** atab_gc (G) takes A's queue and stops at the main thread's record
** ("flush:record"), which comes after A's on the table's list, so that A's
** record stays held. A's sweep, let go, finds it held and stays due. A's
** releases then leave CHURN_N atoms unused: each sees its sweep due, and
** no queue may be made (and freed at once) for it while G holds A. After
** G, a second atab_gc finds every one of them. */
static void a_held_record_makes_no_queue_block_at_each_release(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    churn_case c = {0};
    stepper a;
    worker g;
    pauses_reset();
    c.t = sweeping_table(&al, 7, 2);
    const atab_atom *m = atab_intern_cstr(c.t, "the-main-threads-record");
    assert_non_null(m);
    stepper_start(&a, ROLE_A, churn_steps, &c);   /* A's record goes before main's */
    step_run(&a, C_INTERN);
    assert_non_null(c.rec->queue);
    pause_at *pt = pause_arm("queue:take", ROLE_A, c.rec);
    step_post(&a, C_FILL);
    pause_wait(pt);
    pause_at *pf = pause_arm("flush:record", ROLE_B, my_rec(c.t));
    worker_start(&g, ROLE_B, do_gc_only, c.t);
    pause_wait(pf);
    pause_release(pt);
    step_wait(&a);
    assert_null(c.rec->queue);
    long before = __atomic_load_n(&wa.allocs, __ATOMIC_RELAXED);
    step_run(&a, C_RELEASE);
    assert_int_equal(__atomic_load_n(&wa.allocs, __ATOMIC_RELAXED) - before, 0);
    pause_release(pf);
    worker_join(&g);
    atab_gc(c.t);
    atab_stats st;
    atab_get_stats(c.t, &st);
    assert_int_equal(st.atoms, 1);   /* m */
    assert_int_equal(st.misuse, 0);
    stepper_quit(&a);
    assert_int_equal(atab_release(c.t, m), ATAB_OK);
    atab_table_free(c.t);
    assert_int_equal(wa.live, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(double_release_taking_a_spare_is_caught_when_its_thread_interns_again),
        cmocka_unit_test(double_release_taking_a_spare_survives_the_queue_sweep),
        cmocka_unit_test(checked_table_refuses_the_double_release),
        cmocka_unit_test(double_release_while_the_spare_holder_is_in_its_hit),
        cmocka_unit_test(double_release_during_a_full_sweeps_kills_is_refused),
        cmocka_unit_test(double_release_while_a_sweep_holds_this_thread_s_spares_is_refused),
        cmocka_unit_test(another_tables_atom_released_while_a_sweep_holds_the_record_is_refused),
        cmocka_unit_test(stats_during_a_full_sweeps_walk_leave_its_hold),
        cmocka_unit_test(double_release_of_an_atom_a_full_sweep_killed_is_refused),
        cmocka_unit_test(spares_from_hits_survive_a_foreign_over_release_and_the_queue_sweep),
        cmocka_unit_test(small_interns_fit_while_another_thread_is_refused),
        cmocka_unit_test(foreach_releasing_inside_fn_leaves_no_atom_unswept),
        cmocka_unit_test(a_full_sweep_inside_fn_leaves_the_walks_atoms_counted),
        cmocka_unit_test(queue_sweep_while_the_walk_holds_a_queued_atom),
        cmocka_unit_test(a_thread_exiting_with_queued_atoms_leaves_them_counted),
        cmocka_unit_test(queue_put_back_while_gc_holds_the_record_leaves_no_block),
        cmocka_unit_test(a_held_record_makes_no_queue_block_at_each_release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
