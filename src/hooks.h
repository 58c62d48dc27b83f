/* SPDX-License-Identifier: MIT */
/*
** hooks.h - named pause points for deterministic race tests. Built with
** -DATAB_TEST_HOOKS (the test builds), each point calls the hook a test
** installed, with the point's name and the object at stake, so the test can
** hold a thread exactly there while another thread runs. Other builds
** compile the points to nothing.
**
** Points, by protocol (thread.h, table.c, life.c and sweep.c say what each
** protects):
**   handle release vs table free   "external_release:dropped" (t), after
**       the handle's reference is dropped, before the handle count;
**       "table_free:closing" (t), before atab_table_free marks the table
**   revive vs sweep                "revive:cas" (atom), before a reference
**       is taken from the count; "sweep:kill" (atom), before a sweep's
**       CAS to dead; "sweep:free" (t), before the grace period that
**       precedes freeing what a sweep unlinked
**   thread exit vs flush/sweep     "thread_exit:record" (record), before
**       an exiting thread gives its record back; "flush:record" (record),
**       before a flusher gives a record's spares back
**   queue take vs flush            "queue:take" (record), after the owner
**       saw its record's queue, before it takes the queue away to sweep
**       it; "queue:made" (record), after the owner allocated a
**       new queue's block, before the block is its record's
**   queue push vs fork             "queue:slot" (atom), after an atom's
**       slot in its thread's queue is written, before the queue's count
**   queue sweep                    "queue:kill" (atom), under its shard's
**       lock, before a queue sweep kills or takes off a queued atom;
**       "queue:free" (t), after a queue sweep's unlinks, before it
**       leaves them waiting or runs its grace period
**   recycled blocks vs fork        "recycled:taken" (record), after a
**       failed allocation took the blocks its record kept, before they go
**       back to their chunks
**   grow vs read                   "probe:array" (t), after a reader
**       loaded a shard's array, before probing it; "grow:retire" (t),
**       after a growth dropped its shard's lock, before it frees or
**       retires the array it replaced; "grow:free" (t), before the grace
**       period that precedes freeing a replaced array
**   refused charge vs allocations  "charge:refused" (t), after a
**       request was found to pass the memory limit, before the refusal
**       returns
**   over-release vs a cache hit    "cache:entry" (t), after a hit of a
**       key past the short-key path found its atom in this thread's
**       cache, before it checks the count and takes a spare
**   a carved block freed           "chunk:put" (the block), as it goes
**       back to its chunk, chunk_lock held, or as atab_table_free leaves
**       it to its chunk's free (the race tests count it as the block's
**       free: test_hooks.h); "chunk:take" (t), chunk_lock held, as a
**       thread's insert takes blocks from the free lists (chunk.h:
**       atab__chunk_carve_many); "recycled:put" (record), chunk_lock
**       held, before it moves more of them onto its record's kept ones
**   insert vs insert or grow       "insert:made" (t), after a short
**       key's insert made its atom, before it takes the shard's lock
**   solo insert vs a move or end   "insert:solo" (t), after the solo
**       thread's insert saw the bias its own and the lock free, before
**       its stores (table.h: the solo thread)
**   membarrier that fails          "fence:fallback" (t), as a writer's
**       fence falls back for threads that took no fence (grace.c)
**   a grace period vs the batches  "gp:served" (t), after a grace
**   it serves                          period's wait, before it says
**       which unlinks it served (thread.h: atab__gp_served)
**   kick vs read                   "probe:group_a" (group A's control
**       bytes), after a probe read the control bytes of a key's group A,
**       before it reads its slots
*/
#ifndef ATAB_HOOKS_H
#define ATAB_HOOKS_H

#include "base.h"

#ifdef ATAB_TEST_HOOKS
typedef void (*atab__hook_fn)(const char *point, const void *arg);
extern ATAB__HIDDEN atab__hook_fn atab__test_hook;   /* set by a test */
#define ATAB__PAUSE(point, arg)                                                  \
    do {                                                                         \
        atab__hook_fn hook_ = __atomic_load_n(&atab__test_hook, __ATOMIC_ACQUIRE); \
        if (hook_)                                                               \
            hook_(point, arg);                                                   \
    } while (0)
#else
#define ATAB__PAUSE(point, arg) ((void)0)
#endif

#endif /* ATAB_HOOKS_H */
