/*
** base.h - what every file of the library shares: visibility and branch
** hints, the thread's last error (error.c), and allocation counted against
** the table's memory limit (alloc.c). Nothing here is installed.
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

#endif /* ATAB_BASE_H */
