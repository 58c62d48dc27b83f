/* SPDX-License-Identifier: MIT */
/*
** check-consumer.c - the program check-install.sh and check-subproject.sh
** build against atomtab as a user would (installed, or as a meson
** subproject): the default static set, a host set the generator made from
** "my-widget" and "data-role" (myset.c, myset.h), the version macros.
** Prints and exits 0 when each string interns to its set's atom.
*/
#include <stdio.h>
#include <string.h>
#include <atomtab_atoms.h>
#include "myset.h"
#if ATAB_VERSION_MAJOR < 0
#error "no version macros"
#endif
int main(void)
{
    const atab_static_set *sets[] = {&myset};
    atab_options o = {0};
    o.static_sets = sets;
    o.n_static_sets = 1;
    atab_table *t = atab_table_new(&o);
    int ok = t && atab_intern_cstr(t, "div") == ATAB_ATOM(div) &&
             atab_intern_cstr(t, "my-widget") == MYSET_ATOM(my_widget) &&
             atab_intern_cstr(t, "data-role") == MYSET_ATOM(data_role) &&
             strcmp(atab_version(), "") != 0;
    atab_table_free(t);
    puts(ok ? "consumer: ok" : "consumer: FAILED");
    return !ok;
}
