/* SPDX-License-Identifier: MIT */
/*
** sweep.h - what the sweep (sweep.c) offers the files above it: the sweeps
** a release may start, and freeing what was unlinked after a grace period.
*/
#ifndef ATAB_SWEEP_H
#define ATAB_SWEEP_H

#include "table.h"

/* Frees atoms[0..n_atoms) (NULL entries skipped) and arrays[0..n_arrays),
** unlinked under shard locks, once no reader can still see them, and the
** retired arrays with them; with `q` (a queue block being swept, away
** from its record), q keeps the atoms' blocks, and those of the atoms
** waiting in q (the grace period serves them too), for its thread's next
** new atoms instead. Outside any section. */
ATAB__HIDDEN void atab__free_unlinked(atab_table *t, atab_atom *const *atoms, size_t n_atoms,
                                      const uint64_t *arrays, size_t n_arrays,
                                      const atab_atom **q);

/* After a release: a thread whose queue is full sweeps it and puts it
** back empty (one that queued an atom with no queue yet makes one); a full
** sweep once t->unused reaches the threshold, on the releasing thread
** (another thread crossing it meanwhile goes on without waiting). Outside
** any section. */
ATAB__HIDDEN void atab__queue_due(atab_table *t, atab__rec *r);
ATAB__HIDDEN void atab__sweep_at_threshold(atab_table *t);

static inline void atab__maybe_sweep(atab_table *t)
{
    if (ATAB__UNLIKELY(__atomic_load_n(&t->unused, __ATOMIC_RELAXED) >= t->sweep_threshold))
        atab__sweep_at_threshold(t);
}

#endif /* ATAB_SWEEP_H */
