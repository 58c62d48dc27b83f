/* SPDX-License-Identifier: MIT */
/*
** flood.c - hash flooding. An attacker who knows the table's seed can
** brute-force keys whose seeded XXH3 hash lands in one shard (top 6 bits)
** and one home group A (the top K bits of the key's place, table.h: group 0
** of any array of up to 2^K groups): every such key then competes for one
** group, and only its group B spreads them. This benchmark generates such keys for a fixed, known
** seed and measures, in the same run, the cost per operation (intern all
** keys into an empty table, then look each up) of:
**
**   attack keys, the seed they were made for (ATAB_FIXED_SEED)  - degraded
**   random keys, the same fixed seed                             - baseline
**   attack keys, the default per-table random seed               - defended
**   random keys, the default per-table random seed               - baseline
**
** and the same for many keys that only share the shard. It prints ratios
** against the baseline measured in the same run (never absolute time as a
** result). With --save FILE it writes the keys; with --keys FILE and
** --case NAME it runs one case only, for callgrind (make bench-flood).
**
** Usage: flood [--attack N] [--bits K] [--many M] [--manybits K2]
**              [--save FILE] [--keys FILE --case CASE]
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atab_int.h"   /* atab__hash_bytes: the table's own hash */

#define SEED UINT64_C(0x5eed5eed5eed5eed)   /* the seed the attacker knows */

typedef struct keyset {
    char **k;
    size_t *len;
    size_t n;
} keyset;

static void push(keyset *ks, const char *s, size_t len)
{
    if ((ks->n & (ks->n - 1)) == 0) {   /* grow at powers of two */
        size_t cap = ks->n ? ks->n * 2 : 1;
        ks->k = realloc(ks->k, cap * sizeof *ks->k);
        ks->len = realloc(ks->len, cap * sizeof *ks->len);
        if (!ks->k || !ks->len)
            exit(1);
    }
    ks->k[ks->n] = malloc(len + 1);
    memcpy(ks->k[ks->n], s, len + 1);
    ks->len[ks->n++] = len;
}

/* Adds one to a fixed-width lowercase hex counter in place. */
static void next_hex(char *d, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        if (d[i] == 'f') {
            d[i] = '0';
            continue;
        }
        d[i] = d[i] == '9' ? 'a' : (char)(d[i] + 1);
        return;
    }
}

/* Keys whose hash under SEED has the top 6 bits 0 (shard 0) and whose
** place has its top `bits` bits 0 (group A is group 0 while the shard has
** <= 2^bits groups).
** Keys are "id-" and 12 hex digits. Returns the hashes tried. */
static uint64_t make_attack(keyset *ks, size_t n, unsigned bits)
{
    char buf[] = "id-000000000000";
    size_t len = sizeof buf - 1;
    uint64_t tried = 0;
    while (ks->n < n) {
        next_hex(buf + 3, 12);
        uint64_t h = atab__hash_bytes(SEED, buf, len);
        tried++;
        if ((h >> (64 - ATAB__SHARD_BITS)) == 0 && (!bits || atab__h_place(h) >> (64 - bits) == 0))
            push(ks, buf, len);
    }
    return tried;
}

/* Ordinary keys of the same shape. */
static void make_random(keyset *ks, size_t n)
{
    char buf[48];
    uint64_t x = 0x9e3779b97f4a7c15u;
    while (ks->n < n) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int len = snprintf(buf, sizeof buf, "id-%012llx",
                           (unsigned long long)(x >> 16));
        push(ks, buf, (size_t)len);
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static atab_table *new_table(int fixed)
{
    atab_options o;
    memset(&o, 0, sizeof o);
    o.flags = ATAB_NO_DEFAULT_STATICS | (fixed ? ATAB_FIXED_SEED : 0);
    o.seed = SEED;
    o.sweep_threshold = SIZE_MAX;
    return atab_table_new(&o);
}

/* The measured work: intern every key into a new table, then look every
** key up `reps` times. Kept out of line so callgrind can collect it alone
** (--toggle-collect=measure). Returns nanoseconds per operation. */
__attribute__((noinline)) static double measure(const keyset *ks, int fixed, int reps)
{
    atab_table *t = new_table(fixed);
    double t0 = now();
    for (size_t i = 0; i < ks->n; i++)
        if (!atab_intern(t, ks->k[i], ks->len[i]))
            exit(2);
    for (int r = 0; r < reps; r++)
        for (size_t i = 0; i < ks->n; i++)
            if (!atab_lookup(t, ks->k[i], ks->len[i]))
                exit(3);
    double dt = now() - t0;
    atab_table_free(t);
    return dt * 1e9 / ((double)ks->n * (1 + reps));
}

/* Cost per op of the four cases, each the best of three rounds; the cases
** alternate within a round, so drift on a shared machine hits all alike. */
static void report(const char *what, const keyset *atk, const keyset *rnd)
{
    double b[4] = {1e30, 1e30, 1e30, 1e30};
    for (int round = 0; round < 3; round++) {
        for (int c = 0; c < 4; c++) {
            double v = measure(c & 1 ? rnd : atk, c < 2, 3);
            if (v < b[c])
                b[c] = v;
        }
    }
    printf("%s (%zu keys each; cost per op = intern + 3 lookups, best of 3):\n", what,
           atk->n);
    printf("  fixed seed known to the attacker: attack / random keys = %8.2fx\n",
           b[0] / b[1]);
    printf("  default random seed:              attack / random keys = %8.2fx\n",
           b[2] / b[3]);
    printf("  (random keys: default seed / fixed seed = %.2fx; same run)\n", b[3] / b[1]);
}

static void save(const char *path, const keyset *a, const keyset *b)
{
    FILE *f = fopen(path, "w");
    if (!f)
        exit(4);
    fprintf(f, "%zu %zu\n", a->n, b->n);
    for (size_t i = 0; i < a->n; i++)
        fprintf(f, "%s\n", a->k[i]);
    for (size_t i = 0; i < b->n; i++)
        fprintf(f, "%s\n", b->k[i]);
    fclose(f);
}

static void load(const char *path, keyset *a, keyset *b)
{
    FILE *f = fopen(path, "r");
    size_t na, nb;
    char buf[64];
    if (!f || fscanf(f, "%zu %zu\n", &na, &nb) != 2)
        exit(5);
    for (size_t i = 0; i < na + nb && fgets(buf, sizeof buf, f); i++) {
        size_t len = strcspn(buf, "\n");
        buf[len] = '\0';
        push(i < na ? a : b, buf, len);
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    size_t n_attack = 2000, n_many = 1000000;
    unsigned bits = 12, many_bits = 0;
    const char *save_to = NULL, *keys = NULL, *one = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--attack")) n_attack = strtoul(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--bits")) bits = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--many")) n_many = strtoul(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--manybits")) many_bits = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--save")) save_to = argv[i + 1];
        else if (!strcmp(argv[i], "--keys")) keys = argv[i + 1];
        else if (!strcmp(argv[i], "--case")) one = argv[i + 1];
        else return fprintf(stderr, "flood: unknown option %s\n", argv[i]), 2;
    }
    keyset atk = {0}, rnd = {0};
    if (keys) {   /* one case, for callgrind: attack|random x fixed|default */
        load(keys, &atk, &rnd);
        const keyset *ks = strstr(one, "attack") ? &atk : &rnd;
        measure(ks, strstr(one, "fixed") != NULL, 3);
        printf("flood: case %s, %zu keys, %zu operations\n", one, ks->n, ks->n * 4);
        return 0;
    }
    double t0 = now();
    uint64_t tried = make_attack(&atk, n_attack, bits);
    printf("generated %zu keys colliding in shard and the top %u bits of the place for "
           "seed 0x%llx: %llu hashes tried, %.1f s\n", atk.n, bits,
           (unsigned long long)SEED, (unsigned long long)tried, now() - t0);
    make_random(&rnd, atk.n);
    if (save_to)
        save(save_to, &atk, &rnd);
    report("same shard + same home slot", &atk, &rnd);
    if (n_many) {
        keyset many = {0}, many_rnd = {0};
        t0 = now();
        tried = make_attack(&many, n_many, many_bits);
        printf("generated %zu keys colliding in shard%s (top %u bits of the place): %llu hashes "
               "tried, %.1f s\n", many.n, many_bits ? " and home bits" : " only",
               many_bits, (unsigned long long)tried, now() - t0);
        make_random(&many_rnd, many.n);
        report("many keys in one shard", &many, &many_rnd);
    }
    return 0;
}
