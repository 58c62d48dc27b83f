/* SPDX-License-Identifier: MIT */
/*
** test_fork.c - fork() in a multithreaded host: a child must not hang on a
** lock a parent thread held at the fork. Around fork() the library takes
** every table's locks, and the child gives back the records
** of the threads that did not come along (src/thread.c, "fork"), so the
** child can use every table: intern, release, gc, exact stats, free. A
** child that hangs is killed at a deadline and fails the test.
*/
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "test_hooks.h"

#define CHILD_S 10   /* a child not done by then is hung */

/* How many forks the hammer test makes (ATAB_FORKS; fewer under valgrind). */
static int fork_count(void)
{
    const char *s = getenv("ATAB_FORKS");
    return s && atoi(s) > 0 ? atoi(s) : 100;
}

/* The child's work on t: every unused atom freed, then new atoms counted
** exactly; `extra` unused atoms expected from the parent's threads' spares.
** Returns 0, or a code saying which check failed. */
static int child_use(atab_table *t, size_t extra)
{
    enum { K = 40 };
    const atab_atom *mine[K];
    atab_stats st, now;
    char buf[48];
    size_t freed = atab_gc(t);   /* waits for no thread: none is left */
    if (extra && freed < extra) {
        fprintf(stderr, "child: gc freed %zu, expected %zu\n", freed, extra);
        return 10;
    }
    if (atab_get_stats(t, &st) != ATAB_OK || st.unused != 0)
        return 11;
    for (int i = 0; i < K; i++) {
        snprintf(buf, sizeof buf, "child-%d-%d", (int)getpid(), i);
        if (!(mine[i] = atab_intern_cstr(t, buf)))
            return 12;
    }
    if (atab_get_stats(t, &now) != ATAB_OK || now.atoms != st.atoms + K || now.unused != 0)
        return 13;
    for (int i = 0; i < K; i++)
        if (atab_release(t, mine[i]) != ATAB_OK)
            return 14;
    if (atab_get_stats(t, &now) != ATAB_OK || now.unused != K || now.misuse != st.misuse)
        return 15;
    if (atab_gc(t) != K || atab_count(t) != st.atoms)
        return 16;
    atab_table_free(t);
    return 0;
}

/* The first step of every child (a fork handler registered before the
** library's, so it runs first, even before the library's own): a crash
** kills the child with its signal (the parent sees it: wait_child), where
** cmocka's handler, inherited through fork(), would go on with the next
** test inside the child. */
static void child_begins(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
}

/* Waits for the child with a deadline; a child still running then is
** killed. Returns its exit status, or -1 for a hang, -2 for a signal. */
static int wait_child(pid_t pid)
{
    int status;
    for (int ms = 0; ms < CHILD_S * 1000; ms++) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
        usleep(1000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

/* The parent's side of a fork whose return fork_still_waits watches: sets
** *forked, then the child's status as wait_child says it (-3: no fork). */
static int forked_parent(pid_t pid, int *forked)
{
    __atomic_store_n(forked, 1, __ATOMIC_RELEASE);
    return pid < 0 ? -3 : wait_child(pid);
}

/* ---- forks while threads hammer several tables ---- */

#define N_TABLES 3
#define N_THREADS 4
#define SLOTS 32

static atab_table *g_tables[N_TABLES];
static int g_stop;

/* The sanitizers' allocators (GCC 12's) are not fork-safe: a thread that
** holds one of their internal locks at fork() leaves the child hung in its
** first malloc. Under them the hammering threads hold still between two
** calls while the parent forks (g_hold, g_parked); the plain build, on the
** C library's fork-safe malloc, forks in the middle of their calls. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HOLD_FOR_FORK 1
#else
#define HOLD_FOR_FORK 0
#endif
static int g_hold, g_parked;

static void park_if_held(void)
{
    if (!HOLD_FOR_FORK || !__atomic_load_n(&g_hold, __ATOMIC_ACQUIRE))
        return;
    __atomic_add_fetch(&g_parked, 1, __ATOMIC_ACQ_REL);
    while (__atomic_load_n(&g_hold, __ATOMIC_ACQUIRE))
        sched_yield();
    __atomic_sub_fetch(&g_parked, 1, __ATOMIC_ACQ_REL);
}

static int report_nothing(void *ud, const char *path, int kind, int units, int64_t amount,
                          const char *description)
{
    (void)ud; (void)path; (void)kind; (void)units; (void)amount; (void)description;
    return 0;
}

/* Interns and releases (some held a while), sweeps, stats and reports, on
** every table, until told to stop. */
static void *hammer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    const atab_atom *held[N_TABLES][SLOTS] = {{0}};
    char buf[32];
    atab_stats st;
    while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED)) {
        park_if_held();
        int ti = rand_r(&seed) % N_TABLES, op = rand_r(&seed) % 64;
        atab_table *t = g_tables[ti];
        snprintf(buf, sizeof buf, "%s%u", op & 1 ? "long-hammered-key-" : "h", rand_r(&seed) % 400);
        if (op == 0) {
            atab_gc(t);
        } else if (op == 1) {
            atab_get_stats(t, &st);
        } else if (op == 2) {
            atab_report(t, report_nothing, NULL);
        } else if (op < 12) {
            int s = rand_r(&seed) % SLOTS;
            if (held[ti][s])
                atab_release(t, held[ti][s]);
            held[ti][s] = atab_intern_cstr(t, buf);
        } else {
            const atab_atom *a = atab_intern_cstr(t, buf);
            if (a)
                atab_release(t, a);
        }
    }
    for (int ti = 0; ti < N_TABLES; ti++)
        for (int s = 0; s < SLOTS; s++)
            if (held[ti][s])
                atab_release(g_tables[ti], held[ti][s]);
    return NULL;
}

static atab_table *small_threshold_table(void)
{
    atab_options o;
    memset(&o, 0, sizeof o);
    o.sweep_threshold = 64;   /* releases sweep often */
    return atab_table_new(&o);
}

static void a_child_forked_while_threads_hammer_uses_every_table(void **state)
{
    (void)state;
    pthread_t th[N_THREADS];
    int forks = fork_count(), hung = 0, failed = 0;
    pauses_reset();
    for (int i = 0; i < N_TABLES; i++)
        assert_non_null(g_tables[i] = small_threshold_table());
    __atomic_store_n(&g_stop, 0, __ATOMIC_RELAXED);
    for (int i = 0; i < N_THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, hammer, (void *)(uintptr_t)(i + 1)), 0);
    for (int n = 0; n < forks; n++) {
        usleep(500);   /* let the threads get into their work */
        if (HOLD_FOR_FORK) {
            __atomic_store_n(&g_hold, 1, __ATOMIC_RELEASE);
            while (__atomic_load_n(&g_parked, __ATOMIC_ACQUIRE) < N_THREADS)
                sched_yield();
        }
        pid_t pid = fork();
        __atomic_store_n(&g_hold, 0, __ATOMIC_RELEASE);
        assert_true(pid >= 0);
        if (pid == 0) {
            for (int i = 0; i < N_TABLES; i++) {
                int rc = child_use(g_tables[i], 0);
                if (rc)
                    _exit(rc);
            }
            _exit(0);
        }
        int rc = wait_child(pid);
        if (rc == -1) {
            fprintf(stderr, "fork %d: the child hung\n", n);
            hung++;
            break;
        } else if (rc != 0) {
            fprintf(stderr, "fork %d: child exited with %d\n", n, rc);
            failed++;
        }
    }
    __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(hung, 0);
    assert_int_equal(failed, 0);
    for (int i = 0; i < N_TABLES; i++) {   /* the parent's tables are intact */
        atab_stats st;
        atab_gc(g_tables[i]);
        atab_get_stats(g_tables[i], &st);
        assert_int_equal(st.atoms, 0);
        assert_int_equal(st.misuse, 0);
        atab_table_free(g_tables[i]);
    }
}

/* ---- forks while a thread is held at a pause point ---- */

enum { ROLE_A = 1, ROLE_B = 2, ROLE_C = 3 };
#define LONG_KEY "a-key-long-enough-for-the-general-probe"

typedef struct held_case {
    atab_table *t;
    int spared;    /* the reader left its spare (atomic) */
    sem_t armed;   /* the reader may go on to its lookup */
    const atab_atom *got;
    size_t freed;
    int child_rc;
} held_case;

/* Leaves a spare in this thread's cache, then looks up LONG_KEY once the
** test has armed the pause that holds it in its section (probe:array). */
static void *do_spare_then_read(void *arg)
{
    held_case *c = arg;
    atab_release(c->t, atab_intern_cstr(c->t, "spare-in-a-cache"));
    __atomic_store_n(&c->spared, 1, __ATOMIC_RELEASE);
    while (sem_wait(&c->armed) != 0)
        ;
    c->got = atab_lookup(c->t, LONG_KEY, strlen(LONG_KEY));
    return NULL;
}

/* A thread held inside its read-side section, with a spare in its cache:
** the child's gc waits for no section (the thread's record is gone) and
** frees the atom whose only reference was that spare. */
static void a_child_forked_while_a_reader_is_in_its_section_does_not_wait_for_it(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records, no sections in debug builds */
#endif
    held_case c = {0};
    worker r;
    pauses_reset();
    c.t = race_table(NULL);
    const atab_atom *x = atab_intern_cstr(c.t, LONG_KEY);
    sem_init(&c.armed, 0, 0);
    worker_start(&r, ROLE_A, do_spare_then_read, &c);
    while (!__atomic_load_n(&c.spared, __ATOMIC_ACQUIRE))
        usleep(1000);
    pause_at *pr = pause_arm("probe:array", ROLE_A, c.t);
    sem_post(&c.armed);
    pause_wait(pr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* "spare-in-a-cache" is unused once the reader's record is given
        ** back, and LONG_KEY once this reference goes */
        atab_release(c.t, x);
        _exit(child_use(c.t, 2));
    }
    int rc = wait_child(pid);
    pause_release(pr);
    worker_join(&r);
    assert_int_equal(rc, 0);
    assert_ptr_equal(c.got, x);   /* the parent's reader went on */
    assert_int_equal(atab_release(c.t, x), ATAB_OK);
    assert_int_equal(atab_release(c.t, x), ATAB_OK);
    assert_int_equal(atab_gc(c.t), 2);
    atab_table_free(c.t);
    sem_destroy(&c.armed);
}

static void *do_gc_held(void *arg)
{
    held_case *c = arg;
    c->freed = atab_gc(c->t);
    return NULL;
}

static void *do_fork(void *arg)
{
    held_case *c = arg;
    pid_t pid = fork();
    if (pid == 0) {
        atab_release(c->t, c->got);   /* the child's copy of the main thread's reference */
        _exit(child_use(c->t, 1));
    }
    c->child_rc = pid < 0 ? -3 : wait_child(pid);
    return NULL;
}

/* A sweep held before its kill (sweep_lock and a shard's lock taken): the
** fork waits for the sweep, so that the child has no lock held by a thread
** it does not have; then the child sweeps, and frees, by itself. */
static void a_fork_waits_for_a_sweep_in_progress_and_the_child_sweeps(void **state)
{
    (void)state;
    held_case c = {0};
    worker s, f;
    pauses_reset();
    c.t = race_table(NULL);
    const atab_atom *a = atab_intern_cstr(c.t, "to-be-swept");
    atab_release(c.t, a);
    c.got = atab_intern_cstr(c.t, "unused-in-the-child");   /* held in the parent */
    pause_at *ps = pause_arm("sweep:kill", ROLE_B, a);
    worker_start(&s, ROLE_B, do_gc_held, &c);
    pause_wait(ps);
    worker_start(&f, ROLE_C, do_fork, &c);
    assert_true(worker_held(&f));   /* fork() has not returned: the sweep has the locks */
    pause_release(ps);
    worker_join(&s);
    worker_join(&f);
    assert_int_equal(c.freed, 1);
    assert_int_equal(c.child_rc, 0);
    assert_int_equal(atab_gc(c.t), 0);   /* the parent's reference holds */
    assert_int_equal(atab_release(c.t, c.got), ATAB_OK);
    assert_int_equal(atab_gc(c.t), 1);
    atab_table_free(c.t);
}

/* A thread whose cache holds spares of an atom it also holds once, parked
** outside any section at the fork. */
typedef struct spares_case {
    atab_table *t;
    const atab_atom *a;
    sem_t ready, done;
} spares_case;

static void *do_hits_then_park(void *arg)
{
    spares_case *c = arg;
    for (int i = 0; i < 40; i++)   /* hits: spares taken in bulk */
        atab_intern_cstr(c->t, atab_chars(c->a));
    for (int i = 0; i < 39; i++)
        atab_release(c->t, c->a);   /* one reference kept */
    sem_post(&c->ready);
    while (sem_wait(&c->done) != 0)
        ;
    atab_release(c->t, c->a);
    return NULL;
}

static int count_of(void *ud, const atab_atom *a, uint32_t count)
{
    (void)a;
    *(uint32_t *)ud = count;
    return ATAB_OK;
}

/* The child's count of an atom is what holders hold: the spares the
** parent's other thread kept in its cache go back to the count, the
** reference it held stays (its holder is gone: never freed in the child). */
static void a_child_counts_exactly_the_references_a_parent_thread_held(void **state)
{
    (void)state;
    spares_case c;
    pthread_t th;
    c.t = race_table(NULL);
    c.a = atab_intern_cstr(c.t, "hit-from-a-cache");
    sem_init(&c.ready, 0, 0);
    sem_init(&c.done, 0, 0);
    assert_int_equal(pthread_create(&th, NULL, do_hits_then_park, &c), 0);
    while (sem_wait(&c.ready) != 0)
        ;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        uint32_t count = 0;
        int rc = atab_foreach(c.t, count_of, &count) != ATAB_OK ? 20
                 : count != 2                                ? 21   /* this thread's + the parked one's */
                 : atab_release(c.t, c.a) != ATAB_OK         ? 22
                 : atab_gc(c.t) != 0                         ? 23   /* the vanished holder's stays */
                                                             : 0;
        _exit(rc);
    }
    assert_int_equal(wait_child(pid), 0);
    sem_post(&c.done);
    pthread_join(th, NULL);
    assert_int_equal(atab_release(c.t, c.a), ATAB_OK);
    assert_int_equal(atab_gc(c.t), 1);
    atab_table_free(c.t);
    sem_destroy(&c.ready);
    sem_destroy(&c.done);
}

/* ---- forks while a thread queues an atom ---- */

typedef struct queue_case {
    atab_table *t;
} queue_case;

/* Makes this thread's queue (its first unused atom waits for it), then
** leaves a second atom unused: queued, where the test holds it. */
static void *do_queue_two(void *arg)
{
    queue_case *c = arg;
    atab_release(c->t, atab_intern_cstr(c->t, "makes-the-queue"));
    atab_release(c->t, atab_intern_cstr(c->t, "queued-at-fork"));
    return NULL;
}

/* A thread held between the queue slot it wrote and the count that covers
** it (queue:slot): the child sees the count without the slot, unqueues
** what the count covers, and finds the other atom by its queued mark, so
** its gc frees both (a count published before its slot would have had
** the child read a slot never written). */
static void a_child_forked_while_a_thread_queues_an_atom_frees_it(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records, no queues in debug builds */
#endif
    queue_case c;
    worker w;
    pauses_reset();
    assert_non_null(c.t = small_threshold_table());
    pause_at *p = pause_arm("queue:slot", ROLE_A, NULL);
    worker_start(&w, ROLE_A, do_queue_two, &c);
    pause_wait(p);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_use(c.t, 2));
    int rc = wait_child(pid);
    pause_release(p);
    worker_join(&w);
    assert_int_equal(rc, 0);
    assert_int_equal(atab_gc(c.t), 2);   /* the parent's thread queued both */
    atab_table_free(c.t);
}

/* ---- a fork that must wait for a held thread ---- */

/* Set by a prepare handler registered after the library's, so that it runs
** before the library's own: fork() has been entered (atomic). */
static int fork_entered;
static pthread_once_t entered_once = PTHREAD_ONCE_INIT;

static void note_fork_entered(void)
{
    __atomic_store_n(&fork_entered, 1, __ATOMIC_RELEASE);
}

static void register_entered(void)
{
    pthread_atfork(note_fork_entered, NULL, NULL);
}

/* Starts worker f (role C) on fork_fn(arg), which sets *forked once fork()
** returned in the parent, and says whether fork() was still under way
** QUIET_MS after f entered it. A table must exist (the library's handlers
** registered first). */
static int fork_still_waits(worker *f, void *(*fork_fn)(void *), void *arg, const int *forked)
{
    pthread_once(&entered_once, register_entered);
    __atomic_store_n(&fork_entered, 0, __ATOMIC_RELAXED);
    worker_start(f, ROLE_C, fork_fn, arg);
    for (int ms = 0; ms < CHILD_S * 1000 && !__atomic_load_n(&fork_entered, __ATOMIC_ACQUIRE);
         ms++)
        usleep(1000);
    assert_true(__atomic_load_n(&fork_entered, __ATOMIC_ACQUIRE));
    for (int ms = 0; ms < QUIET_MS && !__atomic_load_n(forked, __ATOMIC_ACQUIRE); ms++)
        usleep(1000);
    return !__atomic_load_n(forked, __ATOMIC_ACQUIRE);
}

/* ---- forks while a thread has its queue away for a sweep ---- */

#define AWAY_LONG_LEN 300   /* past the chunks' largest block: an allocation of its own */

typedef struct away_case {
    atab_table *t;
    watch_alloc wa;     /* the table's allocator */
    atab_allocator al;
    char long_key[AWAY_LONG_LEN + 1];
    int forked;         /* fork() returned in the parent (atomic) */
    int child_rc;
} away_case;

/* Leaves two atoms unused, a short one and one of its own allocation: the
** second fills this thread's queue of 2, and the thread takes it away to
** sweep it (held at queue:free, both atoms killed and unlinked). */
static void *do_fill_the_queue(void *arg)
{
    away_case *c = arg;
    atab_release(c->t, atab_intern_cstr(c->t, "away-short"));
    atab_release(c->t, atab_intern_cstr(c->t, c->long_key));
    return NULL;
}

/* The child sweeps (its atoms were W's, unused), finds the table empty,
** frees it, and checks that every block of its allocator came back. */
static void *do_fork_away(void *arg)
{
    away_case *c = arg;
    pid_t pid = fork();
    if (pid == 0) {
        atab_gc(c->t);
        int rc = atab_count(c->t) != 0 ? 31 : 0;
        atab_table_free(c->t);
        if (c->wa.live != 0)
            fprintf(stderr, "child: %ld blocks never came back\n", c->wa.live);
        _exit(rc ? rc : c->wa.live != 0 ? 30 : 0);
    }
    c->child_rc = forked_parent(pid, &c->forked);
    return NULL;
}

/* A thread W took its queue away to sweep it and stops after its kills,
** before its grace period (queue:free), its two atoms unlinked and the
** queue's block in its hands alone. A fork from another thread F waits
** until W gives the queue back, so that the child, where W is not, has no
** queue away: it frees the table with every block back to the allocator. */
static void a_fork_waits_for_a_queue_away_for_its_sweep_and_the_child_leaks_nothing(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records, no queues in debug builds */
#endif
    away_case c;
    worker w, f;
    memset(&c, 0, sizeof c);
    pauses_reset();
    memset(c.long_key, 'q', AWAY_LONG_LEN);
    c.al = wa_allocator(&c.wa);
    assert_non_null(c.t = sweeping_table(&c.al, 7, 2));   /* queues of 2 */
    pause_at *pw = pause_arm("queue:free", ROLE_A, NULL);
    worker_start(&w, ROLE_A, do_fill_the_queue, &c);
    pause_wait(pw);
    assert_null(atab_lookup(c.t, "away-short", 10));   /* unlinked */
    int waited = fork_still_waits(&f, do_fork_away, &c, &c.forked);
    pause_release(pw);
    worker_join(&w);
    worker_join(&f);
    assert_int_equal(c.child_rc, 0);   /* 30: blocks the child never got back */
    assert_true(waited);               /* fork() returned only after W's queue came back */
    assert_int_equal(atab_gc(c.t), 0);
    assert_int_equal(atab_count(c.t), 0);
    atab_table_free(c.t);
    assert_int_equal(c.wa.live, 0);
}

/* ---- forks while a thread holds an array or a block outside the locks ---- */

typedef struct held_mem_case {
    atab_table *t;
    watch_alloc wa;     /* the table's allocator */
    atab_allocator al;
    int forked;         /* fork() returned in the parent (atomic) */
    int child_rc;
} held_mem_case;

/* Forks; the child frees the table and checks that every block of its
** allocator came back. */
static void *do_fork_counting_blocks(void *arg)
{
    held_mem_case *c = arg;
    pid_t pid = fork();
    if (pid == 0) {
        atab_table_free(c->t);
        if (c->wa.live != 0)
            fprintf(stderr, "child: %ld blocks never came back\n", c->wa.live);
        _exit(c->wa.live != 0 ? 30 : 0);
    }
    c->child_rc = forked_parent(pid, &c->forked);
    return NULL;
}

/* Forks from a thread of role C (fork_fn) while worker w, of role A, is
** held at pause p, then lets w go; returns whether fork() waited for w. */
static int fork_while_held(held_mem_case *c, pause_at *p, worker *w, void *(*fork_fn)(void *))
{
    worker f;
    pause_wait(p);
    int waited = fork_still_waits(&f, fork_fn, c, &c->forked);
    pause_release(p);
    worker_join(w);
    worker_join(&f);
    return waited;
}

static void *do_release_one(void *arg)
{
    held_mem_case *c = arg;
    atab_release(c->t, atab_intern_cstr(c->t, "asks-for-a-queue"));
    return NULL;
}

/* A thread W whose release left its first atom unused makes its queue, and
** stops with the queue's block allocated, before the block is its
** record's (queue:made), the block in its hands alone. A fork from another
** thread F waits until W's queue is made, so that the child, where W is
** not, frees W's record with its queue and the table with every block
** back to the allocator. */
static void a_fork_waits_for_a_queue_being_made_and_the_child_leaks_nothing(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records, no queues in debug builds */
#endif
    held_mem_case c;
    worker w;
    memset(&c, 0, sizeof c);
    pauses_reset();
    c.al = wa_allocator(&c.wa);
    assert_non_null(c.t = sweeping_table(&c.al, 7, 64));
    pause_at *p = pause_arm("queue:made", ROLE_A, NULL);
    worker_start(&w, ROLE_A, do_release_one, &c);
    int waited = fork_while_held(&c, p, &w, do_fork_counting_blocks);
    assert_int_equal(c.child_rc, 0);   /* 30: the queue's block never came back */
    assert_true(waited);               /* fork() returned only after W made its queue */
    assert_int_equal(atab_gc(c.t), 1);
    atab_table_free(c.t);
    assert_int_equal(c.wa.live, 0);
}

#define GROW_KEYS 4000   /* past the first array of every shard */

static void *do_grow(void *arg)
{
    held_mem_case *c = arg;
    char buf[32];
    for (int i = 0; i < GROW_KEYS; i++) {   /* held: the child frees them with t */
        snprintf(buf, sizeof buf, "grows-the-shards-%d", i);
        atab_intern_cstr(c->t, buf);
    }
    return NULL;
}

/* A thread W whose insert grew a shard's array and, not alone on the table
** (this thread has a record) and with a memory limit (no array is kept on
** the table's retired list then), waits for a grace period before it frees
** the array it replaced (grow:free), that array in its hands alone. A fork
** from another thread F waits until W freed it, so that the child, where W
** is not, frees the table with every block back to the allocator. */
static void a_fork_waits_for_a_growth_that_frees_its_old_array_and_the_child_leaks_nothing(
    void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records in debug builds: the grower is alone */
#endif
    held_mem_case c;
    worker w;
    memset(&c, 0, sizeof c);
    pauses_reset();
    c.al = wa_allocator(&c.wa);
    atab_options o = plain_options(&c.al, 7);
    o.sweep_threshold = SIZE_MAX;
    o.memory_limit = (size_t)1 << 30;
    assert_non_null(c.t = atab_table_new(&o));
    const atab_atom *mine = atab_intern_cstr(c.t, "this-thread-has-a-record");
    pause_at *p = pause_arm("grow:free", ROLE_A, c.t);
    worker_start(&w, ROLE_A, do_grow, &c);
    int waited = fork_while_held(&c, p, &w, do_fork_counting_blocks);
    assert_int_equal(c.child_rc, 0);   /* 30: the old array never came back */
    assert_true(waited);               /* fork() returned only after W freed it */
    assert_int_equal(atab_count(c.t), GROW_KEYS + 1);
    assert_int_equal(atab_release(c.t, mine), ATAB_OK);
    atab_table_free(c.t);
    assert_int_equal(c.wa.live, 0);
}

/* ---- a fork while a thread gives its kept blocks back ---- */

#define KEPT_HELD 4000

static const atab_atom *g_kept_held[KEPT_HELD];   /* by the key's number; NULL: refused */
static int g_n_kept_held, g_keys_tried;             /* atoms held; keys asked for (atomic) */
static int g_stop_interning;                         /* (atomic) */

static void held_key(char *buf, size_t cap, int i)
{
    snprintf(buf, cap, "a-longer-held-key-%06d", i);
}

/* A queue's worth of 10-byte atoms interned and released (its sweep keeps
** their blocks), then 24-byte atoms, held, until the memory limit refuses
** them: the first refusal gives the kept blocks back (recycled:taken). */
static void *do_keep_then_limit(void *arg)
{
    held_mem_case *c = arg;
    char buf[64];
    for (int i = 0; i < 256; i++) {
        snprintf(buf, sizeof buf, "dead-%05d", i);
        atab_release(c->t, atab_intern_cstr(c->t, buf));
    }
    for (int i = 0, refused = 0;
         refused < 50 && i < KEPT_HELD && !__atomic_load_n(&g_stop_interning, __ATOMIC_SEQ_CST);
         i++) {
        held_key(buf, sizeof buf, i);
        __atomic_store_n(&g_keys_tried, i + 1, __ATOMIC_SEQ_CST);
        const atab_atom *a = atab_intern_cstr(c->t, buf);
        if ((g_kept_held[i] = a) != NULL)
            g_n_kept_held++, refused = 0;
        else
            refused++;
    }
    return NULL;
}

/* Forks; the child releases W's atoms and sweeps, and checks that no
** chunk is left: a block lost between a list and its chunk would keep its
** chunk (counted as free bytes) till the table is freed. W goes on
** interning from the moment the fork has its locks, so the child finds
** W's atoms by their keys (each W's one reference), not by what W had
** stored when it forked. */
static void *do_fork_emptying_the_chunks(void *arg)
{
    held_mem_case *c = arg;
    pid_t pid = fork();
    if (pid == 0) {
        char buf[64];
        int tried = __atomic_load_n(&g_keys_tried, __ATOMIC_SEQ_CST);
        for (int i = 0; i < tried; i++) {
            held_key(buf, sizeof buf, i);
            const atab_atom *a = atab_lookup(c->t, buf, strlen(buf));
            if (a && (atab_release(c->t, a) != ATAB_OK || atab_release(c->t, a) != ATAB_OK))
                _exit(31);   /* the lookup's reference, then W's */
        }
        atab_gc(c->t);
        report_amount_at free = {"explicit/atoms/dynamic/free", 0};
        if (atab_report(c->t, report_amount_cb, &free) != ATAB_OK || atab_count(c->t) != 0)
            _exit(32);
        if (free.amount != 0)
            fprintf(stderr, "child: %lld bytes of chunks left\n", (long long)free.amount);
        _exit(free.amount != 0 ? 33 : 0);
    }
    c->child_rc = forked_parent(pid, &c->forked);
    return NULL;
}

/* A thread W at the memory limit takes the blocks its sweep kept off its
** queue to give them back to their chunks, and stops with them in its
** hands alone (recycled:taken), under its insert's shard lock. A fork from
** another thread F waits until they are back, so that the child, where W
** is not, has every block either in an atom, on a list or free in its
** chunk: once W's atoms are released and swept, no chunk is left. */
static void a_fork_waits_for_kept_blocks_on_their_way_back_and_the_child_loses_none(
    void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records in debug builds: no queues, nothing kept */
#endif
    held_mem_case c;
    worker w;
    memset(&c, 0, sizeof c);
    pauses_reset();
    g_n_kept_held = g_keys_tried = g_stop_interning = 0;
    memset(g_kept_held, 0, sizeof g_kept_held);
    c.al = wa_allocator(&c.wa);
    atab_options o = plain_options(&c.al, 7);
    o.memory_limit = 48 * 1024;
    o.sweep_threshold = 256;
    assert_non_null(c.t = atab_table_new(&o));
    pause_at *p = pause_arm("recycled:taken", ROLE_A, NULL);
    worker_start(&w, ROLE_A, do_keep_then_limit, &c);
    worker f;
    pause_wait(p);
    /* W's intern under way ends after the pause; it makes no other: a
    ** short key's block made before its shard's lock, which no fork waits
    ** for (thread.c, "fork"), would be a block the child never gets back */
    __atomic_store_n(&g_stop_interning, 1, __ATOMIC_SEQ_CST);
    int waited = fork_still_waits(&f, do_fork_emptying_the_chunks, &c, &c.forked);
    pause_release(p);
    worker_join(&w);
    worker_join(&f);
    assert_int_equal(c.child_rc, 0);   /* 33: blocks lost in the child */
    assert_true(waited);               /* fork() returned only after W gave them back */
    assert_true(g_n_kept_held > 100);   /* the limit was met after many */
    for (int i = 0; i < KEPT_HELD; i++)
        if (g_kept_held[i])
            assert_int_equal(atab_release(c.t, g_kept_held[i]), ATAB_OK);
    atab_table_free(c.t);
    assert_int_equal(c.wa.live, 0);
}

/* ---- a fork while a thread takes a run of freed blocks ---- */

#define RUN_HELD 64

static const atab_atom *g_run_held[RUN_HELD + 512];   /* W's 10-byte atoms */
static int g_n_run_held;

/* W: fills its chunk with 10-byte atoms, frees every other one of the
** first RUN_HELD back to their chunks (atab_gc: onto the table's free
** list), has a queue again (a release), then interns a 10-byte key: its
** chunk full, it takes a freed block and a run more (recycled:put). */
static void *do_take_a_run(void *arg)
{
    held_mem_case *c = arg;
    char buf[32];
    size_t bytes = atab__block_bytes(10);
    int n = 0;
    do {
        snprintf(buf, sizeof buf, "run-%06d", n);
        if (!(g_run_held[n++] = atab_intern_cstr(c->t, buf)))
            return (void *)1;
    } while (n < RUN_HELD || atab__bump_fits(&atab__rec_of(c->t)->bump, bytes));
    for (int i = 0; i < RUN_HELD; i += 2) {
        atab_release(c->t, g_run_held[i]);
        g_run_held[i] = NULL;
    }
    atab_gc(c->t);
    atab_release(c->t, g_run_held[1]);   /* queued: a queue again */
    g_run_held[1] = NULL;
    g_n_run_held = n;
    if (!atab_intern_cstr(c->t, "run-made-0"))   /* held: freed with the table */
        return (void *)2;
    return NULL;
}

/* Forks; the child releases W's atoms and sweeps, and counts the blocks
** its chunks still hold: one, the block of W's new atom, made before its
** shard's lock (thread.c, "fork": an insert there is not waited for);
** every other one is back. */
static void *do_fork_counting_live_blocks(void *arg)
{
    held_mem_case *c = arg;
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < g_n_run_held; i++)
            if (g_run_held[i] && atab_release(c->t, g_run_held[i]) != ATAB_OK)
                _exit(31);
        atab_gc(c->t);
        if (atab_count(c->t) != 0)
            _exit(32);
        uint64_t live = 0;
        for (size_t i = 0; i < c->t->n_chunks; i++)
            live += ((const atab__chunk *)c->t->chunks[i])->live;
        if (live != 1)
            fprintf(stderr, "child: %llu blocks left in chunks, 1 expected\n",
                    (unsigned long long)live);
        _exit(live != 1 ? 33 : 0);
    }
    c->child_rc = forked_parent(pid, &c->forked);
    return NULL;
}

/* A thread W whose chunk is full takes a freed block for its new atom and
** a run more of its class for its next ones (chunk.h:
** atab__chunk_carve_many), and stops with the run taken (recycled:put). A
** fork from another thread F waits until the run is on W's kept list, so
** that the child, where W is not, gets it back with W's record: only the
** new atom's own block, which a fork never waits for, is lost there. */
static void a_fork_waits_for_a_run_of_freed_blocks_and_the_child_loses_none(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records in debug builds: no queues, nothing kept */
#endif
    held_mem_case c;
    worker w, f;
    memset(&c, 0, sizeof c);
    pauses_reset();
    g_n_run_held = 0;
    c.al = wa_allocator(&c.wa);
    atab_options o = plain_options(&c.al, 7);
    o.sweep_threshold = 256;
    assert_non_null(c.t = atab_table_new(&o));
    pause_at *p = pause_arm("recycled:put", ROLE_A, NULL);
    worker_start(&w, ROLE_A, do_take_a_run, &c);
    pause_wait(p);
    int waited = fork_still_waits(&f, do_fork_counting_live_blocks, &c, &c.forked);
    pause_release(p);
    assert_null(worker_join(&w));
    worker_join(&f);
    assert_int_equal(c.child_rc, 0);   /* 33: the run lost in the child */
    assert_true(waited);               /* fork() returned only after W kept the run */
    for (int i = 0; i < g_n_run_held; i++)
        if (g_run_held[i])
            assert_int_equal(atab_release(c.t, g_run_held[i]), ATAB_OK);
    atab_table_free(c.t);
    assert_int_equal(c.wa.live, 0);
}

/* ---- a fork from another thread while the solo thread inserts ---- */

static char g_solo_keys[2][32];   /* two keys of one shard */

/* Two keys of one shard of t into g_solo_keys. */
static void solo_keys(atab_table *t)
{
    unsigned shard = atab__h_shard(atab__hash_bytes(t->seed, "solo-first", 10));
    strcpy(g_solo_keys[0], "solo-first");
    for (int k = 0;; k++) {
        snprintf(g_solo_keys[1], sizeof g_solo_keys[1], "solo-second-%d", k);
        const char *s = g_solo_keys[1];
        if (atab__h_shard(atab__hash_bytes(t->seed, s, strlen(s))) == shard)
            return;
    }
}

/* The first key (its shard's lock: this thread claims t), then the second
** (a solo insert into the room the first left: table.h). Both held. */
static void *do_solo_two(void *arg)
{
    held_mem_case *c = arg;
    atab_intern_cstr(c->t, g_solo_keys[0]);
    atab_intern_cstr(c->t, g_solo_keys[1]);
    return NULL;
}

/* Forks; the child finds the table unclaimed and both keys, claims the
** table with an insert, uses the table, and frees it. */
static void *do_fork_finding_solo_keys(void *arg)
{
    held_mem_case *c = arg;
    pid_t pid = fork();
    if (pid == 0) {
        if (c->t->solo_tid != ATAB__SOLO_UNCLAIMED || c->t->solo_rec)
            _exit(30);
        for (int i = 0; i < 2; i++)
            if (!atab_lookup(c->t, g_solo_keys[i], strlen(g_solo_keys[i])))
                _exit(31 + i);
        const atab_atom *a = atab_intern_cstr(c->t, "claimed-in-the-child");
        if (!a || c->t->solo_tid != (const void *)&atab__tls_last || atab_release(c->t, a))
            _exit(33);
        _exit(child_use(c->t, 0));
    }
    c->child_rc = forked_parent(pid, &c->forked);
    return NULL;
}

/* The solo thread W stops inside a solo insert (insert:solo), its slot,
** its count of the shard's keys and its hold made in no lock. A fork from
** another thread F ends the bias first, which waits for W's insert, so the
** child never sees an insert half made: it finds both keys and counts
** exactly; there, one thread, the table is unclaimed, and the child's
** insert claims it. In the parent, W's exit, the bias ended and no record
** left, opens the table to a claim again. */
static void a_fork_from_another_thread_waits_for_a_solo_insert(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records in debug builds: no solo inserts */
#endif
    held_mem_case c;
    worker w;
    memset(&c, 0, sizeof c);
    pauses_reset();
    c.al = wa_allocator(&c.wa);
    atab_options o = plain_options(&c.al, 7);
    o.sweep_threshold = SIZE_MAX;
    assert_non_null(c.t = atab_table_new(&o));
    solo_keys(c.t);
    pause_at *p = pause_arm("insert:solo", ROLE_A, c.t);
    worker_start(&w, ROLE_A, do_solo_two, &c);
    int waited = fork_while_held(&c, p, &w, do_fork_finding_solo_keys);
    assert_int_equal(c.child_rc, 0);   /* 30, 33: the bias; 31, 32: a key not
                                          found; 10-16: child_use */
    assert_true(waited);               /* fork() returned only after W's insert */
    assert_ptr_equal(c.t->solo_tid, ATAB__SOLO_REOPENED);   /* W's exit */
    assert_null(c.t->solo_rec);
    assert_int_equal(atab_count(c.t), 2);
    atab_table_free(c.t);
    assert_int_equal(c.wa.live, 0);
}

/* A fork before any thread took a lock on a table leaves it unclaimed
** (the forker takes every lock, but claims nothing), in the parent and in
** the child: the first thread to insert after it is the table's solo
** thread, here and there. */
static void a_fork_leaves_an_unclaimed_table_unclaimed(void **state)
{
    (void)state;
#ifdef ATAB_DEBUG
    skip();   /* no records in debug builds: no thread claims a table */
#endif
    watch_alloc wa = {0};
    atab_allocator al = wa_allocator(&wa);
    atab_options o = plain_options(&al, 7);
    atab_table *t = atab_table_new(&o);
    assert_non_null(t);
    assert_ptr_equal(t->solo_tid, ATAB__SOLO_UNCLAIMED);
    pid_t pid = fork();
    if (pid == 0) {
        if (t->solo_tid != ATAB__SOLO_UNCLAIMED)
            _exit(40);
        const atab_atom *a = atab_intern_cstr(t, "claimed-in-the-child");
        _exit(!a ? 41 : t->solo_tid != (const void *)&atab__tls_last ? 42 : 0);
    }
    assert_true(pid > 0);
    assert_int_equal(wait_child(pid), 0);   /* 40-42: the child's table */
    assert_ptr_equal(t->solo_tid, ATAB__SOLO_UNCLAIMED);
    const atab_atom *a = atab_intern_cstr(t, "claimed-in-the-parent");
    assert_non_null(a);
    assert_ptr_equal(t->solo_tid, &atab__tls_last);
    assert_ptr_equal(t->solo_rec, atab__tls_last.rec);
    assert_int_equal(atab_release(t, a), ATAB_OK);
    atab_table_free(t);
    assert_int_equal(wa.live, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_child_forked_while_threads_hammer_uses_every_table),
        cmocka_unit_test(a_child_forked_while_a_reader_is_in_its_section_does_not_wait_for_it),
        cmocka_unit_test(a_fork_waits_for_a_sweep_in_progress_and_the_child_sweeps),
        cmocka_unit_test(a_child_counts_exactly_the_references_a_parent_thread_held),
        cmocka_unit_test(a_child_forked_while_a_thread_queues_an_atom_frees_it),
        cmocka_unit_test(a_fork_waits_for_a_queue_away_for_its_sweep_and_the_child_leaks_nothing),
        cmocka_unit_test(a_fork_waits_for_a_growth_that_frees_its_old_array_and_the_child_leaks_nothing),
        cmocka_unit_test(a_fork_waits_for_a_queue_being_made_and_the_child_leaks_nothing),
        cmocka_unit_test(a_fork_waits_for_kept_blocks_on_their_way_back_and_the_child_loses_none),
        cmocka_unit_test(a_fork_waits_for_a_run_of_freed_blocks_and_the_child_loses_none),
        cmocka_unit_test(a_fork_from_another_thread_waits_for_a_solo_insert),
        cmocka_unit_test(a_fork_leaves_an_unclaimed_table_unclaimed),
    };
    pthread_atfork(NULL, NULL, child_begins);   /* before any table registers its own */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
