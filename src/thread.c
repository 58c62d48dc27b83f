/*
** thread.c - per-thread records: read-side sections that let hits probe the
** table without locks, and per-thread reference caches that keep hot atoms'
** counts off shared cache lines.
**
** The true count of a dynamic atom is R = S + sum of d over every thread's
** cache, where S is the atom's own (shared, atomic) count and d a thread's
** private delta. A hit or a release by a thread with a record changes only
** its own d: no write to the atom, so many threads can hit the same atom
** and scale. S changes on misses (a new atom starts at 1), on atab_ref, on
** eviction of a cache entry, and when a sweep flushes every d into S.
**
** Only a sweep frees atoms, and it does so with every reader stopped: it
** raises t->sweeping, waits until no record is inside a section, flushes
** all deltas (so S == R), frees what is at zero, and lets readers go. A
** reader entering meanwhile sees the flag and waits outside. Old slot arrays
** left by growth are freed after a grace period (atab__synchronize): once
** every record that was inside a section has left it.
**
** The reader's side costs two plain stores and a load: where the kernel has
** membarrier(PRIVATE_EXPEDITED), the writer's side issues the barrier on
** behalf of all threads; elsewhere readers use a full fence.
**
** A release that makes this thread's view S + d reach zero or below queues
** the atom as a sweep candidate (once per cache entry): a sweep then frees
** only from the candidates, so its pause is proportional to the garbage and
** the number of threads, not to the table.
*/
#include <linux/membarrier.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atab_int.h"

#define SETS ATAB__SETS
#define WAYS ATAB__WAYS
typedef atab__ent ent;

#define REC_ALLOC (sizeof(atab__rec) + 63)

/* ---- memory barriers ---- */

int atab__membarrier_state;   /* 0 unknown, 1 usable, -1 not available */

static int have_membarrier(void)
{
    int s = __atomic_load_n(&atab__membarrier_state, __ATOMIC_ACQUIRE);
    if (s)
        return s > 0;
#if defined(__SANITIZE_THREAD__)
    s = -1;                    /* TSan does not model the asymmetric fence */
#else
    s = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0 ? 1 : -1;
#endif
    __atomic_store_n(&atab__membarrier_state, s, __ATOMIC_RELEASE);
    return s > 0;
}

/* The reader's half of the handshake: orders its seq store before its
** later loads. */
static inline void reader_fence(void)
{
    if (__atomic_load_n(&atab__membarrier_state, __ATOMIC_RELAXED) > 0)
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    else
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* The writer's half: after it, every reader either is seen inside its
** section or sees what the writer stored before. */
static void writer_fence(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (have_membarrier())
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0);
}

static void relax(unsigned *spins)
{
    if (++*spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else {
        sched_yield();
    }
}

/* ---- finding this thread's record ---- */

#define TLS_SLOTS 8

static _Thread_local atab__tls_pair tls[TLS_SLOTS] ATAB__TLS;
static _Thread_local unsigned tls_next ATAB__TLS;
static _Thread_local char tls_token ATAB__TLS;   /* its address names this thread */
_Thread_local atab__tls_pair atab__tls_last ATAB__TLS;

/* Live tables, so a thread's exit can tell which of its records are safe
** to hand back; and the key whose destructor runs at thread exit. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static atab_table *g_tables;
static pthread_key_t g_key;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static uint64_t g_next_id = 1;

/* At thread exit: mark this thread's records in live tables free to adopt
** (their deltas stay; the next sweep flushes them). */
static void thread_exit(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&g_lock);
    for (unsigned i = 0; i < TLS_SLOTS; i++) {
        for (atab_table *t = g_tables; t && tls[i].id; t = t->next_table) {
            if (t->id == tls[i].id) {
                __atomic_store_n(&tls[i].rec->owner, 0, __ATOMIC_RELEASE);
                break;
            }
        }
        tls[i].id = 0;
    }
    atab__tls_last.id = 0;
    pthread_mutex_unlock(&g_lock);
}

static void make_key(void)
{
    pthread_key_create(&g_key, thread_exit);
}

/* This thread's record on t, adopting or allocating one; NULL when none
** can be had (no memory), and the caller falls back to locking. */
static atab__rec *register_thread(atab_table *t)
{
    uintptr_t me = (uintptr_t)&tls_token;
    atab__rec *r, *free_rec = NULL;
    pthread_mutex_lock(&t->reg_lock);
    for (r = t->recs; r; r = r->next) {
        uintptr_t o = __atomic_load_n(&r->owner, __ATOMIC_ACQUIRE);
        if (o == me)
            break;
        if (o == 0 && !free_rec)
            free_rec = r;
    }
    if (!r && free_rec) {
        r = free_rec;
        __atomic_store_n(&r->owner, me, __ATOMIC_RELEASE);
    }
    if (!r) {
        void *raw = atab__alloc(t, REC_ALLOC);
        if (raw) {
            r = (atab__rec *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
            memset(r, 0, sizeof *r);
            r->raw = raw;
            r->owner = me;
            r->next = t->recs;
            __atomic_store_n(&t->recs, r, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&t->reg_lock);
    if (!r) {
        atab__set_error(ATAB_OK);   /* benign: the locked path works */
        return NULL;
    }
    pthread_once(&g_once, make_key);
    pthread_setspecific(g_key, &tls_token);   /* so thread_exit runs */
    unsigned slot = tls_next++ % TLS_SLOTS;
    tls[slot].id = t->id;
    tls[slot].rec = r;
    return r;
}

static __attribute__((unused)) atab__rec *my_rec(atab_table *t)
{
    for (unsigned i = 0; i < TLS_SLOTS; i++)
        if (tls[i].id == t->id)
            return tls[i].rec;
    return register_thread(t);
}

/* ---- sections ---- */

/* The slow half of atab__enter (atab_int.h): another table than last
** time, a first visit, or a sweep in progress. */
atab__rec *atab__enter_slow(atab_table *t)
{
#ifdef ATAB_DEBUG
    (void)t;
    return NULL;   /* debug builds count exactly, on the locked path */
#else
    atab__rec *r = my_rec(t);
    if (ATAB__UNLIKELY(!r))
        return NULL;
    atab__tls_last.id = t->id;
    atab__tls_last.rec = r;
    uint64_t s = r->seq;   /* only this thread writes it */
    for (;;) {
        __atomic_store_n(&r->seq, ++s, __ATOMIC_RELAXED);
        reader_fence();
        if (ATAB__LIKELY(!__atomic_load_n(&t->sweeping, __ATOMIC_ACQUIRE)))
            return r;
        __atomic_store_n(&r->seq, ++s, __ATOMIC_RELEASE);   /* step out */
        unsigned spins = 0;
        while (__atomic_load_n(&t->sweeping, __ATOMIC_ACQUIRE))
            relax(&spins);
    }
#endif
}

void atab__stop_readers(atab_table *t)
{
    pthread_mutex_lock(&t->sweep_lock);
    __atomic_store_n(&t->sweeping, 1, __ATOMIC_SEQ_CST);
    writer_fence();
    pthread_mutex_lock(&t->reg_lock);
    for (atab__rec *r = t->recs; r; r = r->next) {
        unsigned spins = 0;
        while (__atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) & 1)
            relax(&spins);
    }
}

void atab__resume_readers(atab_table *t)
{
    pthread_mutex_unlock(&t->reg_lock);
    __atomic_store_n(&t->sweeping, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&t->sweep_lock);
}

void atab__synchronize(atab_table *t)
{
    writer_fence();
    pthread_mutex_lock(&t->reg_lock);
    for (atab__rec *r = t->recs; r; r = r->next) {
        uint64_t s = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
        unsigned spins = 0;
        if (s & 1)
            while (__atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) == s)
                relax(&spins);
    }
    pthread_mutex_unlock(&t->reg_lock);
}

/* ---- candidates ---- */

int atab__vec_push(atab_table *t, atab__vec *v, const atab_atom *a)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 64;
        const atab_atom **nv = atab__alloc(t, cap * sizeof *nv);
        if (!nv) {
            atab__set_error(ATAB_OK);
            __atomic_store_n(&t->full_scan, 1, __ATOMIC_RELAXED);   /* benign */
            return -1;
        }
        if (v->n)
            memcpy(nv, v->v, v->n * sizeof *nv);
        if (v->v)
            atab__free(t, v->v, v->cap * sizeof *v->v);
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = a;
    return 0;
}

void atab__vec_free(atab_table *t, atab__vec *v)
{
    if (v->v)
        atab__free(t, v->v, v->cap * sizeof *v->v);
    v->v = NULL;
    v->n = v->cap = 0;
}

/* Queues an entry's atom as a sweep candidate from inside a section, once
** per entry between sweeps, and counts it towards the unused estimate. */
static void queue(atab_table *t, atab__rec *r, ent *e)
{
    if (e->queued)
        return;
    e->queued = 1;
    atab__vec_push(t, &r->cands, e->a);
    __atomic_add_fetch(&t->unused, 1, __ATOMIC_RELAXED);
}

/* ---- the reference cache ---- */

static inline ent *set_of(atab__rec *r, const atab_atom *a)
{
    return atab__rec_set(r, a);
}

/* Moves an entry's delta into the atom's own count. */
static void flush(atab_table *t, atab__rec *r, ent *e)
{
    if (e->d && atab__count_add(e->a, e->d) <= 0)
        queue(t, r, e);
    e->a = NULL;
    e->d = 0;
    e->queued = 0;
}

static ent *make_entry(atab_table *t, atab__rec *r, const atab_atom *a, ent *set);

/* The entry for a in this thread's cache, making room if needed. */
static inline __attribute__((always_inline)) ent *entry(atab_table *t, atab__rec *r,
                                                      const atab_atom *a)
{
    ent *set = set_of(r, a);
    for (unsigned w = 0; w < WAYS; w++)
        if (set[w].a == a)
            return &set[w];
    return make_entry(t, r, a, set);
}

/* Chooses a way for a new entry: an empty or idle one, else the last,
** whose delta goes into its atom's count. */
static ent *make_entry(atab_table *t, atab__rec *r, const atab_atom *a, ent *set)
{
    ent *victim = NULL;
    for (unsigned w = 0; w < WAYS && !victim; w++)
        if (!set[w].a || set[w].d == 0)
            victim = &set[w];
    if (!victim) {
        victim = &set[WAYS - 1];
        flush(t, r, victim);
    }
    victim->a = a;
    victim->d = 0;
    victim->queued = 0;
    return victim;
}

#define DELTA_MAX ATAB__DELTA_MAX

void atab__rec_ref(atab_table *t, atab__rec *r, const atab_atom *a)
{
    ent *e = entry(t, r, a);
    if (++e->d >= DELTA_MAX)
        flush(t, r, e);
}

void atab__rec_release(atab_table *t, atab__rec *r, const atab_atom *a)
{
    ent *e = entry(t, r, a);
    e->d--;
    int32_t est = atab__count(a) + e->d;
    if (est < 0) {
        /* Another thread's cached references are being released here (or
        ** this is a double release): keep S meaningful by flushing ours. */
        atab__count_add(a, e->d);
        e->d = 0;
    }
    if (est <= 0)
        queue(t, r, e);
}

/* ---- what sweeps need ---- */

int atab__flush_deltas(atab_table *t, atab__vec *out)
{
    int rc = 0;
    for (atab__rec *r = t->recs; r; r = r->next) {
        for (unsigned i = 0; i < SETS * WAYS; i++) {
            ent *e = &r->e[i];
            if (e->a && e->d && atab__count_add(e->a, e->d) <= 0)
                rc |= atab__vec_push(t, out, e->a);
            e->a = NULL;
            e->d = 0;
            e->queued = 0;
        }
        for (size_t i = 0; i < r->cands.n; i++)
            rc |= atab__vec_push(t, out, r->cands.v[i]);
        r->cands.n = 0;
    }
    return rc;
}

void atab__threads_visit_memory(atab_table *t, atab__array_fn fn, void *ud)
{
    atab__stop_readers(t);
    for (atab__rec *r = t->recs; r; r = r->next) {
        fn(ud, r->raw, REC_ALLOC);
        if (r->cands.v)
            fn(ud, r->cands.v, r->cands.cap * sizeof *r->cands.v);
    }
    pthread_mutex_lock(&t->cand_lock);
    if (t->cands.v)
        fn(ud, t->cands.v, t->cands.cap * sizeof *t->cands.v);
    pthread_mutex_unlock(&t->cand_lock);
    atab__resume_readers(t);
}

void atab__threads_init(atab_table *t)
{
    pthread_mutex_init(&t->reg_lock, NULL);
    pthread_mutex_init(&t->sweep_lock, NULL);
    have_membarrier();
    pthread_mutex_lock(&g_lock);
    t->id = g_next_id++;
    t->next_table = g_tables;
    g_tables = t;
    pthread_mutex_unlock(&g_lock);
}

void atab__threads_fini(atab_table *t)
{
    pthread_mutex_lock(&g_lock);
    for (atab_table **p = &g_tables; *p; p = &(*p)->next_table) {
        if (*p == t) {
            *p = t->next_table;
            break;
        }
    }
    pthread_mutex_unlock(&g_lock);
    atab__rec *r = t->recs;
    while (r) {
        atab__rec *next = r->next;
        void *raw = r->raw;
        atab__vec_free(t, &r->cands);
        atab__free(t, raw, REC_ALLOC);
        r = next;
    }
    t->recs = NULL;
    pthread_mutex_destroy(&t->reg_lock);
    pthread_mutex_destroy(&t->sweep_lock);
}
