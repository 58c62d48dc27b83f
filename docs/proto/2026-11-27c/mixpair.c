/* SPDX-License-Identifier: MIT */
/*
** mixpair.c - scratch: what a second thread costs a thread that runs
** atomthreads' `mix` (7 hits over the token file, then 1 new string,
** each op an intern and its release), by what the second thread does.
** Thread 0 (the mixer) runs on CPU 0, the partner on CPU 1; the table is
** built first by the main thread (every token interned and held).
**
** usage: mixpair PARTNER MS FILE
**   PARTNER -1  no partner: the mixer alone on the table
**            4  a partner with a record on the table that sleeps
**            0  a partner with a record that spins, touching nothing
**            1  hits over the token file, from its middle
**            3  mix too (its own new strings)
**            7  hits of 20,000 held atoms of its own ("q0".."q19999"), in
**               a scattered order: nearly every hit misses its thread
**               cache and probes, and no line of their atoms is the
**               mixer's
** Prints the mixer's CPU ns per op (and the partner's).
**
** Build (from the repository root, after make):
**   cc -O2 -pthread -Iinclude -Ibench docs/proto/2026-11-27c/mixpair.c \
**      -o mixpair build/make/libatomtab.a -lxxhash
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <atomtab.h>

#include "tokens.h"

#define NQ 20000

static atab_table *T;
static tokens K;
static char QS[NQ][16];
static size_t QL[NQ];
static volatile int go, stop;
static int pmode, run_ms;
static uint64_t partner_ops;
static double partner_cpu;

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void op(const char *s, size_t n)
{
    const atab_atom *a = atab_intern(T, s, n);
    if (!a) {
        fprintf(stderr, "mixpair: atab_intern failed\n");
        exit(1);
    }
    atab_release(T, a);
}

static double cpu_s(void)
{
    struct timespec c;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
    return (double)c.tv_sec + (double)c.tv_nsec * 1e-9;
}

/* Runs `mode` until stop: 0 spins, 3 mixes, 7 hits the q atoms, else hits
** the tokens from offset (id * K.n / 2). */
static void loop(int id, int mode, uint64_t *ops_out, double *cpu_out)
{
    size_t i = K.n / 2 * (size_t)id, fresh = 0;
    uint64_t ops = 0;
    char buf[64];
    while (!go)
        ;
    double c0 = cpu_s();
    while (!stop) {
        for (int j = 0; j < 256; j++, ops++) {
            if (mode == 0) {
                __asm__ volatile("");
            } else if (mode == 7) {
                unsigned q = (unsigned)((ops * 2654435761u) % NQ);
                op(QS[q], QL[q]);
            } else if (mode == 3 && (ops & 7) == 7) {
                int n = snprintf(buf, sizeof buf, "mix-%d-%zu", id, fresh++);
                op(buf, (size_t)n);
            } else {
                op(K.s[i], K.len[i]);
                if (++i == K.n)
                    i = 0;
            }
        }
    }
    *cpu_out = cpu_s() - c0;
    *ops_out = ops;
}

static void *partner(void *arg)
{
    (void)arg;
    pin(1);
    op("partner", 7);   /* its record */
    if (pmode == 7)
        for (int q = 0; q < NQ; q++) {
            QL[q] = (size_t)snprintf(QS[q], sizeof QS[q], "q%d", q);
            if (!atab_intern(T, QS[q], QL[q]))
                exit(1);
        }
    if (pmode == 4) {
        while (!stop) {
            struct timespec d = {0, 1000000};
            nanosleep(&d, NULL);
        }
        return NULL;
    }
    loop(1, pmode, &partner_ops, &partner_cpu);
    return NULL;
}

static void *stopper(void *arg)
{
    (void)arg;
    struct timespec d = {run_ms / 1000, (long)(run_ms % 1000) * 1000000L};
    nanosleep(&d, NULL);
    stop = 1;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: mixpair PARTNER MS FILE\n");
        return 2;
    }
    pmode = atoi(argv[1]);
    run_ms = atoi(argv[2]);
    tokens_load(argv[3], &K, "mixpair");
    if (!(T = atab_table_new(NULL)))
        return 1;
    for (size_t i = 0; i < K.n; i++)
        if (!atab_intern(T, K.s[i], K.len[i]))
            return 1;
    pin(0);
    pthread_t th, tm;
    int two = pmode >= 0;
    if (two)
        pthread_create(&th, NULL, partner, NULL);
    struct timespec d = {0, 20000000};
    nanosleep(&d, NULL);
    go = 1;
    pthread_create(&tm, NULL, stopper, NULL);
    uint64_t ops;
    double c;
    loop(0, 3, &ops, &c);
    pthread_join(tm, NULL);
    if (two)
        pthread_join(th, NULL);
    printf("partner %d: mixer %.2f cpu-ns/op", pmode, c * 1e9 / (double)ops);
    if (two && pmode != 4)
        printf(", partner %.2f", partner_cpu * 1e9 / (double)partner_ops);
    printf("\n");
    return 0;
}
