/* SPDX-License-Identifier: MIT */
/*
** threads.c - atomthreads: throughput of one shared, warm atomtab table
** under 1, 2, 4, 8, 16 threads, and its scaling against one thread.
**
** The table is built once per process (default options) from the token
** file: every distinct token interned once and held, so no hit atom is ever
** at count zero. An op is atab_intern of a present string plus the
** atab_release of what it returned (what a host does with a transient
** atom). Modes:
**   hit    each thread walks the token stream from its own offset
**   same   every thread hits the same 4 atoms: the trap of a shared
**          reference count (its cache line would bounce between cores).
**          The file's first 4 tokens: on the bundled corpus html, lang,
**          head, meta, static atoms, which have no count at all
**   samedyn  as `same`, on 4 dynamic atoms ("samedyn-atom-0".."3",
**          interned and held with the warm-up); not run unless --modes
**          names it
**   mix    7 ops in 8 as `hit`; the 8th interns a new string (thread id and
**          a counter) and releases it, so unused atoms pile up and the
**          releasing thread sweeps every sweep_threshold (10,000) of them
** Each figure is the median of --reps runs of --ms milliseconds each, run
** in turns: one run of every thread count, then the next.
** cpu-ns/op is the threads' CPU time per op: flat as threads are added
** unless they contend, so it says something even on a busy or small
** machine, where Mops/s cannot scale.
**
** --sweep-threshold N: the table's sweep threshold (default 10,000; a
** thread's queue holds min(N, 2,048) atoms, so below 2,048 its sweeps, and
** their grace periods, come more often).
** --pin: worker i runs on CPU i mod the CPUs (Linux), so that a run of 2
** threads on 2 CPUs is not moved between them mid-run.
** --private: worker i has a table of its own (each built and warmed as
** the shared one is), so threads share no line of any table: what more
** threads cost with nothing shared but the machine (its L3, memory, clock
** and the process's grace periods) is the floor under the shared figures.
** --inline: a run of one thread runs on the main thread (the one that
** warmed the table, so its record and cache are warm, and it is alone on
** the table and its solo thread: src/table.h), a timer thread ending it;
** what a worker thread costs beside the main thread's idle record, next
** to --warm-thread: the table is warmed by a thread that exits, so that
** one worker is alone on it (and, the table unclaimed, its solo thread).
** By default the main thread warms the table and is its solo thread, so
** the workers' first lock ends that: every run takes the shards' locks.
**
** The header gives the core-to-core round trip: two threads pinned to
** CPUs 0 and 1 pass a counter back and forth through two cache lines.
** What a line written on one core costs to read on another moves every
** figure of a workload that shares lines (mix, and hits whose counts
** change); a virtual machine's vCPUs can move between a host's cores
** and caches, and this figure with them (110 ns and 480 ns on the same
** 2-CPU VM on one day).
**
** usage: atomthreads [--threads 1,2,4,8,16] [--modes hit,same,mix] [--ms 300]
**                    [--reps 3] [--sweep-threshold N] [--pin] [--private] [--inline]
**                    [--warm-thread] [--json] FILE
**        atomthreads --chain   (a counter kept in memory, below: the machine's
**                               figure alone)
*/
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomtab.h>

#include "tokens.h"

static void load(const char *path, tokens *t)
{
    tokens_load(path, t, "atomthreads");
    if (t->n < 4) {
        fprintf(stderr, "atomthreads: %s has fewer than 4 tokens\n", path);
        exit(1);
    }
}

enum { MODE_HIT, MODE_SAME, MODE_MIX, MODE_SAMEDYN, NMODES };
static const char *const mode_name[NMODES] = {"hit", "same", "mix", "samedyn"};

#define MAX_THREADS 1024

typedef struct shared {
    atab_table *t;
    atab_table **own;      /* --private: worker i's table, else NULL */
    const tokens *k;
    int mode, nthreads, pin;
    int inline_one;        /* --inline: a run of one thread runs on main's */
    int ms;                /* this run's length (the --inline timer's) */
    int go, stop;          /* atomic */
    const char *same[4];   /* the `same` mode's strings */
    size_t same_len[4];
    char samedyn[4][16];   /* the `samedyn` mode's strings */
} shared;

typedef struct worker {
    pthread_t th;
    shared *sh;
    int id;
    uint64_t ops;
    double cpu_s;   /* this thread's CPU time while it ran */
    int failed;
} __attribute__((aligned(64))) worker;

/* One op: intern a present string and release it. */
static inline int hit_op(atab_table *t, const char *s, size_t len)
{
    const atab_atom *a = atab_intern(t, s, len);
    if (!a)
        return -1;
    return atab_release(t, a) == ATAB_OK ? 0 : -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs the calling thread on CPU i mod the CPUs (a failure only leaves
** it where the scheduler puts it). */
static void pin_to(int i)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(i % (int)sysconf(_SC_NPROCESSORS_ONLN), &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* ---- a counter kept in memory ----
** ns per step of a chain of adds to one word in memory, each reading the
** store of the step before (as a section's seq did when it was stepped in
** place: two such steps an intern and two a release), against the same
** chain in a register. A CPU that forwards a store to the next load of its
** address with no delay (memory renaming) runs both alike; one that does
** not pays its store-to-load forwarding latency at each step. */
#define CHAIN_STEPS 100000000L
static void chain_ns(double *mem_ns, double *reg_ns)
{
    static volatile uint64_t word;
    uint64_t r = 0;
    double t0 = now_s();
    for (long i = 0; i < CHAIN_STEPS; i++)
        word = word + 1;
    double t1 = now_s();
    for (long i = 0; i < CHAIN_STEPS; i++) {
        __asm__ volatile("" : "+r"(r));
        r++;
    }
    double t2 = now_s();
    __asm__ volatile("" : : "r"(r));
    *mem_ns = (t1 - t0) / CHAIN_STEPS * 1e9;
    *reg_ns = (t2 - t1) / CHAIN_STEPS * 1e9;
}

/* ---- the core-to-core round trip ---- */

#define PING_ROUNDS 100000
static uint64_t ping_a __attribute__((aligned(128))), ping_b __attribute__((aligned(128)));

static void *pong(void *arg)
{
    (void)arg;
    pin_to(1);
    for (uint64_t i = 1; i <= PING_ROUNDS; i++) {
        while (__atomic_load_n(&ping_a, __ATOMIC_ACQUIRE) != i)
            ;
        __atomic_store_n(&ping_b, i, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* ns per round trip between CPUs 0 and 1, or 0 where this thread may not
** run on both (two spinning threads on one CPU would take a time slice a
** round). */
static double round_trip_ns(void)
{
    pthread_t th;
    cpu_set_t old;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2 ||
        pthread_getaffinity_np(pthread_self(), sizeof old, &old) != 0 ||
        !CPU_ISSET(0, &old) || !CPU_ISSET(1, &old) ||
        pthread_create(&th, NULL, pong, NULL) != 0)
        return 0;
    pin_to(0);
    double t0 = now_s();
    for (uint64_t i = 1; i <= PING_ROUNDS; i++) {
        __atomic_store_n(&ping_a, i, __ATOMIC_RELEASE);
        while (__atomic_load_n(&ping_b, __ATOMIC_ACQUIRE) != i)
            ;
    }
    double ns = (now_s() - t0) / PING_ROUNDS * 1e9;
    pthread_join(th, NULL);
    pthread_setaffinity_np(pthread_self(), sizeof old, &old);
    __atomic_store_n(&ping_a, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&ping_b, 0, __ATOMIC_RELAXED);
    return ns;
}

static void *work(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    const tokens *k = sh->k;
    atab_table *t = sh->own ? sh->own[w->id] : sh->t;
    size_t i = k->n / (size_t)sh->nthreads * (size_t)w->id, fresh = 0;
    uint64_t ops = 0;
    char buf[64];
    struct timespec c0, c1;
    if (sh->pin)
        pin_to(w->id);
    while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
        ;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
        for (int j = 0; j < 256; j++, ops++) {
            int rc;
            if (sh->mode == MODE_SAME) {
                unsigned x = (unsigned)ops & 3;
                rc = hit_op(t, sh->same[x], sh->same_len[x]);
            } else if (sh->mode == MODE_SAMEDYN) {
                rc = hit_op(t, sh->samedyn[ops & 3], 14);
            } else if (sh->mode == MODE_MIX && (ops & 7) == 7) {
                int n = snprintf(buf, sizeof buf, "mix-%d-%zu", w->id, fresh++);
                rc = hit_op(t, buf, (size_t)n);   /* new, then unused */
            } else {
                rc = hit_op(t, k->s[i], k->len[i]);
                if (++i == k->n)
                    i = 0;
            }
            if (rc != 0)
                w->failed = 1;
        }
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    w->cpu_s = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
    w->ops = ops;
    return NULL;
}

/* --inline's timer: stops the run ms after it starts. */
static void *timer(void *arg)
{
    shared *sh = arg;
    while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
        ;
    struct timespec d = {sh->ms / 1000, (long)(sh->ms % 1000) * 1000000L};
    nanosleep(&d, NULL);
    __atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
    return NULL;
}

/* One timed run; returns Mops/s (wall clock), and in *cpu_ns the CPU
** time per op summed over the threads: it stays flat as threads are added
** unless they contend (shared lines, locks), even when the threads
** outnumber the CPUs or the machine is busy. */
static double run(shared *sh, int nthreads, int ms, double *cpu_ns)
{
    worker *w = calloc((size_t)nthreads, sizeof *w);
    int here = sh->inline_one && nthreads == 1;   /* --inline: main is the worker */
    sh->nthreads = nthreads;
    sh->ms = ms;
    sh->go = sh->stop = 0;
    for (int i = 0; i < nthreads; i++) {
        w[i].sh = sh;
        w[i].id = i;
        if (pthread_create(&w[i].th, NULL, here ? timer : work, here ? (void *)sh : &w[i]) != 0) {
            perror("pthread_create");
            exit(1);
        }
    }
    double t0 = now_s();
    __atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
    if (here) {
        work(&w[0]);
    } else {
        struct timespec d = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&d, NULL);
        __atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
    }
    uint64_t ops = 0;
    int failed = 0;
    double cpu = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(w[i].th, NULL);
        ops += w[i].ops;
        cpu += w[i].cpu_s;
        failed |= w[i].failed;
    }
    *cpu_ns = ops ? cpu * 1e9 / (double)ops : 0;
    double secs = now_s() - t0;
    free(w);
    if (failed) {
        fprintf(stderr, "atomthreads: an intern or release failed\n");
        exit(1);
    }
    return (double)ops / secs / 1e6;
}

/* What warms a table: every distinct token held once, and with samedyn its
** 4 atoms, held. */
typedef struct warm_job {
    atab_table *t;
    const tokens *k;
    const char (*samedyn)[16];
    int want_samedyn;
    atab_status failed;   /* what the failed intern said, or ATAB_OK */
} warm_job;

static void *warm(void *arg)
{
    warm_job *j = arg;
    tokens_warm(j->t, j->k, "atomthreads");
    for (int i = 0; i < 4 && j->want_samedyn; i++)
        if (!atab_intern(j->t, j->samedyn[i], 14))   /* held */
            j->failed = atab_last_error();
    return NULL;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int threads[16], nt = 0, ms = 300, reps = 3, json = 0, pin = 0, priv = 0, i;
    int inline_one = 0, warm_thread = 0, chain = 0;
    int modes[NMODES], nm = 0;
    atab_options opts;
    memset(&opts, 0, sizeof opts);
    const char *list = "1,2,4,8,16", *mlist = "hit,same,mix";
    for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            list = argv[++i];
        else if (strcmp(argv[i], "--modes") == 0 && i + 1 < argc)
            mlist = argv[++i];
        else if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc)
            ms = atoi(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--sweep-threshold") == 0 && i + 1 < argc)
            opts.sweep_threshold = (size_t)atol(argv[++i]);
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--pin") == 0)
            pin = 1;
        else if (strcmp(argv[i], "--private") == 0)
            priv = 1;
        else if (strcmp(argv[i], "--inline") == 0)
            inline_one = 1;
        else if (strcmp(argv[i], "--warm-thread") == 0)
            warm_thread = 1;
        else if (strcmp(argv[i], "--chain") == 0)
            chain = 1;
        else
            break;
    }
    if (chain) {   /* the machine's figure alone */
        double mem, reg;
        for (int r = 0; r < 3; r++) {
            chain_ns(&mem, &reg);
            printf("a counter in memory: %.3f ns a step; in a register: %.3f ns\n", mem, reg);
        }
        return 0;
    }
    for (const char *p = list; *p && nt < 16; p += strcspn(p, ","), p += *p == ',')
        if ((threads[nt] = atoi(p)) > 0 && threads[nt] <= MAX_THREADS)
            nt++;
    for (const char *p = mlist; *p && nm < NMODES; p += strcspn(p, ","), p += *p == ',')
        for (int m = 0; m < NMODES; m++)
            if (strlen(mode_name[m]) == strcspn(p, ",") &&
                strncmp(p, mode_name[m], strcspn(p, ",")) == 0)
                modes[nm++] = m;
    int want_samedyn = 0;   /* its 4 atoms join the table only when it runs */
    for (int m = 0; m < nm; m++)
        want_samedyn |= modes[m] == MODE_SAMEDYN;
    if (i + 1 != argc || nt == 0 || nm == 0 || ms < 1 || reps < 1 || reps > 99) {
        fprintf(stderr, "usage: atomthreads [--threads 1,2,4,8,16] [--modes hit,same,mix]"
                        " [--ms 300] [--reps 3] [--sweep-threshold N] [--pin] [--private]"
                        " [--inline] [--warm-thread] [--json] FILE\n"
                        "       atomthreads --chain\n");
        return 2;
    }
    tokens k;
    load(argv[i], &k);
    shared sh;
    memset(&sh, 0, sizeof sh);
    sh.k = &k;
    sh.pin = pin;
    sh.inline_one = inline_one;
    int max_threads = 0;
    for (int j = 0; j < nt; j++)
        max_threads = threads[j] > max_threads ? threads[j] : max_threads;
    for (int j = 0; j < 4; j++) {
        sh.same[j] = k.s[j], sh.same_len[j] = k.len[j];
        snprintf(sh.samedyn[j], sizeof sh.samedyn[j], "samedyn-atom-%d", j);
    }
    /* the shared table, or with --private one for each worker */
    int n_tabs = priv ? max_threads : 1;
    atab_table **tabs = calloc((size_t)n_tabs, sizeof *tabs);
    if (!tabs)
        return fprintf(stderr, "atomthreads: out of memory\n"), 1;
    for (int ti = 0; ti < n_tabs; ti++) {
        if (!(tabs[ti] = atab_table_new(&opts)))
            return fprintf(stderr, "atomthreads: %s\n", atab_strerror(atab_last_error())), 1;
        warm_job wj = {tabs[ti], &k, (const char (*)[16])sh.samedyn, want_samedyn, ATAB_OK};
        pthread_t wt;
        if (!warm_thread)
            warm(&wj);
        else if (pthread_create(&wt, NULL, warm, &wj) != 0 || pthread_join(wt, NULL) != 0)
            return fprintf(stderr, "atomthreads: no thread to warm the table in\n"), 1;
        if (wj.failed != ATAB_OK)
            return fprintf(stderr, "atomthreads: %s\n", atab_strerror(wj.failed)), 1;
    }
    sh.t = tabs[0];
    sh.own = priv ? tabs : NULL;
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    char rt[32] = "null";   /* JSON's word for none; "n/a" in the text */
    double rt_ns = round_trip_ns();
    if (rt_ns > 0)
        snprintf(rt, sizeof rt, "%.1f", rt_ns);
    if (json)
        printf("{\"machine\": {\"nproc\": %ld, \"cpu\": \"%s\", \"round_trip_ns\": %s}, "
               "\"file\": \"%s\", \"ms\": %d, \"reps\": %d, \"pinned\": %s, "
               "\"private\": %s, \"unit\": \"Mops/s\", \"results\": [",
               ncpu, cpu, rt, argv[i], ms, reps, pin ? "true" : "false",
               priv ? "true" : "false");
    else
        printf("atomthreads: %ld CPUs, %s; core-to-core round trip %s%s%s; %s, %zu tokens,"
               " %zu atoms; median of %d x %d ms; op = atab_intern + atab_release%s\n%-7s %7s",
               ncpu, cpu, rt_ns > 0 ? rt : "n/a", rt_ns > 0 ? " ns" : "",
               pin ? "; threads pinned" : "", argv[i], k.n, atab_count(sh.t), reps, ms,
               priv ? "; a table per thread" : "", "mode",
               "threads");
    if (!json)
        printf(" %10s %8s %10s\n", "Mops/s", "scaling", "cpu-ns/op");
    /* rep r of every thread count before rep r + 1 of any: each count's
    ** median samples the same span of time, so a slow spell of a shared
    ** machine weighs on all of them alike, not on one count's ratio */
    double *all = malloc((size_t)reps * (size_t)nt * 2 * sizeof *all);
    for (int mi = 0; mi < nm; mi++) {
        double base = 0;
        int m = modes[mi];
        sh.mode = m;
        for (int r = 0; r < reps; r++)
            for (int j = 0; j < nt; j++)
                all[2 * (j * reps + r)] = run(&sh, threads[j], ms, &all[2 * (j * reps + r) + 1]);
        for (int j = 0; j < nt; j++) {
            double v[99], cv[99];
            for (int r = 0; r < reps; r++)
                v[r] = all[2 * (j * reps + r)], cv[r] = all[2 * (j * reps + r) + 1];
            qsort(v, (size_t)reps, sizeof *v, cmp_dbl);
            qsort(cv, (size_t)reps, sizeof *cv, cmp_dbl);
            double med = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
            double cmed = reps % 2 ? cv[reps / 2] : (cv[reps / 2 - 1] + cv[reps / 2]) / 2;
            if (j == 0)
                base = med / threads[0];   /* per thread, in case the list skips 1 */
            if (json)
                printf("%s\n  {\"mode\": \"%s\", \"threads\": %d, \"mops\": %.3f, "
                       "\"min\": %.3f, \"max\": %.3f, \"scaling\": %.3f, "
                       "\"cpu_ns_per_op\": %.2f}",
                       mi || j ? "," : "", mode_name[m], threads[j], med, v[0],
                       v[reps - 1], med / base, cmed);
            else
                printf("%-7s %7d %10.2f %7.2fx %10.1f%s\n", mode_name[m], threads[j], med,
                       med / base, cmed,
                       threads[j] > ncpu ? "  (more threads than CPUs)" : "");
        }
    }
    if (json)
        printf("\n]}\n");
    free(all);
    for (int ti = 0; ti < n_tabs; ti++)
        atab_table_free(tabs[ti]);
    free(tabs);
    return 0;
}
