/* SPDX-License-Identifier: MIT */
/*
** static.h - static atom sets (static.c): registration on a table, and the
** lookup of a string in them (miss filter first, then the perfect hash).
*/
#ifndef ATAB_STATIC_H
#define ATAB_STATIC_H

#include "base.h"
#include "static_hash.h"

/* The static atom with these UTF-8 bytes in one of the table's sets. */
ATAB__HIDDEN const atab_atom *atab__static_find(const atab_table *t,
                                                const char *s, size_t len);
/* Registers the options' sets (and the default set) on a new table;
** -1 with the error set on bad sets or no memory. */
ATAB__HIDDEN int atab__static_init(atab_table *t, const atab_options *o);
ATAB__HIDDEN void atab__static_fini(atab_table *t);
/* The table's heap block listing its sets (*bytes its size), or NULL when
** it has none (no sets, or the default set alone, which is not copied). */
ATAB__HIDDEN const void *atab__static_heap(const atab_table *t, size_t *bytes);

/* Bit `bit` of a miss filter (static_hash.h): a clear bit means no slot of
** its set holds the bytes that map to it, known without hashing. */
static inline int atab__filter_has_bit(const uint64_t *filter, uint32_t bit)
{
    return (int)((filter[bit >> 6] >> (bit & 63)) & 1);
}

/* Could this set hold the bytes whose filter bit is `bit`? */
static inline int atab__set_has_bit(const atab_static_set *set, uint32_t bit)
{
    return atab__filter_has_bit(set->filter, bit);
}

static inline int atab__set_may_hold(const atab_static_set *set, const char *s, size_t len)
{
    return atab__set_has_bit(set, atab__static_filter_bit(s, len, set->filter_log2));
}

#endif /* ATAB_STATIC_H */
