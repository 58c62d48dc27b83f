/* SPDX-License-Identifier: MIT */
/*
** urcu.c - atomurcu: one grace period of atomtab's own (the records' seq
** protocol and one membarrier, src/grace.c: atab__synchronize, reached
** through the static library) against userspace RCU's memb flavour
** (liburcu-memb: urcu_memb_synchronize_rcu, and urcu_memb_call_rcu, which
** batches callbacks behind the grace periods of a thread of its own), with
** N reader threads in read-side sections of each kind all the time:
** atomtab's readers intern and release one held atom (each call one
** section), liburcu's do the same inside rcu_read_lock and unlock, with
** a pointer load: sections as long as atomtab's, so that a reader is as
** likely to be preempted inside one.
**
** Per N: the writer's wall ns per synchronize (the median of --calls, or
** of those that fit in 2 seconds, 8 at least), and
** for callbacks the wall ns per item from the first call_rcu to the
** rcu_barrier after the last (--items), beside atomtab's batching of one
** grace period per queue of 1,024 transient atoms (table.c). Wall time
** only; on fewer CPUs than readers + 1 a reader preempted inside a section
** holds up every grace period, of either kind.
**
** usage: atomurcu [--threads 1,2,16] [--calls 2000] [--items 200000]
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu/urcu-memb.h>

#include <atomtab.h>

void atab__synchronize(atab_table *t);   /* src/thread.h: hidden, linked statically */

enum { KIND_ATAB, KIND_URCU };

static int g_stop;              /* atomic */
static atab_table *g_t;
static const atab_atom *g_held;
static int *g_ptr;              /* what urcu readers dereference */
static uint64_t g_reads;        /* atomic, a sink */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *reader(void *arg)
{
    int kind = *(int *)arg;
    uint64_t n = 0;
    if (kind == KIND_URCU)
        urcu_memb_register_thread();
    while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED)) {
        if (kind == KIND_ATAB) {
            const atab_atom *a = atab_intern(g_t, "held", 4);
            n += a == g_held;
            atab_release(g_t, a);
        } else {
            urcu_memb_read_lock();   /* as long a section as atomtab's */
            const atab_atom *a = atab_intern(g_t, "held", 4);
            n += a == g_held && *rcu_dereference(g_ptr);
            atab_release(g_t, a);
            urcu_memb_read_unlock();
        }
    }
    if (kind == KIND_URCU)
        urcu_memb_unregister_thread();
    __atomic_add_fetch(&g_reads, n, __ATOMIC_RELAXED);
    return NULL;
}

typedef struct item {
    struct rcu_head head;
    int payload;
} item;

static uint64_t g_done;   /* callbacks run (atomic) */

static void item_free(struct rcu_head *h)
{
    free(caa_container_of(h, item, head));
    __atomic_add_fetch(&g_done, 1, __ATOMIC_RELAXED);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median wall ns per synchronize (kind) with n readers of that kind; with
** `items`, ns per call_rcu item instead (urcu only). */
static double measure(int kind, int n, long calls, long items)
{
    pthread_t *th = calloc((size_t)n, sizeof *th);
    int k = kind;
    __atomic_store_n(&g_stop, 0, __ATOMIC_RELAXED);
    for (int i = 0; i < n; i++)
        if (!th || pthread_create(&th[i], NULL, reader, &k) != 0) {
            perror("atomurcu: pthread_create");
            exit(1);
        }
    usleep(20000);   /* the readers are in their loops */
    double t0 = now_ns(), r;
    if (items) {
        urcu_memb_register_thread();   /* call_rcu's caller is a reader thread */
        for (long i = 0; i < items; i++) {
            item *it = malloc(sizeof *it);
            if (!it) {
                perror("atomurcu: malloc");
                exit(1);
            }
            it->payload = (int)i;
            urcu_memb_call_rcu(&it->head, item_free);
        }
        urcu_memb_barrier();
        urcu_memb_unregister_thread();
        r = (now_ns() - t0) / (double)items;
    } else {
        double *ns = malloc((size_t)calls * sizeof *ns);
        long i;
        if (!ns) {
            perror("atomurcu: malloc");
            exit(1);
        }
        for (i = 0; i < calls && (i < 8 || now_ns() - t0 < 2e9); i++) {   /* 2 s at most */
            double c0 = now_ns();
            if (kind == KIND_ATAB)
                atab__synchronize(g_t);
            else
                urcu_memb_synchronize_rcu();
            ns[i] = now_ns() - c0;
        }
        qsort(ns, (size_t)i, sizeof *ns, by_value);
        r = ns[i / 2];   /* the median: a busy machine's stalls stay out of it */
        free(ns);
    }
    __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    free(th);
    return r;
}

int main(int argc, char **argv)
{
    const char *threads = "1,2,16";
    long calls = 2000, items = 200000;
    static int one = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = argv[++i];
        else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
            calls = atol(argv[++i]);
        else if (strcmp(argv[i], "--items") == 0 && i + 1 < argc)
            items = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: atomurcu [--threads 1,2,16] [--calls 2000] [--items 200000]\n");
            return 2;
        }
    }
    if (calls < 1 || items < 1) {
        fprintf(stderr, "atomurcu: --calls and --items must be positive\n");
        return 2;
    }
    g_t = atab_table_new(NULL);
    g_held = g_t ? atab_intern(g_t, "held", 4) : NULL;
    g_ptr = &one;
    if (!g_held) {
        fprintf(stderr, "atomurcu: no table\n");
        return 1;
    }
    printf("atomurcu: atomtab %s, %ld CPUs; wall ns, N readers in read-side sections throughout\n"
           "%7s %14s %14s %16s %16s\n", atab_version(), sysconf(_SC_NPROCESSORS_ONLN),
           "readers", "atab sync", "urcu-memb sync", "atab per item", "call_rcu per item");
    for (const char *p = threads; *p;) {
        char *end;
        long n = strtol(p, &end, 10);
        if (end == p || n < 1 || n > 1024) {
            fprintf(stderr, "atomurcu: bad --threads '%s'\n", threads);
            return 2;
        }
        double a = measure(KIND_ATAB, (int)n, calls, 0);
        double u = measure(KIND_URCU, (int)n, calls, 0);
        double c = measure(KIND_URCU, (int)n, 0, items);
        printf("%7ld %14.0f %14.0f %16.1f %16.1f\n", n, a, u, a / 1024.0, c);
        p = *end == ',' ? end + 1 : end;
    }
    atab_release(g_t, g_held);
    atab_table_free(g_t);
    return __atomic_load_n(&g_done, __ATOMIC_RELAXED) ? 0 : 1;
}
