/* SPDX-License-Identifier: MIT */
/*
** host.c - a host program with its own malloc, linked against
** libatomtab.a, for tools/check-embed.sh: whose malloc does it call?
*/
#include <stdio.h>
#include <stdlib.h>

#include <atomtab.h>

int main(void)
{
    char *mine = malloc(64);   /* the host's own allocation */
    if (!mine)
        return 1;
    snprintf(mine, 64, "host-%d", rand() % 10);
    atab_table *t = atab_table_new(NULL);
    const atab_atom *a = t ? atab_intern_cstr(t, mine) : NULL;
    int ok = a && atab_len(a) == 6;
    atab_release(t, a);
    atab_table_free(t);
    free(mine);
    puts(ok ? "host: ok" : "host: failed");
    return !ok;
}
