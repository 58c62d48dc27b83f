/* SPDX-License-Identifier: MIT */
/*
** atab_int.h - every private header, for the files that span subsystems
** (table.c, intern.c, external.c, life.c, report.c). Nothing here is
** installed; every name is atab__ and hidden. Each subsystem has its own
** header:
**   base.h    errors, allocation, attributes, the shards' lock
**   hash.h    keys: hashing and comparison
**   hooks.h   the test builds' pause points
**   atom.h    the atom object and its count
**   chunk.h   the chunks small atoms are carved from, pools of small arrays
**   thread.h  per-thread records: sections, spare references
**   static.h  static sets (static_hash.h: their fixed hash)
**   table.h   the table object and its slot arrays
**   probe.h   the probe of a slot array (readers and writers)
**   sweep.h   the sweeps a release starts; freeing after a grace period
*/
#ifndef ATAB_INT_H
#define ATAB_INT_H

#include "sweep.h"

/* ---- the host caches (external.c) ---- */

/* Drops the entries of every host cache left on t, frees the caches and
** their list (atab_table_free, first). */
ATAB__HIDDEN void atab__host_cache_destroy(atab_table *t);
/* For the reporter: fn(ud, block, bytes) for the caches' list and each
** cache's header and array; safe from any thread. */
ATAB__HIDDEN void atab__external_visit_memory(atab_table *t, atab__array_fn fn, void *ud);

#endif /* ATAB_INT_H */
