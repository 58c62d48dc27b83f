/* SPDX-License-Identifier: MIT */
/*
** atab_int.h - every private header, for the files that span subsystems
** (report.c, external.c). Nothing here is installed; every name is atab__
** and hidden. Each subsystem has its own header:
**   base.h    errors, allocation, attributes
**   hash.h    keys: hashing and comparison
**   atom.h    the atom object and its count
**   thread.h  per-thread records: sections, spare references
**   static.h  static sets
**   table.h   the table object and its slot arrays
**   probe.h   the probe of a slot array (readers and writers)
**   sweep.h   the sweeps a release starts; freeing after a grace period
*/
#ifndef ATAB_INT_H
#define ATAB_INT_H

#include "sweep.h"

/* ---- the host cache (external.c) ---- */

/* Drops the host cache's entries and frees it (atab_table_free, first). */
ATAB__HIDDEN void atab__host_cache_destroy(atab_table *t);
/* For the reporter: fn(ud, block, bytes) for the host cache's blocks; safe
** from any thread. */
ATAB__HIDDEN void atab__external_visit_memory(atab_table *t, atab__array_fn fn, void *ud);

#endif /* ATAB_INT_H */
