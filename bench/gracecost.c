/* SPDX-License-Identifier: MIT */
/*
** gracecost.c - atomgracecost: what the machine charges for the barrier
** behind atomtab's grace periods (grace.c): one
** membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which interrupts every CPU
** running a thread of the process, with 0, 1, ... --spinners other threads
** running a register loop (keep it below the CPUs: a spinner that waits
** for a CPU is not interrupted). Prints per call the caller's wall time
** and its own CPU time; what the interrupt costs the CPUs it reaches
** is not in them. A queue sweep pays one per 1,024 transient atoms
** (table.c), so at 2 threads a transient atom carries about a thousandth
** of the 1-spinner figure. Linux only; elsewhere it says so and exits 0.
**
** usage: atomgracecost [--spinners 1] [--calls 20000]
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

static int g_stop;   /* atomic */

static void *spin(void *arg)
{
    unsigned long x = 0;
    (void)arg;
    while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED))
        x++;
    return (void *)x;
}

static double clock_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long membarrier_call(int cmd)
{
    return syscall(SYS_membarrier, cmd, 0, 0);
}

int main(int argc, char **argv)
{
    int spinners = 1, calls = 20000, i;
    for (i = 1; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (strcmp(argv[i], "--spinners") == 0)
            spinners = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--calls") == 0)
            calls = atoi(argv[i + 1]);
        else
            break;
    }
    if (i != argc || spinners < 0 || spinners > 64 || calls < 1) {
        fprintf(stderr, "usage: atomgracecost [--spinners 1] [--calls 20000]\n");
        return 2;
    }
    if (membarrier_call(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) {
        printf("atomgracecost: no private expedited membarrier here: readers fence instead\n");
        return 0;
    }
    pthread_t th[64];
    printf("spinners  wall us/call  caller CPU us/call\n");
    for (int n = 0; n <= spinners; n++) {
        __atomic_store_n(&g_stop, 0, __ATOMIC_RELAXED);
        for (int k = 0; k < n; k++)
            if (pthread_create(&th[k], NULL, spin, NULL) != 0)
                return fprintf(stderr, "atomgracecost: no thread\n"), 1;
        struct timespec settle = {0, 50000000};
        nanosleep(&settle, NULL);   /* the spinners on their CPUs */
        double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        for (int c = 0; c < calls; c++)
            membarrier_call(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
        double w1 = clock_s(CLOCK_MONOTONIC), c1 = clock_s(CLOCK_THREAD_CPUTIME_ID);
        __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
        for (int k = 0; k < n; k++)
            pthread_join(th[k], NULL);
        printf("%8d  %12.2f  %18.2f\n", n, (w1 - w0) * 1e6 / calls, (c1 - c0) * 1e6 / calls);
    }
    return 0;
}
#else
int main(void)
{
    printf("atomgracecost: membarrier is Linux's: nothing to measure here\n");
    return 0;
}
#endif
