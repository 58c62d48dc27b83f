/* SPDX-License-Identifier: MIT */
/*
** base.h - what every file of the library shares: visibility and branch
** hints, the thread's last error (error.c), allocation counted against
** the table's memory limit (alloc.c), and the shards' lock (lock.c).
** Nothing here is installed.
*/
#ifndef ATAB_BASE_H
#define ATAB_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "atomtab.h"

#define ATAB__HIDDEN __attribute__((visibility("hidden")))
#define ATAB__LIKELY(x) __builtin_expect(!!(x), 1)
#define ATAB__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define ATAB__INLINE static inline __attribute__((always_inline))
#define ATAB__TLS __attribute__((tls_model("initial-exec")))

/* May the hit path read a short key by a load that starts up to 7 bytes
** before it, on its page (intern.c)? On x86, where nothing finer than a
** page guards memory, and not in a sanitizer's build, which would report
** the bytes read before the key. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer) || __has_feature(hwaddress_sanitizer)
#define ATAB__SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ATAB__SANITIZED 1
#endif
#if (defined(__x86_64__) || defined(__i386__)) && !defined(ATAB__SANITIZED)
#define ATAB__READ_BEFORE 1
#else
#define ATAB__READ_BEFORE 0
#endif
/* x86-64 outside the sanitizers (which must see every access): a few hot
** steps of the hash and the compare in inline asm (hash.h). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(ATAB__SANITIZED)
#define ATAB__X86_64_ASM 1
#else
#define ATAB__X86_64_ASM 0
#endif
#if ATAB__X86_64_ASM && !ATAB__READ_BEFORE
#error "the x86-64 asm paths read before keys (intern.c: key_word)"
#endif
#define ATAB__PAGE_MASK 4088u   /* of an address, the bits that say it is at least
                                   8 bytes into a 4 KB page (else 0) */

/* Asks for the line holding p in a state this core may write, so that a
** store or a locked instruction to come finds it there: a hint, which never
** faults and changes nothing, wherever p points. A line other cores wrote
** last costs a core-to-core transfer (hundreds of nanoseconds on a large
** machine); asked for early, several such transfers overlap instead of
** following one another. On x86 it is PREFETCHW, issued only where `ok`: the CPU has it
** (life.c asks CPUID once a table; t->prefetchw keeps the answer);
** elsewhere, and where the compiler may assume PREFETCHW, the compiler's
** prefetch for writing. */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__PRFCHW__)
#define ATAB__PREFETCHW_ASM 1
#else
#define ATAB__PREFETCHW_ASM 0
#endif
ATAB__INLINE void atab__prefetch_w(int ok, const void *p)
{
#if ATAB__PREFETCHW_ASM
    if (ok)   /* the address alone: p need not point into an object */
        __asm__ volatile("prefetchw (%0)" : : "r"(p));
#else
    (void)ok;
    __builtin_prefetch(p, 1);
#endif
}

/* Sets this thread's last error; returns NULL so callers can `return`. */
ATAB__HIDDEN void *atab__fail(atab_status code);
ATAB__HIDDEN void atab__set_error(atab_status code);

/* Allocates `size` bytes counted against the table's memory limit.
** Returns NULL and sets ATAB_ELIMIT or ATAB_ENOMEM on failure. */
ATAB__HIDDEN void *atab__alloc(atab_table *t, size_t size);
ATAB__HIDDEN void atab__free(atab_table *t, void *p, size_t size);
/* The same, charged to the counter `acct` when the table has no memory
** limit (a thread's record's, for atoms), else to the table's. */
ATAB__HIDDEN void *atab__alloc_in(atab_table *t, size_t *acct, size_t size);
ATAB__HIDDEN void atab__free_in(atab_table *t, size_t *acct, void *p, size_t size);
/* Requested bytes in use: the table's counter and every record's (thread.c). */
ATAB__HIDDEN size_t atab__bytes(atab_table *t);
/* Usable size of a block from the table's allocator; 0 when unknown. */
ATAB__HIDDEN size_t atab__usable(const atab_table *t, const void *p, size_t size);
/* The allocator's own bytes beside a block of that usable size (a chunk
** header), or SIZE_MAX when unknown: only the default allocator on glibc's
** malloc knows it (alloc.c). */
ATAB__HIDDEN size_t atab__overhead(const atab_table *t, size_t usable);

/* A lock of one word, for the shards: 0 free, 1 held, 2 held with a
** thread asleep on it (a futex on Linux). Taking and dropping it is one
** atomic read-modify-write each, inline; a taker that finds it held spins
** briefly, then sleeps. Never recursive; no owner is recorded. */
typedef struct atab__lock {
    uint32_t word;
} atab__lock;

ATAB__HIDDEN void atab__lock_wait(atab__lock *l);
ATAB__HIDDEN void atab__lock_wake(atab__lock *l);

static inline void atab__lock_take(atab__lock *l)
{
    uint32_t free_ = 0;
    if (!__atomic_compare_exchange_n(&l->word, &free_, 1, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        atab__lock_wait(l);
}

static inline void atab__lock_drop(atab__lock *l)
{
    if (ATAB__UNLIKELY(__atomic_exchange_n(&l->word, 0, __ATOMIC_RELEASE) == 2))
        atab__lock_wake(l);
}

#endif /* ATAB_BASE_H */
