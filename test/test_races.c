/* SPDX-License-Identifier: MIT */
/*
** test_races.c - every interleaving of two threads through the pause
** points of each lifecycle protocol (src/hooks.h): handle release against
** table free, revive against sweep, thread exit against flush and sweep,
** grow against read, kick against read. Each schedule holds thread A at its point, runs
** thread B to completion or to its own point, releases them in a given
** order, then checks the invariants: exactly one destroy, nothing freed
** that is held or still read, counts exact (atab_get_stats), identities
** kept. Run under ASan in CI, where a free too early is a report.
*/
#include "test_hooks.h"

enum { ROLE_A = 1, ROLE_B = 2, ROLE_C = 3 };

static void setup_hooks(void)
{
    pauses_reset();
}

/* Debug builds have no records: every path takes the locks, and the
** protocols of sections and spares are not there to test. */
static void need_sections(void)
{
#ifdef ATAB_DEBUG
    skip();
#endif
}

/* ---- handle release vs table free ---- */

typedef struct handle_case {
    atab_table *t;
    const atab_atom *a;
    int rc;
} handle_case;

static void *do_external_release(void *arg)
{
    handle_case *c = arg;
    c->rc = atab_external_release(c->t, c->a);
    return NULL;
}

static void *do_table_free(void *arg)
{
    handle_case *c = arg;
    atab_table_free(c->t);
    return NULL;
}

/* The releasing thread R stops after dropping the handle's reference,
** before the handle count; atab_table_free (F) stops before marking the
** table closing. `free_first`: F reaches its point before R; `r_goes_first`:
** R's step on the count comes first. Whoever goes second destroys. */
static void handle_schedule(int free_first, int r_goes_first)
{
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    handle_case c = {0};
    worker r, f;
    setup_hooks();
    c.t = race_table(&al);
    c.a = atab_intern_cstr(c.t, "held-by-a-handle");
    assert_ptr_equal(atab_external_acquire(c.t, c.a), c.a);
    assert_int_equal(atab_release(c.t, c.a), ATAB_OK);   /* only the handle holds it */
    int table_blk = wa_watch(&wa, c.t->raw), atom_blk = wa_watch(&wa, c.a);
    pause_at *pr = pause_arm("external_release:dropped", ROLE_A, c.t);
    pause_at *pf = pause_arm("table_free:closing", ROLE_B, c.t);
    if (free_first) {
        worker_start(&f, ROLE_B, do_table_free, &c);
        pause_wait(pf);
        assert_int_equal(wa_frees(&wa, atom_blk), 0);   /* its gc: the handle holds it */
        worker_start(&r, ROLE_A, do_external_release, &c);
        pause_wait(pr);
    } else {
        worker_start(&r, ROLE_A, do_external_release, &c);
        pause_wait(pr);
        worker_start(&f, ROLE_B, do_table_free, &c);
        pause_wait(pf);
        assert_int_equal(wa_frees(&wa, atom_blk), 1);   /* its gc freed the unheld atom */
    }
    assert_int_equal(atab_external_handles(c.t), 1);
    assert_int_equal(wa_frees(&wa, table_blk), 0);
    worker *first = r_goes_first ? &r : &f, *second = r_goes_first ? &f : &r;
    pause_release(r_goes_first ? pr : pf);
    worker_join(first);
    assert_int_equal(wa_frees(&wa, table_blk), 0);   /* the second one destroys */
    pause_release(r_goes_first ? pf : pr);
    worker_join(second);
    assert_int_equal(c.rc, ATAB_OK);
    assert_int_equal(wa_frees(&wa, table_blk), 1);   /* exactly once */
    assert_int_equal(wa_frees(&wa, atom_blk), 1);
    assert_int_equal(wa.live, 0);
    assert_int_equal(wa.allocs, wa.frees);
}

/* R stopped after its drop; atab_table_free runs up to its mark; R's
** decrement then sees the mark and destroys (the old code read
** t->closing after the decrement: a use-after-free). */
static void release_paused_after_its_drop_while_free_runs(void **state)
{
    (void)state;
    handle_schedule(0, 0);
}

static void release_paused_after_its_drop_then_goes_before_free(void **state)
{
    (void)state;
    handle_schedule(0, 1);
}

/* atab_table_free stopped before its mark; the last release runs to the
** end (it must not destroy); the mark then finds no handle and destroys. */
static void free_paused_before_closing_while_the_last_release_runs(void **state)
{
    (void)state;
    handle_schedule(1, 1);
}

static void free_paused_before_closing_then_goes_before_the_release(void **state)
{
    (void)state;
    handle_schedule(1, 0);
}

/* ---- revive vs sweep ---- */

typedef struct revive_case {
    atab_table *t;
    const char *key;
    const atab_atom *got;
    size_t freed;
} revive_case;

static void *do_intern(void *arg)
{
    revive_case *c = arg;
    c->got = atab_intern_cstr(c->t, c->key);
    return NULL;
}

static void *do_gc(void *arg)
{
    revive_case *c = arg;
    c->freed = atab_gc(c->t);
    return NULL;
}

typedef struct revive_env {
    watch_alloc wa;
    atab_allocator al;
    revive_case c;
    const atab_atom *a;
    int a_blk;
} revive_env;

/* An atom at count 0 (its spare flushed back), not yet swept. */
static void revive_setup(revive_env *e, const char *key)
{
    memset(e, 0, sizeof *e);
    setup_hooks();
    e->al = wa_allocator(&e->wa);
    e->c.t = race_table(&e->al);
    e->c.key = key;
    e->a = atab_intern_cstr(e->c.t, key);
    assert_int_equal(atab_release(e->c.t, e->a), ATAB_OK);
    atab_stats st;
    atab_get_stats(e->c.t, &st);
    assert_int_equal(st.unused, 1);
    assert_int_equal(atab__count(e->a), 0);
    e->a_blk = wa_watch(&e->wa, e->a);
}

/* One atom, held once (by the reviver), nothing misused. */
static void revive_check(revive_env *e, const atab_atom *want)
{
    atab_stats st;
    assert_non_null(e->c.got);
    assert_int_equal(atab_len(e->c.got), strlen(e->c.key));
    assert_memory_equal(atab_chars(e->c.got), e->c.key, strlen(e->c.key));
    if (want)
        assert_ptr_equal(e->c.got, want);
    atab_get_stats(e->c.t, &st);
    assert_int_equal(st.atoms, 1);
    assert_int_equal(st.unused, 0);
    assert_int_equal(st.misuse, 0);
    assert_int_equal(atab__count(e->c.got), 1);
    assert_int_equal(atab_gc(e->c.t), 0);   /* held: never freed */
    assert_int_equal(atab_release(e->c.t, e->c.got), ATAB_OK);
    assert_int_equal(atab_gc(e->c.t), 1);
    atab_table_free(e->c.t);
    assert_int_equal(e->wa.live, 0);
}

/* The reviver (V) stops inside its section, before its CAS; the sweep (S)
** cannot reach its kill: its flush waits for V's section. V revives; the
** sweep then finds the atom held. */
static void revive_in_section_holds_the_sweep_at_its_flush(const char *key)
{
    revive_env e;
    worker v, s;
    revive_setup(&e, key);
    pause_at *pv = pause_arm("revive:cas", ROLE_A, e.a);
    pause_at *ps = pause_arm("sweep:kill", ROLE_B, e.a);
    worker_start(&v, ROLE_A, do_intern, &e.c);
    pause_wait(pv);
    worker_start(&s, ROLE_B, do_gc, &e.c);
    assert_false(pause_reached_soon(ps));   /* held at the flush */
    assert_true(worker_held(&s));
    pause_release(pv);
    worker_join(&v);
    worker_join(&s);
    assert_int_equal(e.c.freed, 0);
    assert_int_equal(wa_frees(&e.wa, e.a_blk), 0);
    revive_check(&e, e.a);   /* revived: the same atom */
}

/* S has seen count 0 and stops before its kill; V then stops before its
** CAS. `sweep_first`: S kills first, then waits for V's section before
** freeing; V's CAS fails and it makes a new atom. Else V revives first and
** the kill fails. */
static void sweep_at_kill_and_revive_at_cas(const char *key, int sweep_first)
{
    revive_env e;
    worker v, s;
    revive_setup(&e, key);
    pause_at *pv = pause_arm("revive:cas", ROLE_A, e.a);
    pause_at *ps = pause_arm("sweep:kill", ROLE_B, e.a);
    worker_start(&s, ROLE_B, do_gc, &e.c);
    pause_wait(ps);
    worker_start(&v, ROLE_A, do_intern, &e.c);
    pause_wait(pv);
    if (sweep_first) {
        pause_release(ps);
        assert_true(worker_held(&s));   /* in its grace period, for V */
        assert_int_equal(wa_frees(&e.wa, e.a_blk), 0);
        assert_int_equal(atab__count(e.a), ATAB__REF_DEAD);
        long allocs = e.wa.allocs;
        pause_release(pv);
        worker_join(&v);
        worker_join(&s);
        assert_int_equal(e.c.freed, 1);
        assert_int_equal(wa_frees(&e.wa, e.a_blk), 1);   /* killed: freed once */
        assert_true(e.wa.allocs > allocs);               /* V made a new atom */
        revive_check(&e, NULL);
    } else {
        pause_release(pv);
        worker_join(&v);
        assert_ptr_equal(e.c.got, e.a);
        pause_release(ps);
        worker_join(&s);
        assert_int_equal(e.c.freed, 0);   /* the kill lost to the revival */
        assert_int_equal(wa_frees(&e.wa, e.a_blk), 0);
        revive_check(&e, e.a);
    }
}

/* S killed and unlinked the atom and stops before its grace period; V
** interns the string: a new atom (the old one not yet freed), then S frees
** the old one. */
static void sweep_at_free_while_the_string_is_interned(const char *key)
{
    revive_env e;
    worker v, s;
    revive_setup(&e, key);
    pause_at *ps = pause_arm("sweep:free", ROLE_B, e.c.t);
    worker_start(&s, ROLE_B, do_gc, &e.c);
    pause_wait(ps);
    worker_start(&v, ROLE_A, do_intern, &e.c);
    worker_join(&v);
    assert_int_equal(wa_frees(&e.wa, e.a_blk), 0);
    assert_ptr_not_equal(e.c.got, e.a);   /* a new atom beside the dying one */
    pause_release(ps);
    worker_join(&s);
    assert_int_equal(e.c.freed, 1);
    assert_int_equal(wa_frees(&e.wa, e.a_blk), 1);
    revive_check(&e, NULL);
}

/* The short-key path (inline probe) and the general one (past
** ATAB__SHORT_KEY bytes). */
static const char *const revive_keys[] = {"rv-short", "revive-a-rather-longer-key-0123456789"};

static void revive_paused_before_cas_holds_a_sweep_at_its_flush(void **state)
{
    (void)state;
    need_sections();
    for (int i = 0; i < 2; i++)
        revive_in_section_holds_the_sweep_at_its_flush(revive_keys[i]);
}

static void sweep_paused_before_kill_then_kills_first_and_revive_makes_a_new_atom(void **state)
{
    (void)state;
    need_sections();
    for (int i = 0; i < 2; i++)
        sweep_at_kill_and_revive_at_cas(revive_keys[i], 1);
}

static void sweep_paused_before_kill_while_a_thread_revives_keeps_the_atom(void **state)
{
    (void)state;
    need_sections();
    for (int i = 0; i < 2; i++)
        sweep_at_kill_and_revive_at_cas(revive_keys[i], 0);
}

static void sweep_paused_before_its_grace_period_while_the_string_is_interned_again(void **state)
{
    (void)state;
    need_sections();
    for (int i = 0; i < 2; i++)
        sweep_at_free_while_the_string_is_interned(revive_keys[i]);
}

/* ---- revive vs a thread sweeping its queue ---- */

/* Q interns X and Y and releases both: its queue (2 atoms: the sweep
** threshold) is full, and it sweeps it, X first. */
typedef struct queue_case {
    atab_table *t;
    const atab_atom *x;   /* Q's X (atomic) */
} queue_case;

static void *do_queue_and_sweep(void *arg)
{
    queue_case *c = arg;
    const atab_atom *x = atab_intern_cstr(c->t, "queued-x");
    const atab_atom *y = atab_intern_cstr(c->t, "queued-y");
    __atomic_store_n(&c->x, x, __ATOMIC_RELEASE);
    atab_release(c->t, x);
    atab_release(c->t, y);   /* the queue is full: swept here */
    return NULL;
}

static void *do_intern_x(void *arg)
{
    queue_case *c = arg;
    return (void *)atab_intern_cstr(c->t, "queued-x");
}

/* Q stops under X's shard lock before its kill (`at_kill`), or after it
** killed and unlinked X, before its grace period; meanwhile V interns X's
** string and gets there without waiting for Q: X itself, revived (Q then
** only takes it off its queue), or a new atom (Q then frees X). */
static void queue_sweep_paused_while_a_reader_interns(int at_kill)
{
    watch_alloc wa;
    memset(&wa, 0, sizeof wa);
    setup_hooks();
    atab_allocator al = wa_allocator(&wa);
    queue_case c = {sweeping_table(&al, 7, 2), NULL};   /* a queue of 2 */
    assert_non_null(c.t);
    worker q, v;
    pause_at *pq = pause_arm(at_kill ? "queue:kill" : "queue:free", ROLE_B, NULL);
    worker_start(&q, ROLE_B, do_queue_and_sweep, &c);
    pause_wait(pq);
    const atab_atom *x = __atomic_load_n(&c.x, __ATOMIC_ACQUIRE);
    int x_blk = wa_watch(&wa, x);
    worker_start(&v, ROLE_A, do_intern_x, &c);
    const atab_atom *got = worker_join(&v);   /* the sweep held: V is not */
    assert_non_null(got);
    assert_true(worker_held(&q));
    assert_int_equal(wa_frees(&wa, x_blk), 0);
    if (at_kill)
        assert_ptr_equal(got, x);   /* revived under the sweeper's nose */
    else
        assert_ptr_not_equal(got, x);   /* unlinked: a new atom beside it */
    pause_release(pq);
    worker_join(&q);
    assert_int_equal(wa_frees(&wa, x_blk), at_kill ? 0 : 1);
    atab_stats st;
    atab_get_stats(c.t, &st);
    assert_int_equal(st.atoms, 1);   /* X (or its successor), held by V */
    assert_int_equal(st.misuse, 0);
    assert_int_equal(atab__count(got), 1);
    assert_int_equal(atab_release(c.t, got), ATAB_OK);
    atab_gc(c.t);
    assert_int_equal(atab_count(c.t), 0);
    atab_table_free(c.t);
    assert_int_equal(wa.live, 0);
}

static void queue_sweep_paused_before_kill_while_a_reader_revives_keeps_the_atom(void **state)
{
    (void)state;
    need_sections();
    queue_sweep_paused_while_a_reader_interns(1);
}

static void queue_sweep_paused_before_its_grace_period_while_the_string_is_interned(void **state)
{
    (void)state;
    need_sections();
    queue_sweep_paused_while_a_reader_interns(0);
}

/* ---- queue sweeps: blocks reused, grace periods shared ----
** Each case has Q, a thread with a queue of 2, intern X ("queued-x", 8
** bytes) and Y (another size class), and release both when told: its
** queue is full and swept, X killed and unlinked. The main thread holds H
** ("held-h"), so Q is not alone on the table, and its sweep leaves X's
** block waiting for a grace period (sweep.c) and runs none. V, a reader,
** finds X or H and stops in its section before it takes its reference. */
typedef struct share_case {
    atab_table *t;
    const atab_atom *x, *z, *n1, *n2;   /* atomic */
    int swept;                          /* Q's first sweep is done (atomic) */
    sem_t go, go2;
    const atab_atom *h;                 /* the main thread's */
    int x_blk;                          /* X's block, watched */
    worker q;
    watch_alloc wa;                     /* the table's allocator */
    atab_allocator al;
} share_case;

static void sem_take(sem_t *s)
{
    while (sem_wait(s) != 0)
        ;
}

/* Waits (yielding) for a worker to publish *p. */
static const atab_atom *published(const atab_atom *const *p)
{
    const atab_atom *a;
    for (long i = 0; !(a = __atomic_load_n(p, __ATOMIC_ACQUIRE)); i++) {
        if (i > 20L * 1000 * 1000)
            hang("a worker's atom");
        sched_yield();
    }
    return a;
}

/* Q's start: X and Y made, X published; then its first sweep when told. */
static void q_first_sweep(share_case *c)
{
    const atab_atom *x = atab_intern_cstr(c->t, "queued-x");
    const atab_atom *y = atab_intern_cstr(c->t, "queued-y-of-another-class");
    __atomic_store_n(&c->x, x, __ATOMIC_RELEASE);
    sem_take(&c->go);
    atab_release(c->t, x);
    atab_release(c->t, y);   /* swept */
}

/* Q's end: when told, its next sweep (a, then an atom of another class),
** then two new 8-byte atoms, published. */
static void q_second_sweep(share_case *c, const atab_atom *a)
{
    sem_take(&c->go2);
    atab_release(c->t, a);
    atab_release(c->t, atab_intern_cstr(c->t, "queued-w-of-another-class"));   /* swept */
    __atomic_store_n(&c->n1, atab_intern_cstr(c->t, "queued-1"), __ATOMIC_RELEASE);
    __atomic_store_n(&c->n2, atab_intern_cstr(c->t, "queued-2"), __ATOMIC_RELEASE);
}

/* Between its sweeps, Q makes Z ("queued-z", X's size class): X's block
** must not make it while X waits. */
static void *do_queue_sweep_then_reuse(void *arg)
{
    share_case *c = arg;
    q_first_sweep(c);
    const atab_atom *z = atab_intern_cstr(c->t, "queued-z");
    __atomic_store_n(&c->z, z, __ATOMIC_RELEASE);
    q_second_sweep(c, z);
    return NULL;
}

/* Between its sweeps, Q says its first one is done. */
static void *do_share_queue(void *arg)
{
    share_case *c = arg;
    q_first_sweep(c);
    __atomic_store_n(&c->swept, 1, __ATOMIC_RELEASE);
    q_second_sweep(c, atab_intern_cstr(c->t, "queued-v-of-a-third-class"));
    return NULL;
}

static void *do_intern_held(void *arg)
{
    share_case *c = arg;
    return (void *)atab_intern_cstr(c->t, "held-h");
}

static void *do_intern_queued_x(void *arg)
{
    share_case *c = arg;
    return (void *)atab_intern_cstr(c->t, "queued-x");
}

static void *do_synchronize(void *arg)
{
    atab__synchronize(((share_case *)arg)->t);
    return NULL;
}

/* A table with queues of 2, H held by this thread, and Q started on
** q_fn; returns X once Q has made it (its block watched). */
static const atab_atom *share_start(share_case *c, void *(*q_fn)(void *))
{
    memset(c, 0, sizeof *c);
    setup_hooks();
    c->al = wa_allocator(&c->wa);
    sem_init(&c->go, 0, 0);
    sem_init(&c->go2, 0, 0);
    c->t = sweeping_table(&c->al, 7, 2);   /* a queue of 2 */
    assert_non_null(c->t);
    c->h = atab_intern_cstr(c->t, "held-h");
    worker_start(&c->q, ROLE_B, q_fn, c);
    const atab_atom *x = published(&c->x);
    c->x_blk = wa_watch(&c->wa, x);
    return x;
}

/* Waits until a sweep has killed a (its count REF_DEAD); a's block stays
** while a reader's section holds its address. */
static void wait_killed(const atab_atom *a)
{
    for (long ms = 0; __atomic_load_n(atab__count_word(a), __ATOMIC_ACQUIRE) != ATAB__REF_DEAD;
         ms++) {
        if (ms >= WAIT_S * 1000L)
            hang("an atom was not killed");
        usleep(1000);
    }
}

/* Lets Q make its first sweep, and waits for it. */
static void share_first_sweep(share_case *c)
{
    sem_post(&c->go);
    while (!__atomic_load_n(&c->swept, __ATOMIC_ACQUIRE))
        sched_yield();
}

/* The end of a case: releases H, what V got and `more` (or NULL); then
** the table is swept, with nothing left, and freed with every block back. */
static void share_finish(share_case *c, const atab_atom *got, const atab_atom *more)
{
    assert_int_equal(atab_release(c->t, got), ATAB_OK);
    assert_int_equal(atab_release(c->t, c->h), ATAB_OK);
    if (more)
        assert_int_equal(atab_release(c->t, more), ATAB_OK);
    if (c->n1) {
        assert_int_equal(atab_release(c->t, c->n1), ATAB_OK);
        assert_int_equal(atab_release(c->t, c->n2), ATAB_OK);
    }
    atab_gc(c->t);
    assert_int_equal(atab_count(c->t), 0);
    atab_table_free(c->t);
    assert_int_equal(c->wa.live, 0);
    sem_destroy(&c->go);
    sem_destroy(&c->go2);
}

/* V found X and stops in its section before taking its reference. Q's
** queue sweep kills X and goes on without waiting, X's block left
** waiting: Q's next atom of its size does not get it. Q's next sweep,
** whose batch before no grace period has served, runs one, which waits for
** V. V's CAS meets the kill, V makes a new "queued-x", and only then do
** Q's next atoms of that length get X's block: no reader ever sees a
** reused block as the atom it found. */
static void queue_sweep_reuses_a_block_only_after_the_reader_that_found_it_left(void **state)
{
    (void)state;
    need_sections();
    share_case c;
    const atab_atom *x = share_start(&c, do_queue_sweep_then_reuse);
    worker v;
    pause_at *pv = pause_arm("revive:cas", ROLE_A, x);
    worker_start(&v, ROLE_A, do_intern_queued_x, &c);
    pause_wait(pv);          /* V holds X's address in its section */
    sem_post(&c.go);
    const atab_atom *z = published(&c.z);   /* the sweep did not wait for V */
    assert_int_equal(atab__count(x), ATAB__REF_DEAD);
    assert_ptr_not_equal(z, x);             /* X's block waits */
    sem_post(&c.go2);
    assert_true(worker_held(&c.q));   /* Q's grace period waits for V's section */
    assert_null(__atomic_load_n(&c.n1, __ATOMIC_ACQUIRE));
    assert_int_equal(wa_frees(&c.wa, c.x_blk), 0);
    pause_release(pv);
    const atab_atom *got = worker_join(&v);
    worker_join(&c.q);
    assert_non_null(got);
    assert_ptr_not_equal(got, x);   /* V's CAS met the kill: a new atom */
    assert_string_equal(atab_chars(got), "queued-x");
    assert_int_equal(atab__count(got), 1);
    assert_true(c.n1 == x || c.n2 == x);   /* X's block kept for Q's next atoms */
    assert_string_equal(atab_chars(c.n1), "queued-1");
    assert_string_equal(atab_chars(c.n2), "queued-2");
    assert_int_equal(wa_frees(&c.wa, c.x_blk), 0);   /* kept, never freed meanwhile */
    assert_ptr_equal(atab_lookup(c.t, "queued-x", 8), got);
    share_finish(&c, got, got);   /* V's and the lookup's */
}

/* After Q's first sweep left X waiting, another thread runs a grace
** period to its end. V then stops in its section (H's reference). Q's next
** sweep finds X's batch served: it keeps X's block for its next atoms and
** leaves its own batch waiting, with no grace period of its own, so it
** never waits for V, who began after. */
static void a_grace_period_another_thread_ran_serves_the_waiting_batch(void **state)
{
    (void)state;
    need_sections();
    share_case c;
    const atab_atom *x = share_start(&c, do_share_queue);
    worker v, r;
    share_first_sweep(&c);
    assert_int_equal(atab__count(x), ATAB__REF_DEAD);   /* unlinked, waiting */
    worker_start(&r, ROLE_A, do_synchronize, &c);
    worker_join(&r);
    pause_at *pv = pause_arm("revive:cas", ROLE_A, c.h);
    worker_start(&v, ROLE_A, do_intern_held, &c);
    pause_wait(pv);   /* V in its section, begun after that grace period */
    sem_post(&c.go2);
    published(&c.n2);   /* Q's sweep did not wait for V (its exit will: the
                           batch it left waiting then has a grace period) */
    assert_true(c.n1 == x || c.n2 == x);   /* X's block, kept */
    assert_int_equal(wa_frees(&c.wa, c.x_blk), 0);
    pause_release(pv);
    worker_join(&c.q);
    const atab_atom *got = worker_join(&v);
    assert_ptr_equal(got, c.h);
    share_finish(&c, got, NULL);
}

/* A grace period R began before Q's first sweep unlinked X stops after its
** wait ("gp:served"). V then finds X and stops in its section. Q's sweep
** leaves X waiting, and R ends: it began too early to serve X. Q's next
** sweep must run a grace period of its own, which waits for V. */
static void a_grace_period_begun_before_the_unlink_does_not_serve_it(void **state)
{
    (void)state;
    need_sections();
    share_case c;
    const atab_atom *x = share_start(&c, do_share_queue);
    worker v, r;
    pause_at *pr = pause_arm("gp:served", ROLE_C, c.t);
    worker_start(&r, ROLE_C, do_synchronize, &c);
    pause_wait(pr);   /* R waited for nobody: V is not in a section yet */
    pause_at *pv = pause_arm("revive:cas", ROLE_A, x);
    worker_start(&v, ROLE_A, do_intern_queued_x, &c);
    pause_wait(pv);   /* V holds X's address in its section */
    share_first_sweep(&c);
    assert_int_equal(atab__count(x), ATAB__REF_DEAD);
    pause_release(pr);
    worker_join(&r);
    sem_post(&c.go2);
    assert_true(worker_held(&c.q));   /* its own grace period waits for V */
    assert_int_equal(wa_frees(&c.wa, c.x_blk), 0);
    assert_null(__atomic_load_n(&c.n1, __ATOMIC_ACQUIRE));
    pause_release(pv);
    const atab_atom *got = worker_join(&v);
    worker_join(&c.q);
    assert_ptr_not_equal(got, x);   /* V's CAS met the kill */
    assert_string_equal(atab_chars(got), "queued-x");
    assert_true(c.n1 == x || c.n2 == x);   /* then X's block, kept */
    assert_int_equal(wa_frees(&c.wa, c.x_blk), 0);
    share_finish(&c, got, NULL);
}

/* Q interns X, a key past the chunks' largest block (an allocation of its
** own), and Y; when told, it releases both: swept. V found X and stops in
** its section. A batch with such an atom does not wait for a later grace
** period: the sweep runs its own at once, which waits for V, and then
** frees X's allocation. */
static char big_key[301];

static void *do_big_queue(void *arg)
{
    share_case *c = arg;
    const atab_atom *x = atab_intern_cstr(c->t, big_key);
    const atab_atom *y = atab_intern_cstr(c->t, "queued-y-of-another-class");
    __atomic_store_n(&c->x, x, __ATOMIC_RELEASE);
    sem_take(&c->go);
    atab_release(c->t, x);
    atab_release(c->t, y);   /* swept */
    return NULL;
}

static void *do_intern_big(void *arg)
{
    share_case *c = arg;
    return (void *)atab_intern_cstr(c->t, big_key);
}

static void a_batch_with_an_atom_of_its_own_allocation_waits_at_once(void **state)
{
    (void)state;
    need_sections();
    memset(big_key, 'b', sizeof big_key - 1);
    share_case c;
    const atab_atom *x = share_start(&c, do_big_queue);
    worker v;
    pause_at *pv = pause_arm("revive:cas", ROLE_A, x);
    worker_start(&v, ROLE_A, do_intern_big, &c);
    pause_wait(pv);
    sem_post(&c.go);
    wait_killed(x);   /* Q's sweep, V still at its CAS */
    assert_true(worker_held(&c.q));   /* its grace period, at once, waits for V */
    assert_int_equal(wa_frees(&c.wa, c.x_blk), 0);
    pause_release(pv);
    const atab_atom *got = worker_join(&v);
    worker_join(&c.q);
    /* X freed after V left: V's CAS met the kill (a revived X would stay),
    ** and V made a new atom, whose allocation may be X's block again */
    assert_int_equal(wa_frees(&c.wa, c.x_blk), 1);
    assert_string_equal(atab_chars(got), big_key);
    assert_int_equal(atab__count(got), 1);
    share_finish(&c, got, NULL);
}

/* ---- thread exit vs flush and sweep ---- */

typedef struct exit_case {
    atab_table *t;
    atab__rec *rec;    /* the exiting thread's record on t */
    int ready;         /* rec is set (atomic) */
    sem_t may_exit;
    size_t freed;
} exit_case;

/* Leaves spares in this thread's cache: two on "exit-shared" (which the
** main thread holds too), one on "exit-only" (held by nobody now); then
** exits when told, and thread exit gives the record back. */
static void *do_use_and_exit(void *arg)
{
    exit_case *c = arg;
    const atab_atom *x = atab_intern_cstr(c->t, "exit-shared");
    atab_intern_cstr(c->t, "exit-shared");
    const atab_atom *y = atab_intern_cstr(c->t, "exit-only");
    atab_release(c->t, x);
    atab_release(c->t, x);
    atab_release(c->t, y);
    c->rec = my_rec(c->t);
    __atomic_store_n(&c->ready, 1, __ATOMIC_RELEASE);
    while (sem_wait(&c->may_exit) != 0)
        ;
    return NULL;
}

static void *do_gc_exit(void *arg)
{
    exit_case *c = arg;
    c->freed = atab_gc(c->t);
    return NULL;
}

/* The exiting thread E stops (`pause_e`) before giving its record back,
** g_lock held; the sweep F stops (`pause_f`) before giving E's record's
** spares back (reg_lock held). `f_first`: F reaches its point before E
** starts to exit; `e_goes_first`: E is let go first. Each spare goes back
** once: the held atom keeps exactly its holder's count, the other is swept
** once, E's record is freed once. */
static void exit_schedule(int pause_e, int pause_f, int f_first, int e_goes_first)
{
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    exit_case c;
    worker e, f;
    memset(&c, 0, sizeof c);
    sem_init(&c.may_exit, 0, 0);
    setup_hooks();
    c.t = race_table(&al);
    const atab_atom *x = atab_intern_cstr(c.t, "exit-shared");
    pause_at *pe = pause_e ? pause_arm("thread_exit:record", ROLE_A, NULL) : NULL;
    worker_start(&e, ROLE_A, do_use_and_exit, &c);
    while (!__atomic_load_n(&c.ready, __ATOMIC_ACQUIRE))
        usleep(1000);
    int rec_blk = wa_watch(&wa, c.rec->raw);
    pause_at *pf = pause_f ? pause_arm("flush:record", ROLE_B, c.rec) : NULL;
    if (pause_f && f_first) {
        worker_start(&f, ROLE_B, do_gc_exit, &c);
        pause_wait(pf);   /* F holds reg_lock; E's cache is F's */
    }
    sem_post(&c.may_exit);
    if (pause_e)
        pause_wait(pe);   /* E holds g_lock, its record still linked */
    if (pause_f && !f_first) {
        worker_start(&f, ROLE_B, do_gc_exit, &c);
        pause_wait(pf);
    }
    if (!pause_f) {   /* F runs through while E is held */
        worker_start(&f, ROLE_B, do_gc_exit, &c);
        worker_join(&f);
        assert_int_equal(c.freed, 1);   /* "exit-only": E's spare came back */
        assert_int_equal(wa_frees(&wa, rec_blk), 0);
        pause_release(pe);
    } else if (!pause_e || e_goes_first) {   /* E runs into F's lock */
        if (pause_e)
            pause_release(pe);
        assert_false(worker_exits_soon(&e));   /* at reg_lock: F has it */
        assert_int_equal(wa_frees(&wa, rec_blk), 0);
        pause_release(pf);
    } else {
        pause_release(pf);
        worker_join(&f);
        assert_int_equal(wa_frees(&wa, rec_blk), 0);
        pause_release(pe);
    }
    worker_join(&f);
    worker_join(&e);
    sem_destroy(&c.may_exit);
    assert_int_equal(wa_frees(&wa, rec_blk), 1);   /* the record went back, once */
    atab_stats st;
    atab_get_stats(c.t, &st);
    assert_int_equal(st.misuse, 0);                /* no spare given back twice */
    assert_int_equal(atab__count(x), 1);           /* exactly the main thread's */
    assert_int_equal(c.freed + atab_gc(c.t), 1);   /* "exit-only", once */
    assert_int_equal(atab_count(c.t), 1);
    assert_ptr_equal(atab_lookup(c.t, "exit-shared", 11), x);
    assert_int_equal(atab_release(c.t, x), ATAB_OK);
    assert_int_equal(atab_release(c.t, x), ATAB_OK);
    assert_int_equal(atab_gc(c.t), 1);
    atab_table_free(c.t);
    assert_int_equal(wa.live, 0);
}

static void exiting_thread_paused_with_its_record_while_a_sweep_flushes_it(void **state)
{
    (void)state;
    need_sections();
    exit_schedule(1, 0, 0, 0);
}

static void flush_paused_on_a_record_while_its_thread_exits(void **state)
{
    (void)state;
    need_sections();
    exit_schedule(0, 1, 1, 0);
}

static void exit_and_flush_both_paused_in_every_order(void **state)
{
    (void)state;
    need_sections();
    for (int f_first = 0; f_first < 2; f_first++)
        for (int e_goes_first = 0; e_goes_first < 2; e_goes_first++)
            exit_schedule(1, 1, f_first, e_goes_first);
}

/* A thread that made a long atom (its bytes on its record's count: no
** memory limit) and left a queue sweep's atoms waiting for a grace period,
** then exits. */
typedef struct bytes_exit_case {
    atab_table *t;
    const atab_atom *big;   /* its reference goes with the thread */
} bytes_exit_case;

static void *do_long_atom_churn_and_exit(void *arg)
{
    bytes_exit_case *c = arg;
    char key[300];
    memset(key, 'b', sizeof key);
    c->big = atab_intern(c->t, key, sizeof key);   /* made alone: 309 bytes */
    for (int i = 0; i < 4; i++) {   /* its queue fills: swept, left waiting */
        snprintf(key, sizeof key, "churn-%d", i);
        atab_release(c->t, atab_intern_cstr(c->t, key));
    }
    return NULL;
}

/* atab_get_stats is exact while a thread exits: the thread's record, off
** the table's list while its exit waits for a grace period (its queue's
** waiting atoms; the point "gp:served"), still counts the bytes of the
** long atom its thread made, which the table holds. */
static void stats_count_an_exiting_threads_bytes_while_its_exit_waits(void **state)
{
    (void)state;
    need_sections();
    counting_alloc ca = {0};
    atab_allocator al = ca_allocator(&ca);
    bytes_exit_case c;
    worker e;
    setup_hooks();
    c.t = sweeping_table(&al, 7, 4);   /* queues of 4 */
    assert_null(atab_lookup(c.t, "x", 1));   /* a record here: E is not alone */
    pause_at *pe = pause_arm("gp:served", ROLE_A, c.t);
    worker_start(&e, ROLE_A, do_long_atom_churn_and_exit, &c);
    pause_wait(pe);   /* in E's exit: its record unlinked, not yet given back */
    worker_returned(&e);
    assert_non_null(c.big);
    atab_stats st, during;
    assert_int_equal(atab_get_stats(c.t, &during), ATAB_OK);
    size_t had = ca.bytes;   /* E's record and queue among them */
    pause_release(pe);
    worker_join(&e);
    assert_int_equal(during.atoms, 1);
    assert_int_equal(during.bytes, had);
    assert_int_equal(atab_get_stats(c.t, &st), ATAB_OK);
    assert_int_equal(st.bytes, ca.bytes);
    assert_int_equal(atab_release(c.t, c.big), ATAB_OK);   /* E's reference */
    assert_int_equal(atab_gc(c.t), 1);
    atab_table_free(c.t);
    assert_int_equal(ca.live, 0);
}

/* ---- grow vs read ---- */

#define READ_KEY "grow-reader-looks-for-this-long-key"

typedef struct grow_case {
    atab_table *t;
    unsigned shard;
    const atab_atom *got;
    int grew;
} grow_case;

static void *do_read(void *arg)
{
    grow_case *c = arg;
    c->got = atab_lookup(c->t, READ_KEY, strlen(READ_KEY));
    return NULL;
}

/* Interns keys of the reader's shard until its array is replaced. */
static void *do_grow(void *arg)
{
    grow_case *c = arg;
    atab__shard *sh = &c->t->shards[c->shard];
    uint64_t old = __atomic_load_n(sh->arr, __ATOMIC_ACQUIRE);
    char buf[32];
    for (int i = 0; i < 1000000 && !c->grew; i++) {
        snprintf(buf, sizeof buf, "fill%d", i);
        if (shard_of_key(c->t, buf) != c->shard)
            continue;
        atab_intern_cstr(c->t, buf);   /* held: the table keeps growing */
        c->grew = __atomic_load_n(sh->arr, __ATOMIC_ACQUIRE) != old;
    }
    return NULL;
}

/* Interns keys of the reader's shard until its array is an allocation of
** its own, not one of a pool's (chunk.h), so that its free is seen. */
static void fill_past_pools(grow_case *c)
{
    char buf[32];
    for (int i = 0; i < 1000000; i++) {
        uint64_t w = __atomic_load_n(&c->t->arrs[c->shard], __ATOMIC_ACQUIRE);
        if (atab__is_array(w) && !atab__pooled(atab__arr_bytes(w)))
            return;
        snprintf(buf, sizeof buf, "pre%d", i);
        if (shard_of_key(c->t, buf) == c->shard)
            atab_intern_cstr(c->t, buf);   /* held: freed with the table */
    }
    fail_msg("the shard's array stayed in a pool");
}

static void *do_grow_gc(void *arg)
{
    grow_case *c = arg;
    atab_gc(c->t);
    return NULL;
}

/* G returned with the old array retired, not freed, R perhaps still
** paused on it (pr); a grace period (atab_gc's) frees it: C's, while R is
** paused (`c_first`), which waits for R, or this thread's once R is done. */
static void collect_retired(grow_case *c, worker *r, pause_at *pr, watch_alloc *wa,
                            int old_blk, int c_first)
{
    worker gc;
    assert_int_equal(wa_frees(wa, old_blk), 0);
    if (c_first) {
        worker_start(&gc, ROLE_B, do_grow_gc, c);
        assert_true(worker_held(&gc));   /* its grace period waits for R */
        assert_int_equal(wa_frees(wa, old_blk), 0);
        pause_release(pr);   /* R probes its array, the old one if it had it first */
        worker_join(r);
        worker_join(&gc);
    } else {
        if (pr) {
            pause_release(pr);
            worker_join(r);
        }
        assert_int_equal(wa_frees(wa, old_blk), 0);
        atab_gc(c->t);
    }
}

/* The reader R loaded the shard's array and stops before probing it
** (`pause_r`); the grower G replaces that array and stops before it
** retires the old one. `r_first`: R has its array before G grows. G then
** retires the old array and returns without a grace period of its own,
** R still paused; the next grace period (atab_gc's, by C) frees it, after
** R's section: `c_goes_first`: C is let go while R still probes the old
** array, and must wait for R before freeing it. `limited`: a table with a
** memory limit, whose grower waits for a grace period of its own (after
** grow:free) and frees the old array itself, after R. */
static void grow_schedule(int pause_r, int r_first, int c_goes_first, int limited)
{
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    atab_options o = plain_options(&al, 7);
    grow_case c = {0};
    worker r, g;
    setup_hooks();
    o.sweep_threshold = SIZE_MAX;
    o.memory_limit = limited ? SIZE_MAX / 2 : 0;
    c.t = atab_table_new(&o);
    const atab_atom *x = atab_intern_cstr(c.t, READ_KEY);
    c.shard = shard_of_key(c.t, READ_KEY);
    fill_past_pools(&c);
    uint64_t old = c.t->arrs[c.shard];
    assert_true((old & ATAB__ARR_ADDR) != (uintptr_t)atab__no_slots);   /* a real array */
    int old_blk = wa_watch(&wa, atab__arr_of(old).base);
    pause_at *pr = pause_r ? pause_arm("probe:array", ROLE_A, c.t) : NULL;
    pause_at *pg = pause_arm(limited ? "grow:free" : "grow:retire", ROLE_B, c.t);
    if (pause_r && r_first) {
        worker_start(&r, ROLE_A, do_read, &c);
        pause_wait(pr);
    }
    worker_start(&g, ROLE_B, do_grow, &c);
    pause_wait(pg);
    assert_true(c.t->arrs[c.shard] != old);   /* the new array is published */
    if (!pause_r) {   /* R reads through, on the new array */
        worker_start(&r, ROLE_A, do_read, &c);
        worker_join(&r);
    } else if (!r_first) {   /* R stops on the new array */
        worker_start(&r, ROLE_A, do_read, &c);
        pause_wait(pr);
    }
    pause_release(pg);
    if (limited && pause_r) {
        assert_true(worker_held(&g));   /* its own grace period waits for R */
        assert_int_equal(wa_frees(&wa, old_blk), 0);
        pause_release(pr);
        worker_join(&r);
    }
    worker_join(&g);   /* with no limit, it did not wait for R */
    assert_true(c.grew);
    if (!limited)
        collect_retired(&c, &r, pr, &wa, old_blk, pause_r && c_goes_first);
    assert_ptr_equal(c.got, x);   /* found on whichever array it read */
    assert_int_equal(wa_frees(&wa, old_blk), 1);   /* the grace period freed it */
    atab_stats st;
    atab_get_stats(c.t, &st);
    assert_int_equal(st.misuse, 0);
    assert_int_equal(st.unused, 0);
    assert_int_equal(atab__count(x), 2);   /* the main thread's and R's */
    atab_table_free(c.t);
    assert_int_equal(wa.live, 0);
}

static void reader_paused_on_the_old_array_while_the_shard_grows(void **state)
{
    (void)state;
    need_sections();
    grow_schedule(1, 1, 1, 0);
}

static void reader_paused_on_the_old_array_leaves_before_the_grace_period(void **state)
{
    (void)state;
    need_sections();
    grow_schedule(1, 1, 0, 0);
}

static void reader_after_the_grow_reads_the_new_array(void **state)
{
    (void)state;
    need_sections();
    grow_schedule(0, 0, 0, 0);
    grow_schedule(1, 0, 0, 0);
    grow_schedule(1, 0, 1, 0);
}

static void grower_with_a_memory_limit_waits_for_the_reader_then_frees(void **state)
{
    (void)state;
    need_sections();
    grow_schedule(1, 1, 0, 1);   /* R on the old array */
    grow_schedule(1, 0, 0, 1);   /* R on the new one */
    grow_schedule(0, 0, 0, 1);
}

/* ---- kick vs read ---- */

typedef struct kick_case {
    atab_table *t;
    unsigned shard;
    atab__arr v;                /* the shard's array while the case is built */
    const atab_atom *held[4096];
    size_t n_held, next;
    const char *prefix;         /* the keys' */
    const atab_atom *moved;     /* the atom the kick moves: the reader's key */
    const atab_atom *warm;      /* a key outside the kicked group, read first */
    const atab_atom *got;
    int rc;                     /* do_kick_release's release */
} kick_case;

static uint64_t hash_of(atab_table *t, const char *s, size_t len)
{
    return atab__hash_bytes(t->seed, s, len);
}

static unsigned group_free(atab__arr v, size_t g)
{
    return (unsigned)__builtin_popcount(atab__group_read(v, g, 0).free);
}

/* The next key of the case's shard whose groups are A = ga and, unless
** gb is SIZE_MAX, B = gb, in buf. */
static void next_key(kick_case *c, size_t ga, size_t gb, char *buf, size_t n)
{
    for (;;) {
        snprintf(buf, n, "%s%zu", c->prefix, c->next++);
        uint64_t h = hash_of(c->t, buf, strlen(buf));
        size_t a = atab__h_group(h, c->v.ngroups), b = atab__h_group2(h, c->v.ngroups);
        if (atab__h_shard(h) == c->shard && (ga == SIZE_MAX || a == ga) &&
            (gb == SIZE_MAX || b == gb))
            return;
    }
}

static int hold(kick_case *c, const char *key)
{
    const atab_atom *a = atab_intern_cstr(c->t, key);
    assert_non_null(a);
    assert_true(c->n_held < sizeof c->held / sizeof c->held[0]);
    c->held[c->n_held++] = a;
    atab__arr v = atab__arr_of(__atomic_load_n(&c->t->arrs[c->shard], __ATOMIC_ACQUIRE));
    int same = v.base == c->v.base;
    c->v = v;
    return same;   /* 0: the shard was rebuilt */
}

/* The atom a kick of full group g moves (its first key whose group A is g
** and whose group B has room), or NULL. */
static const atab_atom *kicked_from(kick_case *c, size_t g)
{
    for (size_t i = g * ATAB__GROUP; i < (g + 1) * ATAB__GROUP; i++) {
        const atab_atom *a = atab__slot_atom(*atab__slot_ptr(c->v, i));
        uint64_t h = hash_of(c->t, atab_chars(a), atab_len(a));
        size_t b = atab__h_group2(h, c->v.ngroups);
        if (atab__h_group(h, c->v.ngroups) == g && b != g && group_free(c->v, b))
            return a;
    }
    return NULL;
}

/* The slot of group g that holds atom a, or SIZE_MAX. */
static size_t slot_in_group(atab__arr v, size_t g, const atab_atom *a)
{
    for (size_t i = g * ATAB__GROUP; i < (g + 1) * ATAB__GROUP; i++)
        if (atab__slot_full(v, i) && atab__slot_atom(*atab__slot_ptr(v, i)) == a)
            return i;
    return SIZE_MAX;
}

/* Fills group g of the shard with keys whose groups are both g; 0 when
** the shard was rebuilt meanwhile. */
static int fill_group(kick_case *c, size_t g)
{
    char buf[64];
    while (group_free(c->v, g)) {
        next_key(c, g, g, buf, sizeof buf);
        if (!hold(c, buf))
            return 0;
    }
    return 1;
}

static void *do_kick_read(void *arg)
{
    kick_case *c = arg;
    assert_ptr_equal(atab_lookup(c->t, atab_chars(c->warm), atab_len(c->warm)), c->warm);
    c->got = atab_lookup(c->t, atab_chars(c->moved), atab_len(c->moved));
    return NULL;
}

/* R's intern of the key: its lock-free probe misses too, and its insert,
** which finds the shard's hold count moved, probes again under the lock. */
static void *do_kick_intern(void *arg)
{
    kick_case *c = arg;
    assert_ptr_equal(atab_lookup(c->t, atab_chars(c->warm), atab_len(c->warm)), c->warm);
    c->got = atab_intern(c->t, atab_chars(c->moved), atab_len(c->moved));
    return NULL;
}

/* A reader R read the control bytes of its key's group A and stops (at
** "probe:group_a"); the main thread then interns a key whose groups are
** both A, which is full, so a kick moves R's key from A to its B and the
** new key takes its slot in A. R's key's slot in A now holds another key:
** R must still find its key, in B. `long_keys`: keys past ATAB__SHORT_KEY
** bytes (the general probe) or within (the short-key path: R's second
** lookup on the table, after the warm key). */
static void kick_schedule(int long_keys)
{
    static kick_case c;
    char buf[64];
    worker r;
    memset(&c, 0, sizeof c);
    setup_hooks();
    c.t = race_table(NULL);
    c.prefix = long_keys ? "kick-race-key-longer-than-16-bytes-" : "kk";
    snprintf(buf, sizeof buf, "%s0", c.prefix);
    c.shard = shard_of_key(c.t, buf);
    while (c.v.ngroups < 8) {   /* a shard of 8 groups or more, every key held */
        next_key(&c, SIZE_MAX, SIZE_MAX, buf, sizeof buf);
        hold(&c, buf);
    }
    size_t g = 0;
    while (!c.moved) {   /* a full group A whose kick moves a key R can read */
        assert_true(c.n_held < 3000);
        if (!fill_group(&c, g % c.v.ngroups)) {
            g = 0;   /* rebuilt: start over on the new array */
            continue;
        }
        c.moved = kicked_from(&c, g % c.v.ngroups);
        if (!c.moved)
            g++;
    }
    g %= c.v.ngroups;
    uint64_t hm = hash_of(c.t, atab_chars(c.moved), atab_len(c.moved));
    size_t b = atab__h_group2(hm, c.v.ngroups), at = slot_in_group(c.v, g, c.moved);
    assert_true(at != SIZE_MAX);
    c.warm = atab_intern_cstr(c.t, "kick-race-warm");
    uint64_t hw = hash_of(c.t, "kick-race-warm", 14);
    assert_true(atab__h_shard(hw) != c.shard || atab__h_group(hw, c.v.ngroups) != g);
    next_key(&c, g, g, buf, sizeof buf);   /* the key that kicks */

    pause_at *p = pause_arm("probe:group_a", ROLE_A, atab__group_ctrl(c.v, g));
    worker_start(&r, ROLE_A, do_kick_read, &c);
    pause_wait(p);
    uint8_t *base = c.v.base;
    const atab_atom *n = atab_intern_cstr(c.t, buf);
    assert_non_null(n);
    c.v = atab__arr_of(__atomic_load_n(&c.t->arrs[c.shard], __ATOMIC_ACQUIRE));
    assert_ptr_equal(c.v.base, base);   /* kicked, not rebuilt */
    assert_ptr_equal(atab__slot_atom(*atab__slot_ptr(c.v, at)), n);   /* its slot taken */
    assert_true(slot_in_group(c.v, b, c.moved) != SIZE_MAX);   /* moved to its group B */
    pause_release(p);
    worker_join(&r);
    assert_ptr_equal(c.got, c.moved);   /* found where the kick put it */

    assert_int_equal(atab_release(c.t, n), ATAB_OK);
    assert_int_equal(atab_release(c.t, c.got), ATAB_OK);
    assert_int_equal(atab_release(c.t, c.warm), ATAB_OK);
    assert_int_equal(atab_release_all(c.t, c.held, c.n_held), ATAB_OK);
    atab_stats st;
    atab_get_stats(c.t, &st);
    assert_int_equal(st.misuse, 0);
    atab_table_free(c.t);
}

static void reader_of_a_key_a_kick_moves_from_a_to_b_finds_it_long_key(void **state)
{
    (void)state;
    need_sections();
    kick_schedule(1);
}

static void reader_of_a_key_a_kick_moves_from_a_to_b_finds_it_short_key(void **state)
{
    (void)state;
    need_sections();
    kick_schedule(0);
}

/* The atom a kick of group g will move once g is full, where g may still
** have empty slots (the keys that fill it have both groups g, so none of
** them moves): its first full slot's key whose group A is g and whose
** group B (not g) has room; NULL for none. */
static const atab_atom *kicked_once_full(kick_case *c, size_t g)
{
    for (size_t i = g * ATAB__GROUP; i < (g + 1) * ATAB__GROUP; i++) {
        if (!atab__slot_full(c->v, i))
            continue;
        const atab_atom *a = atab__slot_atom(*atab__slot_ptr(c->v, i));
        uint64_t h = hash_of(c->t, atab_chars(a), atab_len(a));
        size_t b = atab__h_group2(h, c->v.ngroups);
        if (atab__h_group(h, c->v.ngroups) == g && b != g && group_free(c->v, b))
            return a;
    }
    return NULL;
}

/* Fills group g of the shard with keys whose groups are both g until one
** slot is left empty; 0 when the shard was rebuilt meanwhile. */
static int fill_group_but_one(kick_case *c, size_t g)
{
    char buf[64];
    while (group_free(c->v, g) > 1) {
        next_key(c, g, g, buf, sizeof buf);
        if (!hold(c, buf))
            return 0;
    }
    return 1;
}

/* R's release of the moved key's atom, a reference of its own that its
** cache has no entry for while the main thread holds another: the release
** checks that the atom is the table's (atab__in_table), a probe. */
static void *do_kick_release(void *arg)
{
    kick_case *c = arg;
    assert_ptr_equal(atab_lookup(c->t, atab_chars(c->warm), atab_len(c->warm)), c->warm);
    c->rc = atab_release(c->t, c->moved);
    return NULL;
}

/* As kick_schedule, but R reads its key's group A while A still has one
** empty slot (so R will not read B). The main thread then fills that
** slot (A is full now, and stays so), and interns a key whose groups are
** both A: a kick moves R's key from A to its B, and the new key takes its
** slot in A. R's key was in the table throughout; R must find it.
** `release`: R releases a reference of its own on the key's atom instead
** of looking it up: the release must be taken, not refused as another
** table's atom. `intern`: R interns the key: it must get the key's atom,
** not a second one. */
static void kick_after_fill_schedule(int long_keys, int release, int intern)
{
    static kick_case c;
    char buf[64], fill[64];
    worker r;
    memset(&c, 0, sizeof c);
    setup_hooks();
    c.t = race_table(NULL);
    c.prefix = long_keys ? "kick-fill-race-key-longer-than-16-bytes-" : "kf";
    snprintf(buf, sizeof buf, "%s0", c.prefix);
    c.shard = shard_of_key(c.t, buf);
    while (c.v.ngroups < 8) {
        next_key(&c, SIZE_MAX, SIZE_MAX, buf, sizeof buf);
        hold(&c, buf);
    }
    size_t g = 0;
    for (;;) {
        assert_true(c.n_held < 4000);
        if (!fill_group_but_one(&c, g % c.v.ngroups)) {
            g = 0;   /* rebuilt: start over on the new array */
            continue;
        }
        atab__shard *sh = &c.t->shards[c.shard];
        c.moved = kicked_once_full(&c, g % c.v.ngroups);
        if (c.moved && sh->used + 4 < sh->limit)
            break;   /* room for the two inserts below without a growth */
        if (c.moved) {   /* no room: grow the shard, then start over */
            do
                next_key(&c, SIZE_MAX, SIZE_MAX, buf, sizeof buf);
            while (hold(&c, buf));
            g = 0;
            c.moved = NULL;
            continue;
        }
        g++;
    }
    g %= c.v.ngroups;
    assert_int_equal(group_free(c.v, g), 1);
    assert_int_not_equal(atab__group_read(c.v, g, 0).empty, 0);   /* R will not read B */
    uint64_t hm = hash_of(c.t, atab_chars(c.moved), atab_len(c.moved));
    size_t b = atab__h_group2(hm, c.v.ngroups), at = slot_in_group(c.v, g, c.moved);
    assert_true(at != SIZE_MAX);
    c.warm = atab_intern_cstr(c.t, "kick-fill-race-warm");
    uint64_t hw = hash_of(c.t, "kick-fill-race-warm", 19);
    assert_true(atab__h_shard(hw) != c.shard || atab__h_group(hw, c.v.ngroups) != g);
    next_key(&c, g, g, fill, sizeof fill);   /* the key that fills A */
    next_key(&c, g, g, buf, sizeof buf);     /* the key that kicks */

    pause_at *p = pause_arm("probe:group_a", ROLE_A, atab__group_ctrl(c.v, g));
    if (release)
        atab_ref(c.moved);   /* R's reference */
    worker_start(&r, ROLE_A, release ? do_kick_release : intern ? do_kick_intern : do_kick_read,
                 &c);
    pause_wait(p);
    uint8_t *base = c.v.base;
    const atab_atom *f = atab_intern_cstr(c.t, fill);
    assert_non_null(f);
    const atab_atom *n = atab_intern_cstr(c.t, buf);
    assert_non_null(n);
    c.v = atab__arr_of(__atomic_load_n(&c.t->arrs[c.shard], __ATOMIC_ACQUIRE));
    assert_ptr_equal(c.v.base, base);   /* kicked, not rebuilt */
    assert_ptr_equal(atab__slot_atom(*atab__slot_ptr(c.v, at)), n);   /* its slot taken */
    assert_true(slot_in_group(c.v, b, c.moved) != SIZE_MAX);   /* moved to its group B */
    pause_release(p);
    worker_join(&r);
    if (release) {
        if (c.rc != ATAB_OK)
            fprintf(stderr, "release of an atom in the table throughout, moved A -> B by a "
                            "kick during its check: %d, not ATAB_OK\n", c.rc);
        assert_int_equal(c.rc, ATAB_OK);   /* taken, not refused as a foreign atom */
    } else {
        if (c.got != c.moved)
            fprintf(stderr, "%s of a key in the table throughout, moved A -> B by a kick "
                            "after the reader read A with an empty slot: got %p, want %p\n",
                    intern ? "intern" : "lookup", (const void *)c.got, (const void *)c.moved);
        assert_ptr_equal(c.got, c.moved);   /* found where the kick put it */
        assert_int_equal(atab_release(c.t, c.got), ATAB_OK);
    }

    assert_int_equal(atab_release(c.t, f), ATAB_OK);
    assert_int_equal(atab_release(c.t, n), ATAB_OK);
    assert_int_equal(atab_release(c.t, c.warm), ATAB_OK);
    assert_int_equal(atab_release_all(c.t, c.held, c.n_held), ATAB_OK);
    atab_stats st;
    atab_get_stats(c.t, &st);
    assert_int_equal(st.misuse, 0);
    atab_table_free(c.t);
}

static void a_lookup_that_read_group_a_before_it_filled_finds_a_key_a_kick_moves_long_key(
    void **state)
{
    (void)state;
    need_sections();
    kick_after_fill_schedule(1, 0, 0);
}

static void a_lookup_that_read_group_a_before_it_filled_finds_a_key_a_kick_moves_short_key(
    void **state)
{
    (void)state;
    need_sections();
    kick_after_fill_schedule(0, 0, 0);
}

static void an_intern_that_read_group_a_before_it_filled_gets_the_key_a_kick_moves_long_key(
    void **state)
{
    (void)state;
    need_sections();
    kick_after_fill_schedule(1, 0, 1);
}

static void an_intern_that_read_group_a_before_it_filled_gets_the_key_a_kick_moves_short_key(
    void **state)
{
    (void)state;
    need_sections();
    kick_after_fill_schedule(0, 0, 1);
}

static void a_release_whose_check_read_group_a_before_it_filled_is_taken_when_a_kick_moves_it(
    void **state)
{
    (void)state;
    need_sections();
    kick_after_fill_schedule(0, 1, 0);
}

/* ---- a lookup past group B (overflow) vs a growth ---- */

typedef struct past_b_case {
    atab_table *t;
    const char *key;    /* the key past its groups A and B */
    const char *warm;   /* read first: the reader's record, on the hit path */
    const atab_atom *got;
} past_b_case;

static void *do_past_b_read(void *arg)
{
    past_b_case *c = arg;
    atab_lookup(c->t, c->warm, strlen(c->warm));
    c->got = atab_lookup(c->t, c->key, strlen(c->key));
    return NULL;
}

/* Builds the case on a new table in c: keys whose groups A and B are g1
** or g2 of a shard's array, held, till one, K (in key), goes past its
** group B (the array under half full: it does not grow). */
static void past_b_build(kick_case *c, size_t g2, char *key, size_t size)
{
    memset(c, 0, sizeof *c);
    atab_options o = plain_options(NULL, 7);
    o.sweep_threshold = SIZE_MAX;
    o.initial_capacity = 64 * 100;   /* shards of 8 groups or more, empty */
    c->t = atab_table_new(&o);
    assert_non_null(c->t);
    c->prefix = "ob";   /* keys of 3 to 8 bytes: the word's copy of the short-key path */
    c->shard = shard_of_key(c->t, "ob0");
    c->v = atab__arr_of(c->t->arrs[c->shard]);
    assert_true(c->v.ngroups >= 8);
    size_t g1 = 0;
    while (!c->v.overflow) {
        assert_true(c->n_held < 200);
        uint64_t h;
        size_t a, b;
        do {
            next_key(c, SIZE_MAX, SIZE_MAX, key, size);
            h = hash_of(c->t, key, strlen(key));
            a = atab__h_group(h, c->v.ngroups), b = atab__h_group2(h, c->v.ngroups);
        } while ((a != g1 && a != g2) || (b != g1 && b != g2));
        assert_true(hold(c, key));   /* never grown */
    }
}

/* Grows c's shard: keys of it interned (held by the table) till its array
** is replaced. */
static void past_b_grow(kick_case *c)
{
    char buf[64];
    uint64_t old = c->t->arrs[c->shard];
    for (int i = 0; c->t->arrs[c->shard] == old; i++) {
        assert_true(i < 1000000);
        snprintf(buf, sizeof buf, "past-b-fill-%d", i);
        if (shard_of_key(c->t, buf) == c->shard)
            assert_non_null(atab_intern_cstr(c->t, buf));
    }
}

/* Is K (c's last key) in its group A of the shard's array now, and A not
** its group B? */
static int past_b_in_a(kick_case *c, const char *key)
{
    uint64_t hk = hash_of(c->t, key, strlen(key));
    atab__arr v = atab__arr_of(c->t->arrs[c->shard]);
    size_t a = atab__h_group(hk, v.ngroups), b = atab__h_group2(hk, v.ngroups);
    return a != b && slot_in_group(v, a, c->held[c->n_held - 1]) != SIZE_MAX;
}

/* A shard's array overflowed (past_b_build): its last key K sits past its
** groups A and B. The reader R looks K up on the short-key path: it reads
** K's group A and stops ("probe:group_a"); the main thread then grows the
** shard, which puts K in its group A of the new array. Let go, R misses K
** in A and B of the old array and goes on past B (short_past_b), on the
** shard's array read again: the new one. K was in the table all along: R
** must find it. (The case is built and grown once without R first, to pick
** groups for which the growth puts K in its group A: all is deterministic
** under the fixed seed.) */
static void a_lookup_past_group_b_paused_while_its_shard_grows_finds_its_key(void **state)
{
    (void)state;
    need_sections();
    static kick_case c;
    static char key[64];
    worker r;
    size_t g2;
    for (g2 = 1;; g2++) {   /* a dry run for each, till one fits */
        past_b_build(&c, g2, key, sizeof key);
        if (c.t->fast_id == ATAB__FENCED) {   /* no hit path: every read probes its one
                                                 array (find_or_insert) */
            atab_table_free(c.t);
            skip();
        }
        assert_true(g2 < c.v.ngroups);
        past_b_grow(&c);
        int fits = past_b_in_a(&c, key);
        atab_table_free(c.t);
        if (fits)
            break;
    }
    setup_hooks();
    past_b_build(&c, g2, key, sizeof key);
    const atab_atom *k = c.held[c.n_held - 1];
    uint64_t hk = hash_of(c.t, key, strlen(key));
    size_t ga = atab__h_group(hk, c.v.ngroups);
    assert_int_equal(slot_in_group(c.v, ga, k), SIZE_MAX);   /* past its groups */
    assert_int_equal(slot_in_group(c.v, atab__h_group2(hk, c.v.ngroups), k), SIZE_MAX);
    past_b_case pc = {c.t, key, "past-b-warm", NULL};
    assert_true(shard_of_key(c.t, pc.warm) != c.shard);

    pause_at *p = pause_arm("probe:group_a", ROLE_A, atab__group_ctrl(c.v, ga));
    worker_start(&r, ROLE_A, do_past_b_read, &pc);
    pause_wait(p);
    past_b_grow(&c);   /* R in its section: the old array retired, not freed */
    int in_a = past_b_in_a(&c, key);
    pause_release(p);
    worker_join(&r);
    assert_true(in_a);
    assert_ptr_equal(pc.got, k);   /* present throughout: found */
    if (pc.got)
        assert_int_equal(atab_release(c.t, pc.got), ATAB_OK);
    atab_table_free(c.t);
}

/* ---- a short key's insert, its atom made before the shard's lock ---- */

#define MADE_KEY "made-before-lock"   /* 16 bytes: the short-key path */

typedef struct made_case {
    atab_table *t;
    const atab_atom *got;
} made_case;

static void *do_intern_made(void *arg)
{
    made_case *c = arg;
    atab_lookup(c->t, "warm", 4);   /* this thread's record made; no insert */
    c->got = atab_intern_cstr(c->t, MADE_KEY);
    return NULL;
}

/* A key of the shard and group A of MADE_KEY in t's array now, which an
** insert puts in the slot where MADE_KEY's would go (the group's first
** free one), in buf. */
static void key_of_made_group(atab_table *t, char *buf, size_t size)
{
    uint64_t hm = atab__hash_bytes(t->seed, MADE_KEY, strlen(MADE_KEY));
    atab__arr v = atab__arr_of(t->arrs[atab__h_shard(hm)]);
    for (int k = 0;; k++) {
        snprintf(buf, size, "room%d", k);
        uint64_t h = atab__hash_bytes(t->seed, buf, strlen(buf));
        if (atab__h_shard(h) == atab__h_shard(hm) &&
            atab__h_group(h, v.ngroups) == atab__h_group(hm, v.ngroups))
            return;
    }
}

/* The inserter I (its record made by a first intern) missed the key
** lock-free in an array with room, made its atom and stops before the
** shard's lock ("insert:made"); this thread then interns the same key
** into that array (`mode` 0), or grows the key's shard past it (1), or
** interns another key into the room I saw (2). Let go, I finds this
** thread's atom under the lock and gives its own block back to its chunk
** (a free block of its class); or, its array replaced, it inserts the
** atom it made the locked way (no block freed); or it puts its atom in
** another slot, the other key's kept. Either way the key has one atom,
** with exact counts. */
static void made_schedule(int mode)
{
    int grow = mode == 1;
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    atab_options o = plain_options(&al, 11);
    made_case c = {0};
    worker i;
    setup_hooks();
    o.sweep_threshold = SIZE_MAX;
    c.t = atab_table_new(&o);
    size_t class = atab__class_of(strlen(MADE_KEY));
    unsigned shard = shard_of_key(c.t, MADE_KEY);
    atab__shard *sh = &c.t->shards[shard];
    char buf[32];
    for (int k = 0; !atab__is_array(*sh->arr); k++) {   /* an array, with room for two */
        snprintf(buf, sizeof buf, "pre%d", k);
        if (shard_of_key(c.t, buf) == shard)
            atab_intern_cstr(c.t, buf);   /* held: freed with the table */
    }
    assert_true(sh->used + 2 <= sh->limit);
    pause_at *pi = pause_arm("insert:made", ROLE_A, c.t);
    worker_start(&i, ROLE_A, do_intern_made, &c);
    pause_wait(pi);
    const atab_atom *x = NULL, *other = NULL;
    char other_key[32];
    if (grow) {
        grow_case g = {c.t, shard, NULL, 0};
        do_grow(&g);
        assert_true(g.grew);
    } else if (mode == 2) {
        uint64_t arr = *sh->arr;
        key_of_made_group(c.t, other_key, sizeof other_key);
        other = atab_intern_cstr(c.t, other_key);   /* fills the slot I saw free */
        assert_non_null(other);
        assert_true(*sh->arr == arr);
    } else {
        uint64_t arr = *sh->arr;
        x = atab_intern_cstr(c.t, MADE_KEY);   /* this thread's insert comes first */
        assert_non_null(x);
        assert_true(*sh->arr == arr);   /* in the array I probed */
    }
    assert_null(c.t->free_blocks[class]);
    pause_release(pi);
    worker_join(&i);
    assert_non_null(c.got);
    assert_string_equal(atab_chars(c.got), MADE_KEY);
    if (mode) {
        assert_null(c.t->free_blocks[class]);   /* the atom made is the key's */
        assert_int_equal(atab__count(c.got), 1);
        x = atab_intern_cstr(c.t, MADE_KEY);
        assert_ptr_equal(x, c.got);
    } else {
        assert_ptr_equal(c.got, x);
        assert_non_null(c.t->free_blocks[class]);   /* I's block went back */
        assert_true(c.t->free_blocks[class] != x);
    }
    assert_int_equal(atab__count(x), 2);
    if (other) {   /* still in the table, with its one reference */
        assert_ptr_equal(atab_lookup(c.t, other_key, strlen(other_key)), other);
        assert_int_equal(atab_release(c.t, other), ATAB_OK);
        assert_int_equal(atab_release(c.t, other), ATAB_OK);
    }
    atab_stats st;
    atab_get_stats(c.t, &st);
    assert_int_equal(st.misuse, 0);
    assert_int_equal(st.unused, other != NULL);
    size_t atoms = st.atoms;
    assert_int_equal(atab_release(c.t, x), ATAB_OK);
    assert_int_equal(atab_release(c.t, x), ATAB_OK);
    atab_get_stats(c.t, &st);
    assert_int_equal(st.atoms, atoms);   /* the key's one atom, now unused */
    assert_int_equal(st.unused, 1 + (other != NULL));
    atab_table_free(c.t);
    assert_int_equal(wa.live, 0);
}

static void insert_paused_with_its_atom_made_while_the_key_is_interned(void **state)
{
    (void)state;
    need_sections();
    made_schedule(0);
}

static void insert_paused_with_its_atom_made_while_its_shard_grows(void **state)
{
    (void)state;
    need_sections();
    made_schedule(1);
}

static void insert_paused_with_its_atom_made_while_another_key_takes_its_room(void **state)
{
    (void)state;
    need_sections();
    made_schedule(2);
}

/* ---- the solo thread (table.h): inserts without the shard's lock ---- */

#define SOLO_KEY "solo-insert-key"   /* 15 bytes: the short-key path */

typedef struct solo_case {
    atab_table *t;
    unsigned shard;
    char other[32];           /* a key of SOLO_KEY's shard, for the second thread */
    const atab_atom *first;   /* the first insert's atom (locked: it claims t) */
    const atab_atom *got;
    atab__rec *rec;           /* the thread's record on t */
    int was_solo;             /* do_intern_other's thread was t's solo thread after */
} solo_case;

/* A key of shard `shard` of t, other than `not`, into buf. */
static void key_of_shard(atab_table *t, unsigned shard, const char *not, char *buf, size_t size)
{
    for (int k = 0;; k++) {
        snprintf(buf, size, "%s-%d", not, k);
        if (shard_of_key(t, buf) == shard)
            return;
    }
}

/* Interns a key of SOLO_KEY's shard (its first insert on t: the lock, and
** the claim), then SOLO_KEY into the room it left (a solo insert). */
static void *do_solo_pair(void *arg)
{
    solo_case *c = arg;
    char first[32];
    key_of_shard(c->t, c->shard, "first", first, sizeof first);
    c->first = atab_intern_cstr(c->t, first);
    c->rec = atab__tls_last.rec;
    c->got = atab_intern_cstr(c->t, SOLO_KEY);
    return NULL;
}

static void *do_intern_other(void *arg)
{
    solo_case *c = arg;
    c->got = atab_intern_cstr(c->t, c->other);
    c->rec = atab__tls_last.rec;
    c->was_solo = c->rec && __atomic_load_n(&c->t->solo_rec, __ATOMIC_ACQUIRE) == c->rec;
    return NULL;
}

static void solo_setup(solo_case *c, atab_allocator *al)
{
    atab_options o = plain_options(al, 12);
    setup_hooks();
    o.sweep_threshold = SIZE_MAX;
    c->t = atab_table_new(&o);
    c->shard = shard_of_key(c->t, SOLO_KEY);
    key_of_shard(c->t, c->shard, "other", c->other, sizeof c->other);
}

/* Every atom of the case's table found by its key, with one reference
** each, and the table's count of them and its shard's of those in it; then
** the table freed. */
static void solo_check_and_free(solo_case *c, const atab_atom *const *atoms, size_t n,
                                watch_alloc *wa)
{
    atab_stats st;
    size_t in_shard = 0;
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(atab_lookup(c->t, atab_chars(atoms[i]), atab_len(atoms[i])), atoms[i]);
        assert_int_equal(atab_release(c->t, atoms[i]), ATAB_OK);   /* the lookup's */
        in_shard += shard_of_key(c->t, atab_chars(atoms[i])) == c->shard;
    }
    atab_get_stats(c->t, &st);
    assert_int_equal(st.atoms, n);
    assert_int_equal(st.misuse, 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(atab__count(atoms[i]), 1);
    assert_int_equal(c->t->shards[c->shard].used, in_shard);
    atab_table_free(c->t);
    assert_int_equal(wa->live, 0);
}

/* The solo thread S stops inside its solo insert ("insert:solo"); another
** thread O's insert into the same shard must take the bias over first, and
** waits for S's insert (solo_busy): it is held up until S is let go, then
** finds the hold S counted and probes again under the lock. Both atoms are
** kept, counts exact, O was the solo thread, and its exit leaves the
** table unclaimed. */
static void a_solo_insert_paused_midway_holds_another_threads_insert(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    solo_case c = {0}, d;
    worker s, o;
    solo_setup(&c, &al);
    pause_at *ps = pause_arm("insert:solo", ROLE_A, c.t);
    worker_start(&s, ROLE_A, do_solo_pair, &c);
    pause_wait(ps);
    assert_non_null(c.first);
    assert_ptr_equal(__atomic_load_n(&c.t->solo_rec, __ATOMIC_ACQUIRE), c.rec);
    uint64_t holds = c.t->shards[c.shard].holds;
    d = c;
    worker_start(&o, ROLE_B, do_intern_other, &d);
    assert_true(worker_held(&o));   /* waiting for S's insert */
    assert_null(d.got);
    pause_release(ps);
    worker_join(&s);
    worker_join(&o);
    assert_non_null(c.got);
    assert_non_null(d.got);
    assert_string_equal(atab_chars(c.got), SOLO_KEY);
    assert_string_equal(atab_chars(d.got), c.other);
    assert_true(d.was_solo);
    assert_int_equal(c.t->solo_moves, 1);
    assert_ptr_equal(c.t->solo_tid, ATAB__SOLO_UNCLAIMED);   /* O's exit */
    assert_null(c.t->solo_rec);
    assert_true(c.t->shards[c.shard].holds >= holds + 2);   /* S's solo hold, O's lock */
    const atab_atom *atoms[] = {c.first, c.got, d.got};
    solo_check_and_free(&c, atoms, 3, &wa);
}

/* Interns c->other (the lock: it claims t), then another key of its
** shard (a solo insert). */
static void *do_intern_two(void *arg)
{
    solo_case *c = arg;
    char second[32];
    key_of_shard(c->t, c->shard, "second", second, sizeof second);
    c->first = atab_intern_cstr(c->t, c->other);
    c->rec = atab__tls_last.rec;
    c->got = atab_intern_cstr(c->t, second);
    return NULL;
}

/* The solo thread's exit leaves the table unclaimed: the next thread to
** take a lock claims it, and its next insert is a solo one (it reaches
** "insert:solo"). A claim then is no move. */
static void the_solo_threads_exit_leaves_the_table_to_the_next_thread(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    solo_case c = {0}, d;
    worker s, n;
    solo_setup(&c, &al);
    worker_start(&s, ROLE_A, do_solo_pair, &c);
    worker_join(&s);   /* its record given back */
    assert_ptr_equal(c.t->solo_tid, ATAB__SOLO_UNCLAIMED);
    assert_null(c.t->solo_rec);
    assert_true(c.t->shards[c.shard].used + 2 <= c.t->shards[c.shard].limit);
    d = c;
    d.got = d.first = NULL;
    pause_at *pn = pause_arm("insert:solo", ROLE_B, c.t);
    worker_start(&n, ROLE_B, do_intern_two, &d);
    pause_wait(pn);   /* a hang here: no solo insert */
    assert_ptr_equal(c.t->solo_rec, d.rec);
    pause_release(pn);
    worker_join(&n);
    assert_ptr_equal(c.t->solo_tid, ATAB__SOLO_UNCLAIMED);   /* N's exit */
    assert_int_equal(c.t->solo_moves, 0);
    assert_non_null(d.first);
    assert_non_null(d.got);
    const atab_atom *atoms[] = {c.first, c.got, d.first, d.got};
    solo_check_and_free(&c, atoms, 4, &wa);
}

static void *do_hits(void *arg)
{
    solo_case *c = arg;
    for (int i = 0; i < 100; i++) {
        const atab_atom *a = atab_intern_cstr(c->t, SOLO_KEY);   /* a hit */
        if (a != c->first || atab_release(c->t, a) != ATAB_OK)
            return NULL;
    }
    c->got = c->first;
    return NULL;
}

/* Another thread's hits (interns of a present key, and releases) take no
** lock: the bias stays, through that thread's exit, and through this
** thread's next insert. */
static void another_threads_hits_leave_the_bias(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    solo_case c = {0};
    worker h;
    solo_setup(&c, &al);
    c.first = atab_intern_cstr(c.t, SOLO_KEY);   /* this thread claims t */
    assert_ptr_equal(c.t->solo_tid, &atab__tls_last);
    atab__rec *mine = c.t->solo_rec;
    assert_ptr_equal(mine, atab__tls_last.rec);
    worker_start(&h, ROLE_B, do_hits, &c);
    worker_join(&h);
    assert_ptr_equal(c.got, c.first);
    assert_ptr_equal(c.t->solo_tid, &atab__tls_last);
    assert_ptr_equal(c.t->solo_rec, mine);
    uint64_t holds = c.t->shards[c.shard].holds;
    const atab_atom *o = atab_intern_cstr(c.t, c.other);
    assert_non_null(o);
    assert_int_equal(c.t->shards[c.shard].holds, holds + 1);   /* one hold, counted */
    assert_ptr_equal(c.t->solo_rec, mine);   /* its own insert keeps the bias */
    const atab_atom *atoms[] = {c.first, o};
    solo_check_and_free(&c, atoms, 2, &wa);
}

static void *do_count(void *arg)
{
    solo_case *c = arg;
    c->first = (const atab_atom *)(uintptr_t)atab_count(c->t);
    return NULL;
}

/* The first lock taken on a table by a thread with no record there (here
** atab_count's) ends the bias: that thread has no record to make solo
** inserts with, and none to give back at its exit. This thread's inserts
** then take the locks, and the bias stays ended through the exit of a
** thread W whose insert took a lock while it was ended, as long as
** another thread E with a record stays; E's exit leaves this thread's
** record alone on the table, which opens it to a claim, and this thread's
** next insert claims it. */
static sem_t g_stay_in, g_stay_go;

/* As do_intern_other, then stays until g_stay_go (g_stay_in posted). */
static void *do_intern_and_stay(void *arg)
{
    do_intern_other(arg);
    sem_post(&g_stay_in);
    sem_wait(&g_stay_go);
    return NULL;
}

static void a_first_lock_from_a_thread_with_no_record_ends_the_bias(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    solo_case c = {0};
    worker w;
    solo_setup(&c, &al);
    assert_ptr_equal(c.t->solo_tid, ATAB__SOLO_UNCLAIMED);
    worker_start(&w, ROLE_B, do_count, &c);
    worker_join(&w);
    assert_null(c.first);   /* atab_count said 0 */
    assert_null(c.t->solo_tid);
    assert_null(c.t->solo_rec);
    const atab_atom *a = atab_intern_cstr(c.t, SOLO_KEY);
    const atab_atom *b = atab_intern_cstr(c.t, c.other);
    assert_null(c.t->solo_tid);   /* no claim after the end */
    assert_null(c.t->solo_rec);
    solo_case d = c, e = c;
    worker we;
    key_of_shard(c.t, c.shard, "third", d.other, sizeof d.other);
    key_of_shard(c.t, c.shard, "fifth", e.other, sizeof e.other);
    sem_init(&g_stay_in, 0, 0);
    sem_init(&g_stay_go, 0, 0);
    worker_start(&we, ROLE_B, do_intern_and_stay, &e);
    sem_wait(&g_stay_in);
    worker_start(&w, ROLE_B, do_intern_other, &d);
    worker_join(&w);
    assert_non_null(d.got);
    assert_false(d.was_solo);
    assert_null(c.t->solo_tid);   /* W's exit: E's record and this thread's stay */
    sem_post(&g_stay_go);
    worker_join(&we);
    assert_non_null(e.got);
    assert_false(e.was_solo);
    assert_ptr_equal(c.t->solo_tid, ATAB__SOLO_REOPENED);   /* E's exit */
    sem_destroy(&g_stay_in);
    sem_destroy(&g_stay_go);
    char fourth[32];
    key_of_shard(c.t, c.shard, "fourth", fourth, sizeof fourth);
    const atab_atom *f = atab_intern_cstr(c.t, fourth);
    assert_non_null(f);
    assert_ptr_equal(c.t->solo_tid, &atab__tls_last);   /* claimed */
    assert_ptr_equal(c.t->solo_rec, atab__tls_last.rec);
    assert_int_equal(c.t->solo_moves, 0);
    const atab_atom *atoms[] = {a, b, d.got, e.got, f};
    solo_check_and_free(&c, atoms, 5, &wa);
}

/* ---- the bias passes between threads ---- */

typedef struct turns_case {
    atab_table *t;
    sem_t go, done;
    int turns;                       /* W's turns to take */
    const atab_atom *got[8];         /* W's atoms */
    const void *tid[8];              /* solo_tid after each of W's turns */
    const void *mine;                /* &atab__tls_last in W */
} turns_case;

/* W: at each go, interns a new key ("w-turn-N") and posts done. */
static void *do_turns(void *arg)
{
    turns_case *c = arg;
    c->mine = &atab__tls_last;
    for (int i = 0; i < c->turns; i++) {
        char key[32];
        sem_wait(&c->go);
        snprintf(key, sizeof key, "w-turn-%d", i);
        c->got[i] = atab_intern_cstr(c->t, key);
        c->tid[i] = __atomic_load_n(&c->t->solo_tid, __ATOMIC_ACQUIRE);
        sem_post(&c->done);
    }
    return NULL;
}

/* This thread and W take turns at inserting new keys (each insert takes a
** lock when its thread is not the solo thread). The bias passes to the
** thread whose turn it is ATAB__SOLO_MOVES times, then ends at the next
** turn, and stays ended through both threads' next inserts; W's exit then
** opens the table to a claim, which is no move. Every atom stays. */
static void the_bias_passes_between_threads_a_bounded_number_of_times(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    turns_case c = {0};
    const atab_atom *mine[8];
    int n_mine = 0, w_turns = 0;
    worker w;
    atab_options o = plain_options(&al, 12);
    o.sweep_threshold = SIZE_MAX;
    assert_non_null(c.t = atab_table_new(&o));
    sem_init(&c.go, 0, 0);
    sem_init(&c.done, 0, 0);
    c.turns = ATAB__SOLO_MOVES / 2 + 2;
    assert_non_null(mine[n_mine++] = atab_intern_cstr(c.t, "main-turn-0"));   /* the claim */
    assert_ptr_equal(c.t->solo_tid, &atab__tls_last);
    worker_start(&w, ROLE_B, do_turns, &c);
    for (unsigned moves = 1; moves <= ATAB__SOLO_MOVES + 2; moves++) {
        int ended = moves > ATAB__SOLO_MOVES;
        if (moves % 2) {   /* W's turn */
            sem_post(&c.go);
            sem_wait(&c.done);
            assert_non_null(c.got[w_turns]);
            assert_ptr_equal(c.tid[w_turns++], ended ? NULL : c.mine);
        } else {
            char key[32];
            snprintf(key, sizeof key, "main-turn-%u", moves);
            assert_non_null(mine[n_mine++] = atab_intern_cstr(c.t, key));
            assert_ptr_equal(c.t->solo_tid, ended ? NULL : (const void *)&atab__tls_last);
        }
        assert_int_equal(c.t->solo_moves, ended ? ATAB__SOLO_MOVES : moves);
    }
    while (w_turns < c.turns) {   /* W's last turns: the bias stays ended */
        sem_post(&c.go);
        sem_wait(&c.done);
        assert_ptr_equal(c.tid[w_turns++], NULL);
    }
    worker_join(&w);
    assert_ptr_equal(c.t->solo_tid, ATAB__SOLO_REOPENED);   /* W's exit */
    assert_non_null(mine[n_mine++] = atab_intern_cstr(c.t, "main-last"));
    assert_ptr_equal(c.t->solo_tid, &atab__tls_last);        /* a claim */
    assert_int_equal(c.t->solo_moves, ATAB__SOLO_MOVES);
    for (int i = 0; i < w_turns; i++)
        assert_ptr_equal(atab_lookup(c.t, atab_chars(c.got[i]), atab_len(c.got[i])), c.got[i]);
    for (int i = 0; i < n_mine; i++)
        assert_ptr_equal(atab_lookup(c.t, atab_chars(mine[i]), atab_len(mine[i])), mine[i]);
    assert_int_equal(atab_count(c.t), (size_t)(w_turns + n_mine));
    sem_destroy(&c.go);
    sem_destroy(&c.done);
    atab_table_free(c.t);
    assert_int_equal(wa.live, 0);
}

/* Takes key c->first's (a key of the case's shard: the claim), interns and
** releases another (count 0), then sweeps the table, which stops at
** "sweep:kill" with the shard's lock held. */
static void *do_claim_and_sweep(void *arg)
{
    solo_case *c = arg;
    char second[32];
    key_of_shard(c->t, c->shard, "second", second, sizeof second);
    c->first = atab_intern_cstr(c->t, c->other);
    c->rec = atab__tls_last.rec;
    atab_release(c->t, atab_intern_cstr(c->t, second));
    atab_gc(c->t);
    return NULL;
}

/* Interns a key of another shard than c->shard (its lock: the bias comes
** to this thread), then c->other, a key of c->shard. Between them c->first
** is stored (release), after c->rec and c->was_solo. */
static void *do_move_then_insert(void *arg)
{
    solo_case *c = arg;
    char away[32];
    key_of_shard(c->t, (c->shard + 1) % ATAB__SHARDS, "away", away, sizeof away);
    const atab_atom *a = atab_intern_cstr(c->t, away);
    c->rec = atab__tls_last.rec;
    c->was_solo = __atomic_load_n(&c->t->solo_rec, __ATOMIC_ACQUIRE) == c->rec;
    __atomic_store_n(&c->first, a, __ATOMIC_RELEASE);   /* after rec and was_solo */
    c->got = atab_intern_cstr(c->t, c->other);
    return NULL;
}

/* The solo thread A stops in a sweep with a shard's lock held
** ("sweep:kill"). Another thread B takes the bias over (its insert into
** another shard), then inserts a key of A's locked shard: its solo insert
** finds the lock taken, so B takes the lock, and is held up until A lets
** it go. No insert is made beside a lock's holder; every atom stays, and
** A's swept atom goes. */
static void a_lock_held_across_a_move_holds_the_new_solo_threads_insert(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    solo_case a = {0}, b;
    worker wa_, wb;
    solo_setup(&a, &al);
    b = a;
    key_of_shard(a.t, a.shard, "bkey", b.other, sizeof b.other);
    pause_at *p = pause_arm("sweep:kill", ROLE_A, NULL);
    worker_start(&wa_, ROLE_A, do_claim_and_sweep, &a);
    pause_wait(p);
    assert_ptr_equal(a.t->solo_rec, a.rec);
    worker_start(&wb, ROLE_B, do_move_then_insert, &b);
    published(&b.first);   /* B's first insert returned: the bias is B's */
    assert_true(worker_held(&wb));   /* at A's shard's lock: its second insert */
    assert_true(b.was_solo);
    pause_release(p);
    worker_join(&wa_);
    worker_join(&wb);
    assert_non_null(b.got);
    assert_string_equal(atab_chars(b.got), b.other);
    assert_true(a.t->solo_moves >= 1 && a.t->solo_moves <= ATAB__SOLO_MOVES);
    /* both exited: the last solo thread's exit, or the second exit after
    ** an end */
    assert_true(a.t->solo_tid == ATAB__SOLO_UNCLAIMED || a.t->solo_tid == ATAB__SOLO_REOPENED);
    assert_null(a.t->solo_rec);
    const atab_atom *atoms[] = {a.first, b.first, b.got};   /* A's second swept */
    solo_check_and_free(&a, atoms, 3, &wa);
}

/* ---- membarrier that stops serving: the fallback fence ----
** The kernel registered this process for membarrier, then the barrier
** fails (a sandbox that forbids it after start-up); the tests set the
** state a failed call leaves (atab__writer_fence). */

/* A build whose readers and solo inserts take no fence of their own, on a
** kernel whose membarrier this process registered. */
static void need_membarrier(void)
{
    need_sections();
#if ATAB__NEVER_MEMBARRIER
    skip();
#endif
    if (!atab__have_membarrier())
        skip();
}

static void membarrier_fails(void)
{
    __atomic_store_n(&atab__membarrier_state, -1, __ATOMIC_SEQ_CST);
}

static void membarrier_serves_again(void)
{
    __atomic_store_n(&atab__membarrier_state, 1, __ATOMIC_SEQ_CST);
}

typedef struct fence_case {
    atab_table *t;
    int served;   /* atab__writer_fence's answer */
} fence_case;

static void *do_writer_fence(void *arg)
{
    fence_case *c = arg;
    c->served = atab__writer_fence(c->t);
    return NULL;
}

/* The first writer's fence on a table after membarrier failed tells its
** readers to fence (fast_id) and passes the fallback fence, for the
** sections they entered before they were told, and says every thread
** passed a barrier; the next fence needs no fallback and says so. */
static void a_failed_membarrier_tells_readers_to_fence_and_passes_the_fallback_once(void **state)
{
    (void)state;
    need_membarrier();
    setup_hooks();
    fence_case c = {atab_table_new(NULL), -1};
    assert_non_null(c.t);
    assert_int_equal(c.t->fast_id, c.t->id);   /* readers take no fence */
    membarrier_fails();
    worker w;
    pause_at *p = pause_arm("fence:fallback", ROLE_A, c.t);
    worker_start(&w, ROLE_A, do_writer_fence, &c);
    pause_wait(p);   /* a hang here: no fallback fence */
    assert_int_equal(c.t->fast_id, ATAB__FENCED);   /* told before it */
    pause_release(p);
    worker_join(&w);
    assert_int_equal(c.served, 1);
    c.served = -1;
    setup_hooks();
    p = pause_arm("fence:fallback", ROLE_A, c.t);
    worker_start(&w, ROLE_A, do_writer_fence, &c);
    worker_join(&w);
    assert_false(pause_reached_soon(p));   /* readers fence for themselves now */
    assert_int_equal(c.served, 0);
    membarrier_serves_again();
    atab_table_free(c.t);
}

/* Two writers' fences on a table as membarrier fails: the first tells the
** readers to fence and stops in its fallback ("fence:fallback"); the
** second, which finds the readers told already, must make a fallback of
** its own rather than trust that one (a reader that entered its section
** with no fence may not show in its record yet); then the table counts
** as served, and a third makes none. */
static void a_second_writer_during_the_fallback_makes_its_own(void **state)
{
    (void)state;
    need_membarrier();
    setup_hooks();
    atab_table *t = atab_table_new(NULL);
    assert_non_null(t);
    fence_case a = {t, -1}, b = {t, -1}, c = {t, -1};
    membarrier_fails();
    worker wa_, wb;
    pause_at *pa = pause_arm("fence:fallback", ROLE_A, t);
    pause_at *pb = pause_arm("fence:fallback", ROLE_B, t);
    worker_start(&wa_, ROLE_A, do_writer_fence, &a);
    pause_wait(pa);
    assert_int_equal(t->fast_id, ATAB__FENCED);
    assert_int_equal(t->fence_served, 0);
    worker_start(&wb, ROLE_B, do_writer_fence, &b);
    pause_wait(pb);   /* a hang here: B trusted A's fallback under way */
    pause_release(pb);
    worker_join(&wb);
    pause_release(pa);
    worker_join(&wa_);
    assert_int_equal(a.served, 1);
    assert_int_equal(b.served, 1);
    assert_int_equal(t->fence_served, 1);
    assert_int_equal(atab__writer_fence(c.t), 0);
    membarrier_serves_again();
    atab_table_free(t);
}

/* The solo thread S stops inside its solo insert; then membarrier fails,
** and a writer's fence tells the table's readers to fence (so the next
** fences on it are the caller's own). Another thread O's insert into S's
** shard ends the bias: S's solo inserts take no fence of their own, so
** O's end passes the fallback fence (without it, O could read S's
** solo_busy before S's store of it reached the cache, and write the shard
** beside S: the review's stress lost keys that way), waits for S's insert,
** and ends the bias for good. Both atoms kept, counts exact. */
static void ending_the_bias_after_membarrier_fails_passes_the_fallback_fence(void **state)
{
    (void)state;
    need_membarrier();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    solo_case c = {0}, d;
    worker s, o;
    solo_setup(&c, &al);
    pause_at *ps = pause_arm("insert:solo", ROLE_A, c.t);
    pause_at *pf = pause_arm("fence:fallback", ROLE_B, c.t);
    worker_start(&s, ROLE_A, do_solo_pair, &c);
    pause_wait(ps);
    assert_ptr_equal(__atomic_load_n(&c.t->solo_rec, __ATOMIC_ACQUIRE), c.rec);
    membarrier_fails();
    assert_int_equal(atab__writer_fence(c.t), 1);   /* the readers told, and fenced */
    assert_int_equal(c.t->fast_id, ATAB__FENCED);
    d = c;
    worker_start(&o, ROLE_B, do_intern_other, &d);
    pause_wait(pf);   /* a hang here: O ended the bias with no fence S had a part in */
    pause_release(pf);
    assert_true(worker_held(&o));   /* waiting for S's insert */
    assert_null(d.got);
    pause_release(ps);
    worker_join(&s);
    worker_join(&o);
    assert_non_null(c.got);
    assert_non_null(d.got);
    assert_false(d.was_solo);   /* ended, not moved: a move would need the fallback again */
    assert_int_equal(c.t->solo_moves, 0);
    assert_null(c.t->solo_rec);
    membarrier_serves_again();
    const atab_atom *atoms[] = {c.first, c.got, d.got};
    solo_check_and_free(&c, atoms, 3, &wa);
}

/* ---- a short key's insert takes its block in its probe's section ---- */

#define TAKE_N 64   /* the sweep threshold: the 64th release sweeps the queue */

typedef struct take_case {
    atab_table *t;
    atab__rec *rec;                 /* W's record */
    const atab_atom *dead[TAKE_N];  /* W's swept atoms, their blocks on its queue */
    const atab_atom *got;
    char fresh[16];                 /* the new key, 10 bytes */
    int ready;                      /* W swept, rec set (atomic) */
    sem_t go;
} take_case;

/* Would key s (absent) go into a free slot of its groups, its shard's
** array kept as it is (no growth: a grower waits for the registry lock
** that the paused sweep holds)? As atab__insert_made_locked decides. */
static int takes_a_free_slot(atab_table *t, const char *s, size_t len)
{
    uint64_t h = atab__table_hash(t, s, len);
    atab__shard *sh = atab__shard_of(t, h);
    atab__arr v = atab__arr_of(*sh->arr);
    if (sh->used >= sh->limit || v.overflow)
        return 0;
    unsigned c = atab__h_ctrl(h);
    atab__group ga = atab__group_read(v, atab__h_group(h, v.ngroups), c);
    if (ga.free)
        return 1;
    return !ga.empty && atab__group_read(v, atab__h_group2(h, v.ngroups), c).free != 0;
}

static void *do_take_gc(void *arg)
{
    take_case *c = arg;
    atab_gc(c->t);
    return NULL;
}

static void *do_churn_then_intern(void *arg)
{
    take_case *c = arg;
    char buf[16];
    for (int i = 0; i < TAKE_N; i++) {   /* 10 bytes each, as the new key */
        snprintf(buf, sizeof buf, "take-%05d", i);
        c->dead[i] = atab_intern_cstr(c->t, buf);
        assert_non_null(c->dead[i]);
        assert_int_equal(atab_release(c->t, c->dead[i]), ATAB_OK);
    }
    c->rec = my_rec(c->t);
    atab_atom **kept = atab__queue_kept(c->rec->queue, c->t->queue_cap);
    assert_non_null(kept[atab__class_of(10)]);   /* blocks for a new 10-byte atom */
    snprintf(c->fresh, sizeof c->fresh, "take-fresh");
    for (int i = 0; !takes_a_free_slot(c->t, c->fresh, 10); i++) {
        assert_true(i < 10000);   /* four digits keep the key 10 bytes */
        snprintf(c->fresh, sizeof c->fresh, "take-f%04d", i % 10000);
    }
    __atomic_store_n(&c->ready, 1, __ATOMIC_RELEASE);
    while (sem_wait(&c->go) != 0)
        ;
    c->got = atab_intern_cstr(c->t, c->fresh);   /* a miss: the insert */
    return NULL;
}

/* W swept its queue, whose blocks it keeps for its next new atoms; a full
** sweep F (atab_gc) flags every record, sees W out of any section and
** stops while it holds W's record ("flush:record"), before it takes W's
** queue away. W then interns a new key of the blocks' size, one that its
** groups have room for (takes_a_free_slot): its probe's section finds the
** record flagged, so the insert takes no block from the
** queue that F holds and carves one. Let go, F takes the queue and gives
** its blocks back; the new atom is whole, counts exact. */
static void insert_while_a_sweep_holds_its_record_takes_no_kept_block(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    take_case c;
    worker w, f;
    memset(&c, 0, sizeof c);
    sem_init(&c.go, 0, 0);
    setup_hooks();
    c.t = sweeping_table(&al, 7, TAKE_N);
    assert_non_null(c.t);
    worker_start(&w, ROLE_A, do_churn_then_intern, &c);
    while (!__atomic_load_n(&c.ready, __ATOMIC_ACQUIRE))
        usleep(1000);
    pause_at *pf = pause_arm("flush:record", ROLE_B, c.rec);   /* W waits on c.go */
    worker_start(&f, ROLE_B, do_take_gc, &c);
    pause_wait(pf);   /* F holds W's record */
    assert_int_equal(__atomic_load_n(&c.rec->flush_req, __ATOMIC_ACQUIRE), 1);
    sem_post(&c.go);
    worker_returned(&w);   /* its insert waits for nothing F holds (its exit
                              waits for F's registry lock) */
    assert_non_null(c.got);
    assert_string_equal(atab_chars(c.got), c.fresh);
    for (int i = 0; i < TAKE_N; i++)
        assert_ptr_not_equal(c.got, c.dead[i]);   /* no kept block: F holds them */
    pause_release(pf);
    worker_join(&f);
    worker_join(&w);
    sem_destroy(&c.go);
    atab_stats st;
    atab_get_stats(c.t, &st);
    assert_int_equal(st.misuse, 0);
    assert_int_equal(atab_count(c.t), 1);
    assert_int_equal(atab__count(c.got), 1);
    assert_ptr_equal(atab_lookup(c.t, c.fresh, 10), c.got);
    assert_int_equal(atab_release(c.t, c.got), ATAB_OK);
    assert_int_equal(atab_release(c.t, c.got), ATAB_OK);
    atab_gc(c.t);
    assert_int_equal(atab_count(c.t), 0);
    atab_table_free(c.t);
    assert_int_equal(wa.live, 0);
}

/* ---- a queue taken away between its owner's look and its take ---- */

typedef struct strand_case {
    atab_table *t;
    const atab_atom *y;   /* the main thread's; O keeps a spare of it */
    atab__rec *rec;       /* O's */
    sem_t go;
    int queued_again;     /* O had a queue again after its next releases */
    size_t left;          /* atab_count then */
} strand_case;

/* O: a spare of Y; two atoms of its own released (a queue of 2, full: its
** sweep, which stops before the take when the test says); when told, two
** more released, and what its queue and the table look like then. */
static void *do_spare_then_fill_queue(void *arg)
{
    strand_case *c = arg;
    char key[16];
    assert_ptr_equal(atab_intern_cstr(c->t, "strand-y"), c->y);
    assert_int_equal(atab_release(c->t, c->y), ATAB_OK);   /* the main thread holds Y */
    c->rec = my_rec(c->t);
    for (int i = 0; i < 2; i++) {   /* the second release sweeps: "queue:take" */
        snprintf(key, sizeof key, "strand-q%d", i);
        assert_int_equal(atab_release(c->t, atab_intern_cstr(c->t, key)), ATAB_OK);
    }
    sem_take(&c->go);
    for (int i = 0; i < 2; i++) {
        snprintf(key, sizeof key, "strand-r%d", i);
        assert_int_equal(atab_release(c->t, atab_intern_cstr(c->t, key)), ATAB_OK);
    }
    c->queued_again = __atomic_load_n(&c->rec->queue, __ATOMIC_RELAXED) != NULL &&
                      !c->rec->pending;
    c->left = atab_count(c->t);
    return NULL;
}

/* O saw its full queue and stops before it takes it away ("queue:take").
** A full sweep takes the queue from O's record first: its flush gives
** back every spare O's cache holds (Y's) before it empties and frees the
** queue, so O's cache is empty while O is held, and a report's flush after
** it has nothing of O's to bring to 0: no atom is parked on O's record
** (pending) while its queue is gone. Let go, O finds no queue to take;
** its next release to 0 makes one, and its queue sweeps go on. */
static void owner_held_before_its_take_while_a_sweep_and_a_report_flush_it(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    strand_case c;
    worker o;
    memset(&c, 0, sizeof c);
    sem_init(&c.go, 0, 0);
    setup_hooks();
    c.t = sweeping_table(&al, 7, 2);   /* a queue of 2 */
    assert_non_null(c.t);
    c.y = atab_intern_cstr(c.t, "strand-y");
    pause_at *p = pause_arm("queue:take", ROLE_A, NULL);
    worker_start(&o, ROLE_A, do_spare_then_fill_queue, &c);
    pause_wait(p);
    assert_int_equal(atab__count(c.y), 2);   /* this thread's and O's spare */
    assert_int_equal(atab_gc(c.t), 2);   /* O's queue and its two atoms */
    assert_null(__atomic_load_n(&c.rec->queue, __ATOMIC_RELAXED));
    assert_int_equal(atab__count(c.y), 1);   /* O's spare back */
    assert_int_equal(atab_release(c.t, c.y), ATAB_OK);   /* on this thread's queue */
    atab_stats st;
    assert_int_equal(atab_get_stats(c.t, &st), ATAB_OK);   /* a report's flush */
    assert_null(c.rec->pending);
    assert_int_equal(st.unused, 1);   /* Y */
    pause_release(p);
    sem_post(&c.go);
    worker_returned(&o);
    assert_true(c.queued_again);
    assert_int_equal(c.left, 1);   /* Y: O's queue sweep took its two */
    worker_join(&o);
    sem_destroy(&c.go);
    assert_int_equal(atab_gc(c.t), 1);
    assert_int_equal(atab_count(c.t), 0);
    atab_table_free(c.t);
    assert_int_equal(wa.live, 0);
}

/* ---- a cache entry left naming a freed atom's address ---- */

/* A thread with a record on a table that makes one call at a time when
** told, so that a test orders several threads' calls exactly. */
enum { ACT_INTERN, ACT_RELEASE, ACT_EXIT };

typedef struct actor {
    worker w;
    atab_table *t;
    int op;              /* the call to make */
    const char *key;     /* ACT_INTERN's */
    const atab_atom *a;  /* ACT_RELEASE's atom; ACT_INTERN's result */
    int rc;              /* ACT_RELEASE's */
    sem_t go, done;
} actor;

static void *actor_main(void *arg)
{
    actor *c = arg;
    assert_null(atab_lookup(c->t, "actor: absent", 13));   /* makes its record */
    sem_post(&c->done);
    for (;;) {
        while (sem_wait(&c->go) != 0)
            ;
        if (c->op == ACT_EXIT)
            return NULL;
        if (c->op == ACT_INTERN)
            c->a = atab_intern_cstr(c->t, c->key);
        else
            c->rc = atab_release(c->t, c->a);
        sem_post(&c->done);
    }
}

static void actor_wait(actor *c)
{
    struct timespec ts = deadline_in(WAIT_S * 1000L);
    int rc;
    while ((rc = sem_timedwait(&c->done, &ts)) != 0 && errno == EINTR)
        ;
    if (rc != 0)
        hang("an actor's call");
}

/* Starts c on t (a role no pause names) and waits until it has a record. */
static void actor_start(actor *c, atab_table *t, int role)
{
    memset(c, 0, sizeof *c);
    c->t = t;
    sem_init(&c->go, 0, 0);
    sem_init(&c->done, 0, 0);
    worker_start(&c->w, role, actor_main, c);
    actor_wait(c);
}

static const atab_atom *actor_intern(actor *c, const char *key)
{
    c->op = ACT_INTERN;
    c->key = key;
    sem_post(&c->go);
    actor_wait(c);
    return c->a;
}

static int actor_release(actor *c, const atab_atom *a)
{
    c->op = ACT_RELEASE;
    c->a = a;
    sem_post(&c->go);
    actor_wait(c);
    return c->rc;
}

/* Ends c's thread: thread exit gives its record back. */
static void actor_stop(actor *c)
{
    c->op = ACT_EXIT;
    sem_post(&c->go);
    worker_join(&c->w);
    sem_destroy(&c->go);
    sem_destroy(&c->done);
}

static void *do_gc_only(void *arg)
{
    atab_gc(arg);
    return NULL;
}

#define STALE_KEY "stale-k"   /* 7 bytes: the short-key path */

/* A full sweep S (atab_gc) flushes T's and U's records, then stops on the
** main thread's, the oldest ("flush:record"). T and U each intern A
** (STALE_KEY): their cache entries for A are made after their flush. The
** main thread releases the three references while S holds its record
** (straight from the count, unqueued), and S kills and frees A: T's and
** U's entries still name A's address, with no spares. T's next intern
** makes A2 in A's block (the first free block of its size class), same
** key, same hash, so both entries name A2 as well. U's intern and T's
** release keep spares of A2 in those entries; U then releases A2 once
** more than it holds. Every cache that keeps spares of an atom marks it
** (atom.h: SPARED), so U's queue sweep leaves A2 to a full sweep, whose
** flush takes the spares back; T's next intern finds A2 live (the
** over-release counted as misuse), the table's atom for the key. */
static void an_entry_that_outlived_its_atom_marks_the_new_atom_at_its_address_spared(void **state)
{
    (void)state;
    need_sections();
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    actor tt, uu;
    worker s;
    char fill[16];
    setup_hooks();
    atab_table *t = sweeping_table(&al, 7, 4);   /* queues of 4 */
    assert_non_null(t);
    const atab_atom *a = atab_intern_cstr(t, STALE_KEY);   /* the main thread's record first */
    atab__rec *mine = my_rec(t);
    actor_start(&tt, t, ROLE_A);
    actor_start(&uu, t, ROLE_C);
    pause_at *ps = pause_arm("flush:record", ROLE_B, mine);
    worker_start(&s, ROLE_B, do_gc_only, t);
    pause_wait(ps);   /* T's and U's records flushed; the main thread's held */
    assert_ptr_equal(actor_intern(&tt, STALE_KEY), a);
    assert_ptr_equal(actor_intern(&uu, STALE_KEY), a);
    for (int i = 0; i < 3; i++)
        assert_int_equal(atab_release(t, a), ATAB_OK);
    assert_int_equal(atab__count(a), 0);
    pause_release(ps);
    worker_join(&s);
    assert_null(atab_lookup(t, STALE_KEY, 7));   /* A was freed */

    const atab_atom *a2 = actor_intern(&tt, STALE_KEY);
    assert_ptr_equal(a2, a);   /* A's block again: the entries name A2 */
    assert_ptr_equal(actor_intern(&uu, STALE_KEY), a2);
    assert_int_equal(actor_release(&tt, a2), ATAB_OK);   /* a spare in T's entry */
    assert_int_equal(actor_release(&uu, a2), ATAB_OK);   /* U's last reference */
    actor_release(&uu, a2);                              /* one too many: queued */
    for (int i = 0; i < 3; i++) {   /* U's queue full: swept */
        snprintf(fill, sizeof fill, "filler-%02d", i);
        assert_int_equal(actor_release(&uu, actor_intern(&uu, fill)), ATAB_OK);
    }
    const atab_atom *got = actor_intern(&tt, STALE_KEY);
    assert_ptr_equal(got, a2);
    assert_true(atab__count(got) >= 1 && atab__count(got) < ATAB__REF_SAT);   /* not killed */
    assert_ptr_equal(atab_lookup(t, STALE_KEY, 7), got);   /* still the table's */
    assert_int_equal(atab_release(t, got), ATAB_OK);
    assert_int_equal(actor_release(&tt, got), ATAB_OK);
    atab_stats st;
    atab_get_stats(t, &st);
    assert_int_equal(st.misuse, 1);   /* U's over-release, found in T's entry */
    actor_stop(&tt);
    actor_stop(&uu);
    atab_gc(t);
    assert_int_equal(atab_count(t), 0);
    atab_table_free(t);
    assert_int_equal(wa.live, 0);
}

/* Points that no pause names, and threads that no pause names, pass
** through: a busy table with the hook installed and nothing armed. */
static void unarmed_points_pass_through(void **state)
{
    (void)state;
    setup_hooks();
    my_role = ROLE_A;   /* a role with no pause armed */
    atab_table *t = race_table(NULL);
    const atab_atom *a = atab_intern_cstr(t, "pass");
    assert_ptr_equal(atab_external_acquire(t, a), a);
    assert_int_equal(atab_release(t, a), ATAB_OK);
    assert_int_equal(atab_gc(t), 0);   /* the handle holds it */
    assert_int_equal(atab_external_release(t, a), ATAB_OK);
    assert_int_equal(atab_gc(t), 1);
    atab_table_free(t);
    my_role = 0;
}

/* ---- a run of new atoms and the free lists ---- */

static int g_takes;   /* "chunk:take" points passed */

static void count_takes(const char *point, const void *arg)
{
    (void)arg;
    if (strcmp(point, "chunk:take") == 0)
        __atomic_add_fetch(&g_takes, 1, __ATOMIC_RELAXED);
}

static size_t blocks_in(const atab_atom *list)
{
    size_t n = 0;
    for (; list; list = atab__block_next(list))
        n++;
    return n;
}

/* A thread whose chunk has no room left takes the table's freed blocks of
** a size class under chunk_lock once for a run of new atoms, not once an
** atom: the first takes its block and up to ATAB__CHUNK_TAKE_MORE more,
** which the thread keeps with its recycled blocks (and the report counts
** so), and the next ones take those with no lock. Every new atom is in a
** freed block: no new chunk. */
static void new_atoms_take_freed_blocks_under_one_lock_a_run(void **state)
{
    (void)state;
    need_sections();
    enum { N = 80, MADE = ATAB__CHUNK_TAKE_MORE + 2 };
    atab_table *t = sweeping_table(NULL, 11, 64);
    assert_non_null(t);
    const atab_atom *held[N];
    char buf[32];
    int k = 0;
    for (int i = 0; i < N; i++) {   /* 10 bytes: one size class */
        snprintf(buf, sizeof buf, "held-%05d", k++);
        assert_non_null(held[i] = atab_intern_cstr(t, buf));
    }
    atab__rec *r = atab__rec_of(t);
    assert_non_null(r);
    size_t bytes = atab__block_bytes(10), class = atab__class_of(10);
    while (atab__bump_fits(&r->bump, bytes)) {   /* the thread's chunk filled */
        snprintf(buf, sizeof buf, "held-%05d", k++);
        assert_non_null(atab_intern_cstr(t, buf));   /* held: freed with the table */
    }
    for (int i = 0; i < N; i += 2)   /* every other one: their chunks stay */
        assert_int_equal(atab_release(t, held[i]), ATAB_OK);
    atab_gc(t);   /* their blocks onto the table's free list, its queue gone */
    assert_int_equal(atab_release(t, held[1]), ATAB_OK);   /* a queue again */
    assert_non_null(__atomic_load_n(&r->queue, __ATOMIC_RELAXED));
    assert_false(atab__bump_fits(&r->bump, bytes));
    size_t freed = blocks_in(t->free_blocks[class]);
    assert_int_equal(freed, N / 2);
    assert_null(report_amount(t, "explicit/atoms/dynamic/recycled", 0) ? t : NULL);
    uint32_t chunks = t->n_chunks;
    g_takes = 0;
    __atomic_store_n(&atab__test_hook, count_takes, __ATOMIC_RELEASE);
    for (int i = 0; i < MADE; i++) {
        snprintf(buf, sizeof buf, "made-%05d", i);
        const atab_atom *a = atab_intern_cstr(t, buf);
        assert_non_null(a);
        assert_string_equal(atab_chars(a), buf);
        int was_freed = 0;
        for (int j = 0; j < N; j += 2)
            was_freed |= a == held[j];
        assert_true(was_freed);
        if (i == 0) {
            assert_int_equal(__atomic_load_n(&g_takes, __ATOMIC_RELAXED), 1);
            assert_int_equal(report_amount(t, "explicit/atoms/dynamic/recycled", 0),
                             (int64_t)(ATAB__CHUNK_TAKE_MORE * bytes));
        }
    }
    /* the 17th new atom takes the next run */
    assert_int_equal(__atomic_load_n(&g_takes, __ATOMIC_RELAXED), 2);
    assert_int_equal(blocks_in(t->free_blocks[class]), freed - 2 * (ATAB__CHUNK_TAKE_MORE + 1));
    assert_int_equal(t->n_chunks, chunks);
    pauses_reset();
    assert_int_equal(atab_count(t), (size_t)(k - N / 2 + MADE));   /* held[1] queued, not swept */
    atab_table_free(t);
}

/* ---- a run of free blocks one thread keeps, and another's new atom ---- */

typedef struct hoard_case {
    atab_table *t;
    int step, done;   /* the test's step, the worker's last done (atomic) */
    const atab_atom *held[512];
    int n_held;
    const atab_atom *made;
} hoard_case;

static void hoard_wait(int *at, int v)
{
    for (long ms = 0; __atomic_load_n(at, __ATOMIC_ACQUIRE) < v; ms++) {
        if (ms >= WAIT_S * 1000L)
            hang("a hoard step");
        usleep(1000);
    }
}

/* W: fills its chunk with 10-byte atoms (held); then, at step 2, releases
** one (its queue is made); at step 3 interns one 10-byte key more. */
static void *do_hoard(void *arg)
{
    hoard_case *c = arg;
    char buf[32];
    size_t bytes = atab__block_bytes(10);
    atab__rec *r = NULL;
    do {
        snprintf(buf, sizeof buf, "w-held-%03d", c->n_held);
        c->held[c->n_held++] = atab_intern_cstr(c->t, buf);
        r = atab__rec_of(c->t);
    } while (atab__bump_fits(&r->bump, bytes));
    __atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
    hoard_wait(&c->step, 2);
    atab_release(c->t, c->held[0]);
    c->held[0] = NULL;
    __atomic_store_n(&c->done, 2, __ATOMIC_RELEASE);
    hoard_wait(&c->step, 3);
    c->made = atab_intern_cstr(c->t, "w-new-0000");
    __atomic_store_n(&c->done, 3, __ATOMIC_RELEASE);
    hoard_wait(&c->step, 4);
    return NULL;
}

/* A table at its memory limit whose free list of a size class holds two
** blocks: W's new atom of that class takes one, and the main thread's new
** atom of the class the other; neither is refused while a freed block of
** its class is on the table's lists. (W kept the second one with its
** recycled blocks: the main thread got ATAB_ELIMIT.) */
static void at_the_limit_a_thread_takes_no_freed_block_another_needs(void **state)
{
    (void)state;
    need_sections();
    hoard_case c;
    memset(&c, 0, sizeof c);
    atab_options o = plain_options(NULL, 13);
    o.sweep_threshold = 64;
    o.memory_limit = (size_t)1 << 30;   /* bytes counted in the table: lowered below */
    assert_non_null(c.t = atab_table_new(&o));
    atab_table *t = c.t;
    worker w;
    worker_start(&w, ROLE_A, do_hoard, &c);
    hoard_wait(&c.done, 1);
    enum { N = 8 };
    const atab_atom *held[64];
    char buf[32];
    int k = 0;
    size_t bytes = atab__block_bytes(10), class = atab__class_of(10);
    do {
        snprintf(buf, sizeof buf, "m-held-%03d", k);
        assert_non_null(held[k] = atab_intern_cstr(t, buf));
        k++;
    } while (k < N || atab__bump_fits(&atab__rec_of(t)->bump, bytes));
    assert_true(k < 64);
    assert_int_equal(atab_release(t, held[0]), ATAB_OK);
    assert_int_equal(atab_release(t, held[2]), ATAB_OK);
    atab_gc(t);   /* two blocks of the class on the table's free list; the queues gone */
    assert_int_equal(blocks_in(t->free_blocks[class]), 2);
    __atomic_store_n(&c.step, 2, __ATOMIC_RELEASE);
    hoard_wait(&c.done, 2);
    t->memory_limit = __atomic_load_n(&t->bytes, __ATOMIC_RELAXED);   /* no new chunk */
    __atomic_store_n(&c.step, 3, __ATOMIC_RELEASE);
    hoard_wait(&c.done, 3);
    assert_non_null(c.made);
    const atab_atom *a = atab_intern_cstr(t, "m-new-0000");
    atab_status err = atab_last_error();
    __atomic_store_n(&c.step, 4, __ATOMIC_RELEASE);
    worker_join(&w);
    if (!a)
        fprintf(stderr, "refused: %d, W's kept blocks went back at its exit: %zu free\n",
                (int)err, blocks_in(t->free_blocks[class]));
    assert_non_null(a);
    t->memory_limit = (size_t)1 << 30;
    atab_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unarmed_points_pass_through),
        cmocka_unit_test(release_paused_after_its_drop_while_free_runs),
        cmocka_unit_test(release_paused_after_its_drop_then_goes_before_free),
        cmocka_unit_test(free_paused_before_closing_while_the_last_release_runs),
        cmocka_unit_test(free_paused_before_closing_then_goes_before_the_release),
        cmocka_unit_test(revive_paused_before_cas_holds_a_sweep_at_its_flush),
        cmocka_unit_test(sweep_paused_before_kill_then_kills_first_and_revive_makes_a_new_atom),
        cmocka_unit_test(sweep_paused_before_kill_while_a_thread_revives_keeps_the_atom),
        cmocka_unit_test(sweep_paused_before_its_grace_period_while_the_string_is_interned_again),
        cmocka_unit_test(queue_sweep_paused_before_kill_while_a_reader_revives_keeps_the_atom),
        cmocka_unit_test(queue_sweep_paused_before_its_grace_period_while_the_string_is_interned),
        cmocka_unit_test(queue_sweep_reuses_a_block_only_after_the_reader_that_found_it_left),
        cmocka_unit_test(a_grace_period_another_thread_ran_serves_the_waiting_batch),
        cmocka_unit_test(a_grace_period_begun_before_the_unlink_does_not_serve_it),
        cmocka_unit_test(a_batch_with_an_atom_of_its_own_allocation_waits_at_once),
        cmocka_unit_test(exiting_thread_paused_with_its_record_while_a_sweep_flushes_it),
        cmocka_unit_test(flush_paused_on_a_record_while_its_thread_exits),
        cmocka_unit_test(exit_and_flush_both_paused_in_every_order),
        cmocka_unit_test(stats_count_an_exiting_threads_bytes_while_its_exit_waits),
        cmocka_unit_test(reader_paused_on_the_old_array_while_the_shard_grows),
        cmocka_unit_test(reader_paused_on_the_old_array_leaves_before_the_grace_period),
        cmocka_unit_test(reader_after_the_grow_reads_the_new_array),
        cmocka_unit_test(grower_with_a_memory_limit_waits_for_the_reader_then_frees),
        cmocka_unit_test(reader_of_a_key_a_kick_moves_from_a_to_b_finds_it_long_key),
        cmocka_unit_test(reader_of_a_key_a_kick_moves_from_a_to_b_finds_it_short_key),
        cmocka_unit_test(a_lookup_that_read_group_a_before_it_filled_finds_a_key_a_kick_moves_long_key),
        cmocka_unit_test(a_lookup_that_read_group_a_before_it_filled_finds_a_key_a_kick_moves_short_key),
        cmocka_unit_test(an_intern_that_read_group_a_before_it_filled_gets_the_key_a_kick_moves_long_key),
        cmocka_unit_test(an_intern_that_read_group_a_before_it_filled_gets_the_key_a_kick_moves_short_key),
        cmocka_unit_test(a_release_whose_check_read_group_a_before_it_filled_is_taken_when_a_kick_moves_it),
        cmocka_unit_test(a_lookup_past_group_b_paused_while_its_shard_grows_finds_its_key),
        cmocka_unit_test(insert_paused_with_its_atom_made_while_the_key_is_interned),
        cmocka_unit_test(insert_paused_with_its_atom_made_while_its_shard_grows),
        cmocka_unit_test(insert_paused_with_its_atom_made_while_another_key_takes_its_room),
        cmocka_unit_test(a_solo_insert_paused_midway_holds_another_threads_insert),
        cmocka_unit_test(the_solo_threads_exit_leaves_the_table_to_the_next_thread),
        cmocka_unit_test(another_threads_hits_leave_the_bias),
        cmocka_unit_test(a_first_lock_from_a_thread_with_no_record_ends_the_bias),
        cmocka_unit_test(the_bias_passes_between_threads_a_bounded_number_of_times),
        cmocka_unit_test(a_lock_held_across_a_move_holds_the_new_solo_threads_insert),
        cmocka_unit_test(a_failed_membarrier_tells_readers_to_fence_and_passes_the_fallback_once),
        cmocka_unit_test(a_second_writer_during_the_fallback_makes_its_own),
        cmocka_unit_test(ending_the_bias_after_membarrier_fails_passes_the_fallback_fence),
        cmocka_unit_test(insert_while_a_sweep_holds_its_record_takes_no_kept_block),
        cmocka_unit_test(owner_held_before_its_take_while_a_sweep_and_a_report_flush_it),
        cmocka_unit_test(an_entry_that_outlived_its_atom_marks_the_new_atom_at_its_address_spared),
        cmocka_unit_test(new_atoms_take_freed_blocks_under_one_lock_a_run),
        cmocka_unit_test(at_the_limit_a_thread_takes_no_freed_block_another_needs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
