/* SPDX-License-Identifier: MIT */
/*
** gracecount.c - atomgracecount: how many grace periods (membarrier
** calls) the library makes per 1,000 transient atoms, at 1, 2 and 16
** threads, counted from outside the library.
**
** Linked with -Wl,--wrap=syscall: every syscall() that libatomtab.a makes
** goes through __wrap_syscall below, which counts the membarrier commands
** (MEMBARRIER_CMD_PRIVATE_EXPEDITED: a grace period's barrier; the one-time
** REGISTER apart) and passes every call on to the C library unchanged.
** The library's source is not touched and its behaviour not changed.
**
** One fresh table per thread count (default options); each thread interns
** and releases --atoms / threads new strings ("gc-ID-N"): transient atoms,
** each unused once released, swept and freed as the library decides. The
** count runs from the threads' start to their join (the table's own free
** is outside it). Prints, per thread count, the membarrier calls, the
** transient atoms and the calls per 1,000 atoms, and where membarrier is
** not usable (the library then uses another grace period), says so.
**
** usage: atomgracecount [--threads 1,2,16] [--atoms 400000] [--json]
*/
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomtab.h>

long __real_syscall(long n, ...);
long __wrap_syscall(long n, ...);

static uint64_t n_barrier, n_register, n_other;   /* atomic */

/* Counts a membarrier command, then makes the call as asked (syscall()
** takes at most six arguments after the number; extra ones are ignored). */
long __wrap_syscall(long n, ...)
{
    va_list ap;
    long a[6];
    va_start(ap, n);
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (n == SYS_membarrier && a[0] == MEMBARRIER_CMD_PRIVATE_EXPEDITED)
        __atomic_fetch_add(&n_barrier, 1, __ATOMIC_RELAXED);
    else if (n == SYS_membarrier && a[0] == MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED)
        __atomic_fetch_add(&n_register, 1, __ATOMIC_RELAXED);
    else
        __atomic_fetch_add(&n_other, 1, __ATOMIC_RELAXED);
    return __real_syscall(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

typedef struct worker {
    pthread_t th;
    atab_table *t;
    int id, failed;
    size_t atoms;
    int *go;   /* atomic: start together */
} worker;

static void *churn(void *arg)
{
    worker *w = arg;
    char buf[64];
    while (!__atomic_load_n(w->go, __ATOMIC_ACQUIRE))
        ;
    for (size_t n = 0; n < w->atoms; n++) {
        int len = snprintf(buf, sizeof buf, "gc-%d-%zu", w->id, n);
        const atab_atom *a = atab_intern(w->t, buf, (size_t)len);
        if (!a || atab_release(w->t, a) != ATAB_OK)
            w->failed = 1;
    }
    return NULL;
}

/* One thread count on a fresh table: membarrier calls while it ran. */
static uint64_t run(int nthreads, size_t atoms, size_t *done)
{
    atab_table *t = atab_table_new(NULL);
    worker *w = calloc((size_t)nthreads, sizeof *w);
    int go = 0;
    if (!t || !w) {
        fprintf(stderr, "atomgracecount: no table or memory\n");
        exit(1);
    }
    uint64_t before = __atomic_load_n(&n_barrier, __ATOMIC_RELAXED);
    *done = 0;
    for (int i = 0; i < nthreads; i++) {
        w[i] = (worker){.t = t, .id = i, .atoms = atoms / (size_t)nthreads, .go = &go};
        *done += w[i].atoms;
        if (pthread_create(&w[i].th, NULL, churn, &w[i]) != 0) {
            perror("pthread_create");
            exit(1);
        }
    }
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    int failed = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(w[i].th, NULL);
        failed |= w[i].failed;
    }
    uint64_t calls = __atomic_load_n(&n_barrier, __ATOMIC_RELAXED) - before;
    if (failed) {
        fprintf(stderr, "atomgracecount: an intern or release failed: %s\n",
                atab_strerror(atab_last_error()));
        exit(1);
    }
    atab_table_free(t);
    free(w);
    return calls;
}

int main(int argc, char **argv)
{
    const char *threads = "1,2,16";
    size_t atoms = 400000;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = argv[++i];
        else if (strcmp(argv[i], "--atoms") == 0 && i + 1 < argc)
            atoms = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else {
            fprintf(stderr, "usage: atomgracecount [--threads 1,2,16] [--atoms 400000] [--json]\n");
            return 2;
        }
    }
    if (atoms < 1000) {
        fprintf(stderr, "atomgracecount: --atoms must be at least 1000\n");
        return 2;
    }
    if (json)
        printf("{\"bench\": \"atomgracecount\", \"nproc\": %ld, \"results\": [",
               sysconf(_SC_NPROCESSORS_ONLN));
    else
        printf("atomgracecount: atomtab %s, %ld CPUs; grace periods (membarrier "
               "PRIVATE_EXPEDITED calls) per 1,000 transient atoms\n%7s %12s %12s %12s\n",
               atab_version(), sysconf(_SC_NPROCESSORS_ONLN), "threads", "atoms",
               "membarriers", "per 1,000");
    int first = 1;
    for (const char *p = threads; *p;) {
        char *end;
        long n = strtol(p, &end, 10);
        if (end == p || n < 1 || n > 1024) {
            fprintf(stderr, "atomgracecount: bad --threads '%s'\n", threads);
            return 2;
        }
        size_t done;
        uint64_t calls = run((int)n, atoms, &done);
        double per = (double)calls * 1000.0 / (double)done;
        if (json)
            printf("%s\n  {\"threads\": %ld, \"atoms\": %zu, \"membarriers\": %llu, "
                   "\"per_1000\": %.3f}", first ? "" : ",", n, done,
                   (unsigned long long)calls, per);
        else
            printf("%7ld %12zu %12llu %12.3f\n", n, done, (unsigned long long)calls, per);
        first = 0;
        p = *end == ',' ? end + 1 : end;
    }
    uint64_t reg = __atomic_load_n(&n_register, __ATOMIC_RELAXED);
    if (json)
        printf("\n], \"register_calls\": %llu}\n", (unsigned long long)reg);
    else if (reg == 0)
        printf("no membarrier registration seen: this kernel's membarrier is not used, "
               "and grace periods take the library's other path (not counted here)\n");
    return 0;
}
