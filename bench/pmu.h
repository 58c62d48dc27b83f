/* SPDX-License-Identifier: MIT */
/*
** pmu.h - hardware event counts per op around a bench child's workloads,
** where the machine lends its counters (Linux perf_event_open, this
** process's user-mode events only). Off unless ATAB_PMU=1 is in the
** environment; an event the machine or kernel refuses reads "n/a".
**
** pmu_open() once; pmu_begin(&p) before a workload and pmu_end(&p, name,
** ops) after it print one line on stderr:
**   pmu hit: ops=N cycles=C instructions=I l1d-miss=M llc-miss=L dtlb-miss=T
** each per op. The counts are the hardware's, so they explain a figure on
** one machine (a miss past the caches, a fenced instruction that stalls)
** where callgrind, which simulates, cannot.
*/
#ifndef ATAB_BENCH_PMU_H
#define ATAB_BENCH_PMU_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define PMU_EVENTS 5

typedef struct pmu {
    int on;
    int fd[PMU_EVENTS];
    uint64_t at[PMU_EVENTS];
} pmu;

static const char *const pmu_names[PMU_EVENTS] = {"cycles", "instructions", "l1d-miss",
                                                  "llc-miss", "dtlb-miss"};

#if defined(__linux__)
#define PMU_CACHE(id, op, res) ((id) | (op) << 8 | (res) << 16)
static int pmu_event(uint32_t type, uint64_t config)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = type;
    a.config = config;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}
#endif

static inline pmu pmu_open(void)
{
    pmu p;
    memset(&p, 0, sizeof p);
    const char *e = getenv("ATAB_PMU");
    for (int i = 0; i < PMU_EVENTS; i++)
        p.fd[i] = -1;
    if (!e || strcmp(e, "1") != 0)
        return p;
#if defined(__linux__)
    p.fd[0] = pmu_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
    p.fd[1] = pmu_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
    p.fd[2] = pmu_event(PERF_TYPE_HW_CACHE,
                        PMU_CACHE(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
                                  PERF_COUNT_HW_CACHE_RESULT_MISS));
    p.fd[3] = pmu_event(PERF_TYPE_HW_CACHE,
                        PMU_CACHE(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ,
                                  PERF_COUNT_HW_CACHE_RESULT_MISS));
    p.fd[4] = pmu_event(PERF_TYPE_HW_CACHE,
                        PMU_CACHE(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ,
                                  PERF_COUNT_HW_CACHE_RESULT_MISS));
#endif
    p.on = 1;
    return p;
}

static inline uint64_t pmu_read(int fd)
{
    uint64_t v = 0;
#if defined(__linux__)
    if (fd >= 0 && read(fd, &v, sizeof v) != (ssize_t)sizeof v)
        v = 0;
#else
    (void)fd;
#endif
    return v;
}

static inline void pmu_begin(pmu *p)
{
    if (p->on)
        for (int i = 0; i < PMU_EVENTS; i++)
            p->at[i] = pmu_read(p->fd[i]);
}

static inline void pmu_end(pmu *p, const char *name, size_t ops)
{
    if (!p->on || ops == 0)
        return;
    uint64_t now[PMU_EVENTS];
    for (int i = 0; i < PMU_EVENTS; i++)
        now[i] = pmu_read(p->fd[i]);
    fprintf(stderr, "pmu %s: ops=%zu", name, ops);
    for (int i = 0; i < PMU_EVENTS; i++) {
        if (p->fd[i] < 0)
            fprintf(stderr, " %s=n/a", pmu_names[i]);
        else
            fprintf(stderr, " %s=%.2f", pmu_names[i], (double)(now[i] - p->at[i]) / (double)ops);
    }
    fputc('\n', stderr);
}

#endif /* ATAB_BENCH_PMU_H */
