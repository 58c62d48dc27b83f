/*
** static.c - static atom sets: registration on a table and lookup.
** (Placeholder until the generator lands: no sets are registered.)
*/
#include "atab_int.h"

int atab__static_init(atab_table *t, const atab_options *o)
{
    (void)o;
    t->sets = NULL;
    t->n_sets = 0;
    t->static_maxlen = 0;
    return 0;
}

void atab__static_fini(atab_table *t)
{
    (void)t;
}

const atab_atom *atab__static_find(const atab_table *t, const char *s, size_t len)
{
    (void)t; (void)s; (void)len;
    return NULL;
}
