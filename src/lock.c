/* SPDX-License-Identifier: MIT */
/*
** lock.c - the slow paths of the shards' lock (base.h): a taker that found
** it held spins a little (holders keep it for one insert, or one shard's
** part of a sweep), then marks it contended and sleeps until a drop wakes
** it; a drop that found it contended wakes one sleeper.
*/
#include <sched.h>

#include "base.h"

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

static void sleep_on(atab__lock *l)
{
    syscall(SYS_futex, &l->word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void atab__lock_wake(atab__lock *l)
{
    syscall(SYS_futex, &l->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
#else
static void sleep_on(atab__lock *l)
{
    (void)l;
    sched_yield();
}

void atab__lock_wake(atab__lock *l)
{
    (void)l;
}
#endif

#define SPINS 100

void atab__lock_wait(atab__lock *l)
{
    for (unsigned i = 0; i < SPINS; i++) {
        uint32_t free_ = 0;
        if (__atomic_load_n(&l->word, __ATOMIC_RELAXED) == 0 &&
            __atomic_compare_exchange_n(&l->word, &free_, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    /* Contended: 2 tells the holder to wake a sleeper when it drops the
    ** lock. A taker that gets the lock this way leaves it at 2, so the
    ** next drop wakes the next sleeper (at worst one wake too many). */
    while (__atomic_exchange_n(&l->word, 2, __ATOMIC_ACQUIRE) != 0)
        sleep_on(l);
}
