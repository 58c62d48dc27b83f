/* SPDX-License-Identifier: MIT */
/*
** test_hooks.h - holding threads at the library's named pause points
** (src/hooks.h; the test binaries are built with -DATAB_TEST_HOOKS), and a
** lock-free allocator that watches given blocks, for the race tests.
**
** A test gives each thread it starts a role (a small number) and arms a
** pause: a point's name, the role that stops there, and optionally the
** object the point names. The first time a thread of that role reaches the
** point it signals `arrived` and waits for `go`; every other thread, and
** the same thread at the point later, passes through. Waits for a thread
** that should arrive or finish are bounded (WAIT_S): a hang fails the
** test instead of hanging it. Checks that a thread is still held up wait
** QUIET_MS and then look at state (a flag, a block still allocated), never
** at how long anything took.
*/
#ifndef TEST_HOOKS_H
#define TEST_HOOKS_H

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"
#include "atab_int.h"

#define WAIT_S 20      /* a thread that should get somewhere and does not: a hang */
#define QUIET_MS 150   /* how long a thread that must stay held up is watched */
#define MAX_PAUSES 8

typedef struct pause_at {
    const char *point;
    int role;
    const void *arg;   /* NULL: any object */
    int armed;         /* 1 until the first matching thread takes it */
    sem_t arrived, go;
} pause_at;

static pause_at g_pauses[MAX_PAUSES];
static int g_npauses;
static _Thread_local int my_role;   /* 0: never paused (the test's own thread) */

typedef struct watch_alloc watch_alloc;
static watch_alloc *g_watching;   /* the last one that watched a block (below) */
static void watch_put(const void *block);

static void race_hook(const char *point, const void *arg)
{
    if (strcmp(point, "chunk:put") == 0)
        watch_put(arg);   /* a carved block back to its chunk: freed */
    if (!my_role)
        return;
    int n = __atomic_load_n(&g_npauses, __ATOMIC_ACQUIRE);   /* armed while threads run */
    for (int i = 0; i < n; i++) {
        pause_at *p = &g_pauses[i];
        int one = 1;
        if (p->role != my_role || strcmp(p->point, point) != 0 || (p->arg && p->arg != arg))
            continue;
        if (!__atomic_compare_exchange_n(&p->armed, &one, 0, 0, __ATOMIC_SEQ_CST,
                                         __ATOMIC_SEQ_CST))
            continue;
        sem_post(&p->arrived);
        while (sem_wait(&p->go) != 0)
            ;
    }
}

/* Fails the whole program: a thread the test waits for never came, and
** other threads may hold the library's locks (cmocka could not go on). */
static inline void hang(const char *what)
{
    fprintf(stderr, "HANG: %s (nothing after %d s)\n", what, WAIT_S);
    fflush(stderr);
    _exit(3);
}

/* Clears the pauses and installs the hook; no test thread may be running. */
static inline void pauses_reset(void)
{
    for (int i = 0; i < g_npauses; i++) {
        sem_destroy(&g_pauses[i].arrived);
        sem_destroy(&g_pauses[i].go);
    }
    g_npauses = 0;
    __atomic_store_n(&g_watching, NULL, __ATOMIC_RELEASE);   /* a test's watches end with it */
    __atomic_store_n(&atab__test_hook, race_hook, __ATOMIC_RELEASE);
}

/* Arms a pause; before the threads it names start. */
static pause_at *pause_arm(const char *point, int role, const void *arg)
{
    pause_at *p = &g_pauses[g_npauses];
    p->point = point;
    p->role = role;
    p->arg = arg;
    p->armed = 1;
    sem_init(&p->arrived, 0, 0);
    sem_init(&p->go, 0, 0);
    __atomic_store_n(&g_npauses, g_npauses + 1, __ATOMIC_RELEASE);
    return p;
}

static struct timespec deadline_in(long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* Waits for a thread to stop at p. */
static inline void pause_wait(pause_at *p)
{
    struct timespec ts = deadline_in(WAIT_S * 1000L);
    int rc;
    while ((rc = sem_timedwait(&p->arrived, &ts)) != 0 && errno == EINTR)
        ;
    if (rc != 0)
        hang(p->point);
}

/* Did a thread stop at p within QUIET_MS? (It then stays stopped.) */
static inline int pause_reached_soon(pause_at *p)
{
    struct timespec ts = deadline_in(QUIET_MS);
    int rc;
    while ((rc = sem_timedwait(&p->arrived, &ts)) != 0 && errno == EINTR)
        ;
    if (rc == 0)
        sem_post(&p->arrived);   /* for a later pause_wait */
    return rc == 0;
}

static inline void pause_release(pause_at *p)
{
    sem_post(&p->go);
}

/* ---- threads with a role ---- */

typedef struct worker {
    pthread_t th;
    int role;
    void *(*fn)(void *);
    void *arg;
    void *ret;
    int done;     /* fn returned (atomic) */
    int joined;   /* the thread exited and was joined */
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    my_role = w->role;
    w->ret = w->fn(w->arg);
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static inline void worker_start(worker *w, int role, void *(*fn)(void *), void *arg)
{
    w->role = role;
    w->fn = fn;
    w->arg = arg;
    w->ret = NULL;
    w->done = 0;
    w->joined = 0;
    assert_int_equal(pthread_create(&w->th, NULL, worker_main, w), 0);
}

/* Joins w: fn returned and the thread exited (its thread-exit work done). */
static void *worker_join(worker *w)
{
    struct timespec ts = deadline_in(WAIT_S * 1000L);
    if (!w->joined && pthread_timedjoin_np(w->th, NULL, &ts) != 0)
        hang("a worker did not finish");
    w->joined = 1;
    return w->ret;
}

/* Waits for w's fn to return (its thread may still be exiting). */
static inline void worker_returned(worker *w)
{
    for (long ms = 0; !__atomic_load_n(&w->done, __ATOMIC_ACQUIRE); ms++) {
        if (ms >= WAIT_S * 1000L)
            hang("a worker did not return");
        usleep(1000);
    }
}

/* Has w's thread exited (its thread-exit work done) within QUIET_MS? */
static inline int worker_exits_soon(worker *w)
{
    struct timespec ts = deadline_in(QUIET_MS);
    if (!w->joined && pthread_timedjoin_np(w->th, NULL, &ts) == 0)
        w->joined = 1;
    return w->joined;
}

/* Is w still held up (not returned) after QUIET_MS? */
static inline int worker_held(worker *w)
{
    struct timespec ts = deadline_in(QUIET_MS);
    while (!__atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        if (now.tv_sec > ts.tv_sec || (now.tv_sec == ts.tv_sec && now.tv_nsec >= ts.tv_nsec))
            return 1;
        usleep(1000);
    }
    return 0;
}

/* ---- an allocator that counts with atomics and watches blocks ----
** Lock-free, so it is safe in a forked child too. A watched block's frees
** are counted: 0 while it lives, exactly 1 once freed. A small atom's
** block is carved from a chunk (src/chunk.h): it is freed when it goes
** back to its chunk (the point "chunk:put"), which the last watch_alloc
** that watched a block counts too. */

#define MAX_WATCH 16

struct watch_alloc {
    long live, allocs, frees;
    struct {
        const void *p;
        int frees;
    } w[MAX_WATCH];
    int n;
};

static void *wa_alloc(void *ud, size_t size)
{
    watch_alloc *a = ud;
    void *p = malloc(size ? size : 1);
    if (p) {
        __atomic_add_fetch(&a->live, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&a->allocs, 1, __ATOMIC_RELAXED);
    }
    return p;
}


static void wa_count_free(watch_alloc *a, const void *p)
{
    for (int i = 0; i < __atomic_load_n(&a->n, __ATOMIC_ACQUIRE); i++)
        if (a->w[i].p == p)
            __atomic_add_fetch(&a->w[i].frees, 1, __ATOMIC_SEQ_CST);
}

static void watch_put(const void *block)
{
    watch_alloc *a = __atomic_load_n(&g_watching, __ATOMIC_ACQUIRE);
    if (a)
        wa_count_free(a, block);
}

static void wa_free(void *ud, void *p, size_t size)
{
    watch_alloc *a = ud;
    (void)size;
    if (!p)
        return;
    wa_count_free(a, p);
    __atomic_sub_fetch(&a->live, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&a->frees, 1, __ATOMIC_RELAXED);
    free(p);
}

static inline atab_allocator wa_allocator(watch_alloc *a)
{
    atab_allocator al = {wa_alloc, wa_free, NULL, a};
    return al;
}

/* Watches block p (allocated and live now); returns its index. */
static inline int wa_watch(watch_alloc *a, const void *p)
{
    int i = a->n;
    assert_true(i < MAX_WATCH);
    a->w[i].p = p;
    a->w[i].frees = 0;
    __atomic_store_n(&a->n, i + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&g_watching, a, __ATOMIC_RELEASE);
    return i;
}

static inline int wa_frees(watch_alloc *a, int i)
{
    return __atomic_load_n(&a->w[i].frees, __ATOMIC_SEQ_CST);
}

/* A table on `al` with a fixed seed, no statics, sweeping only on atab_gc. */
static inline atab_table *race_table(const atab_allocator *al)
{
    return sweeping_table(al, 7, SIZE_MAX);
}

/* The shard of key s in t. */
static inline unsigned shard_of_key(atab_table *t, const char *s)
{
    return atab__h_shard(atab__hash_bytes(t->seed, s, strlen(s)));
}

/* This thread's record on t (it used t before). */
static inline atab__rec *my_rec(atab_table *t)
{
    return atab__rec_find(t);
}

#endif /* TEST_HOOKS_H */
