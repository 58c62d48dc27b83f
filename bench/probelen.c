/* SPDX-License-Identifier: MIT */
/*
** probelen.c - atomprobelen: where keys sit in the slot arrays, as probe
** lengths (groups read by a hit: 1 for group A, 2 for group B, more only
** past B), on the bundled corpus plus 1,000 new strings, and at the highest
** load the table reaches while 200,000 more random keys go in (why
** probes.c's max/median stays low). Reads the table's internals (src/), so
** it lives with the benchmarks, not the tests.
**
** usage: atomprobelen FILE
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atab_int.h"
#include "tokens.h"

/* Groups a hit of the key in slot i of shard sh reads. */
static unsigned groups_read(const atab_table *t, const atab__shard *sh, size_t i)
{
    atab__arr v = atab__arr_of(*sh->arr);
    const atab_atom *a = atab__slot_atom(*atab__slot_ptr(v, i));
    uint64_t h = atab__hash_bytes(t->seed, atab_chars(a), atab_len(a));
    size_t g = i / ATAB__GROUP, ga = atab__h_group(h, v.ngroups), gb = atab__h_group2(h, v.ngroups);
    if (g == ga)
        return 1;
    return g == gb ? 2 : 2 + (unsigned)((g + v.ngroups - gb) % v.ngroups);
}

typedef struct dist {
    size_t n, hist[64];
    double load;
} dist;

static dist measure(const atab_table *t)
{
    dist d;
    size_t cap = 0;
    memset(&d, 0, sizeof d);
    for (unsigned s = 0; s < ATAB__SHARDS; s++) {
        const atab__shard *sh = &t->shards[s];
        atab__arr v = atab__arr_of(*sh->arr);
        if ((*sh->arr & ATAB__ARR_ADDR) == (uintptr_t)atab__no_slots)
            continue;
        cap += atab__arr_cap(v);
        for (size_t i = 0; i < atab__arr_cap(v); i++) {
            if (!atab__slot_full(v, i))
                continue;
            unsigned g = groups_read(t, sh, i);
            d.hist[g < 63 ? g : 63]++;
            d.n++;
        }
    }
    d.load = cap ? (double)d.n / (double)cap : 0;
    return d;
}

static void print(const char *what, const dist *d)
{
    double mean = 0;
    size_t acc = 0, p99 = 0, max = 0;
    for (unsigned g = 0; g < 64; g++) {
        mean += (double)g * (double)d->hist[g];
        if (d->hist[g])
            max = g;
    }
    for (unsigned g = 0; g < 64; g++) {
        acc += d->hist[g];
        if (!p99 && acc * 100 >= d->n * 99)
            p99 = g;
    }
    printf("%-34s keys %7zu  load %.3f  groups read: mean %.3f  p99 %zu  max %zu  "
           "(A %.1f%%, B %.1f%%, past B %zu)\n", what, d->n, d->load, mean / (double)d->n, p99,
           max, 100.0 * (double)d->hist[1] / (double)d->n,
           100.0 * (double)d->hist[2] / (double)d->n, d->n - d->hist[1] - d->hist[2]);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: atomprobelen FILE\n");
        return 2;
    }
    tokens k;
    tokens_load(argv[1], &k, "atomprobelen");
    atab_options o = {.flags = ATAB_FIXED_SEED, .seed = 1};
    atab_table *t = atab_table_new(&o);
    char buf[32];
    if (!t)
        return 1;
    for (size_t j = 0; j < k.n; j++)
        if (!atab_intern(t, k.s[j], k.len[j]))
            return 1;
    for (int j = 0; j < 1000; j++) {
        snprintf(buf, sizeof buf, "probe-%08x", (unsigned)(j * 2654435761u));
        if (!atab_intern(t, buf, strlen(buf)))
            return 1;
    }
    dist d = measure(t), top;
    print("corpus + 1,000 strings", &d);
    top = d;
    for (int j = 0; j < 200000; j++) {
        snprintf(buf, sizeof buf, "r%x-%d", (unsigned)(j * 2246822519u), j);
        if (!atab_intern(t, buf, strlen(buf)))
            return 1;
        if (j % 500 == 0) {
            d = measure(t);
            if (d.load > top.load)
                top = d;
        }
    }
    print("highest load, 200,000 more keys", &top);
    atab_table_free(t);
    return 0;
}
