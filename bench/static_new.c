/* SPDX-License-Identifier: MIT */
/*
** static_new.c - what static sets cost atab_table_new: callgrind counts
** the instructions of the measured calls only (CALLGRIND_TOGGLE_COLLECT;
** run under valgrind --tool=callgrind --collect-atstart=no, as
** bench/static.sh does). Outside valgrind the toggles do nothing.
**
** usage: static_new none|default|10k|default+10k [ROUNDS] [free]
**   none         ATAB_NO_DEFAULT_STATICS, no host set
**   default      the default set (2,801 atoms)
**   10k          a generated host set of 10,000 atoms, no default set
**   default+10k  both (the sets' list is then allocated)
**   free         measure atab_table_free of the new, empty table too
** Prints the number of atab_table_new calls measured.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

#include "atomtab.h"
#include "bench10k_atoms.h"

int main(int argc, char **argv)
{
    const atab_static_set *sets[] = {&bench10k};
    atab_options o;
    int rounds = argc > 2 ? atoi(argv[2]) : 10, with_free = argc > 3 && !strcmp(argv[3], "free");
    memset(&o, 0, sizeof o);
    if (argc < 2 || rounds < 1) {
        fprintf(stderr, "usage: static_new none|default|10k|default+10k [ROUNDS] [free]\n");
        return 2;
    }
    if (strcmp(argv[1], "none") == 0 || strcmp(argv[1], "10k") == 0)
        o.flags |= ATAB_NO_DEFAULT_STATICS;
    if (strstr(argv[1], "10k")) {
        o.static_sets = sets;
        o.n_static_sets = 1;
    }
    /* warm up: the allocator's and the thread registry's first-use costs */
    atab_table_free(atab_table_new(&o));
    for (int i = 0; i < rounds; i++) {
        CALLGRIND_TOGGLE_COLLECT;
        atab_table *t = atab_table_new(&o);
        if (!with_free)
            CALLGRIND_TOGGLE_COLLECT;
        if (!t)
            return fprintf(stderr, "static_new: %s\n", atab_strerror(atab_last_error())), 1;
        atab_table_free(t);
        if (with_free)
            CALLGRIND_TOGGLE_COLLECT;
    }
    printf("%d\n", rounds);
    return 0;
}
