/* SPDX-License-Identifier: MIT */
/*
** latency.c - atomlatency: how long one reader's hits can be held up by
** other threads' garbage (the goal: p99.99 beside churn at most 3x
** alone, tools/bench-lifecycle.sh), through the public API.
**
** The table (default options: sweep_threshold 10,000) is warmed as
** atomthreads warms it: every distinct token of the file interned once and
** held. One reader thread does batches of 64 hits (atab_intern of a present
** token + atab_release), walking the token stream, and times each batch
** with CLOCK_MONOTONIC: (a) alone, (b) while --churners threads (1 by
** default) intern and release new strings ("churn-ID-N") in a loop, so
** unused atoms pile up and a sweep runs every 10,000 of them. Each phase
** times --batches batches after batches/100 untimed ones; in (b) the
** reader starts once the churning threads have done 20,000 ops. Prints p50, p99, p99.9, p99.99 and
** max ns per batch, and p99.99(churn) / p99.99(alone): the goal is <= 3.
** bench/sc (--latency) runs the same test on string_cache.
**
** usage: atomlatency [--batches 2000000] [--churners 1] [--json] FILE
*/
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomtab.h>

#include "tokens.h"

enum { BATCH = 64, CHURN_HEAD_START = 20000 };

typedef struct phase {
    atab_table *t;
    const tokens *k;
    uint64_t *times;      /* ns per timed batch */
    size_t batches;
    int stop;             /* atomic: the reader is done */
    uint64_t churned;     /* atomic: the churning threads' ops so far */
    int churn, failed;    /* churn: churning threads in this phase */
    int next_id;          /* atomic: the next churning thread's id */
} phase;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One op: intern a string and release it. */
static inline int hit_op(atab_table *t, const char *s, size_t len)
{
    const atab_atom *a = atab_intern(t, s, len);
    return a && atab_release(t, a) == ATAB_OK ? 0 : -1;
}

/* A churning thread: new strings, interned and released at once. */
static void *churn(void *arg)
{
    phase *p = arg;
    char buf[64];
    int id = __atomic_fetch_add(&p->next_id, 1, __ATOMIC_RELAXED);
    uint64_t n = 0;
    while (!__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
        for (int j = 0; j < 256; j++, n++) {
            int len = snprintf(buf, sizeof buf, "churn-%d-%llu", id, (unsigned long long)n);
            if (hit_op(p->t, buf, (size_t)len) != 0)
                __atomic_store_n(&p->failed, 1, __ATOMIC_RELAXED);
        }
        __atomic_fetch_add(&p->churned, 256, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* One batch of BATCH hits from token *i on; returns its ns. */
static uint64_t batch(phase *p, size_t *i)
{
    const tokens *k = p->k;
    uint64_t t0 = now_ns();
    for (int j = 0; j < BATCH; j++) {
        if (hit_op(p->t, k->s[*i], k->len[*i]) != 0)
            p->failed = 1;
        if (++*i == k->n)
            *i = 0;
    }
    return now_ns() - t0;
}

static void *reader(void *arg)
{
    phase *p = arg;
    size_t i = 0;
    while (p->churn && __atomic_load_n(&p->churned, __ATOMIC_RELAXED) < CHURN_HEAD_START)
        ;
    for (size_t b = 0; b < p->batches / 100; b++)   /* untimed */
        batch(p, &i);
    for (size_t b = 0; b < p->batches; b++)
        p->times[b] = batch(p, &i);
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Runs one phase beside `churners` churning threads (0: the reader alone)
** into p->times, sorted; returns the churning threads' ops. */
static uint64_t run_phase(phase *p, int churners)
{
    pthread_t rd, *ch = calloc((size_t)churners + 1, sizeof *ch);
    p->stop = 0;
    p->churned = 0;
    p->churn = churners;
    p->next_id = 0;
    for (int c = 0; c < churners; c++)
        if (!ch || pthread_create(&ch[c], NULL, churn, p) != 0) {
            perror("pthread_create");
            exit(1);
        }
    if (pthread_create(&rd, NULL, reader, p) != 0) {
        perror("pthread_create");
        exit(1);
    }
    pthread_join(rd, NULL);
    __atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
    for (int c = 0; c < churners; c++)
        pthread_join(ch[c], NULL);
    free(ch);
    if (p->failed) {
        fprintf(stderr, "atomlatency: an intern or release failed: %s\n",
                atab_strerror(atab_last_error()));
        exit(1);
    }
    qsort(p->times, p->batches, sizeof *p->times, cmp_u64);
    return __atomic_load_n(&p->churned, __ATOMIC_RELAXED);
}

/* Nearest-rank percentile of the sorted v[0..n). */
static uint64_t pct(const uint64_t *v, size_t n, double q)
{
    size_t r = (size_t)(q * (double)n + 0.999999);
    return v[(r < 1 ? 1 : r > n ? n : r) - 1];
}

static const double qs[] = {0.50, 0.99, 0.999, 0.9999, 1.0};
static const char *const qjson[] = {"p50", "p99", "p999", "p9999", "max"};

static void print_json(const uint64_t *v, size_t n)
{
    for (int q = 0; q < 5; q++)
        printf("%s\"%s\": %llu", q ? ", " : "", qjson[q], (unsigned long long)pct(v, n, qs[q]));
}

int main(int argc, char **argv)
{
    size_t batches = 2000000;
    int json = 0, churners = 1, i;
    for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--batches") == 0 && i + 1 < argc)
            batches = (size_t)strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--churners") == 0 && i + 1 < argc)
            churners = atoi(argv[++i]);
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else
            break;
    }
    if (i + 1 != argc || batches < 100 || churners < 1 || churners > 1024) {
        fprintf(stderr, "usage: atomlatency [--batches 2000000] [--churners 1] [--json] FILE\n");
        return 2;
    }
    tokens k;
    tokens_load(argv[i], &k, "atomlatency");
    phase p;
    memset(&p, 0, sizeof p);
    p.k = &k;
    p.batches = batches;
    p.t = atab_table_new(NULL);
    uint64_t *alone = malloc(batches * sizeof *alone), *busy = malloc(batches * sizeof *busy);
    if (!p.t || !alone || !busy || k.n == 0)
        return fprintf(stderr, "atomlatency: no table, memory or tokens\n"), 1;
    tokens_warm(p.t, &k, "atomlatency");   /* every distinct token held once */
    p.times = alone;
    run_phase(&p, 0);
    p.times = busy;
    uint64_t churned = run_phase(&p, churners);
    double ratio = (double)pct(busy, batches, 0.9999) / (double)pct(alone, batches, 0.9999);
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    if (json) {
        printf("{\"impl\": \"atomtab\", \"machine\": {\"nproc\": %ld, \"cpu\": \"%s\"}, "
               "\"file\": \"%s\", \"batches\": %zu, \"batch\": %d, \"churners\": %d, "
               "\"unit\": \"ns\",\n  \"alone\": {",
               sysconf(_SC_NPROCESSORS_ONLN), cpu, argv[i], batches, BATCH, churners);
        print_json(alone, batches);
        printf("},\n  \"churn\": {");
        print_json(busy, batches);
        printf(", \"churn_ops\": %llu},\n  \"ratio_p9999\": %.3f}\n", (unsigned long long)churned,
               ratio);
    } else {
        printf("latency: atomtab; %s; %zu batches of %d hits (atab_intern + atab_release), "
               "ns per batch; %d churning thread(s)\n%-6s %8s %8s %8s %8s %9s %12s\n", argv[i],
               batches, BATCH, churners,
               "phase", "p50", "p99", "p99.9", "p99.99", "max", "churn ops");
        for (int ph = 0; ph < 2; ph++) {
            const uint64_t *v = ph ? busy : alone;
            printf("%-6s", ph ? "churn" : "alone");
            for (int q = 0; q < 5; q++)
                printf(" %8llu", (unsigned long long)pct(v, batches, qs[q]));
            printf(" %12llu\n", (unsigned long long)(ph ? churned : 0));
        }
        printf("p99.99 churn/alone: %.2fx\n", ratio);
    }
    atab_table_free(p.t);
    free(alone);
    free(busy);
    free(k.text);
    free(k.s);
    free(k.len);
    return 0;
}
