/* SPDX-License-Identifier: MIT */
/*
** naive.h - "naive", the baseline any host could write in an hour: a
** chained hash table with strdup'ed keys (FNV-1a, doubling at load 1).
** bench/suite.c and bench/peers.c measure it beside atomtab.
** Header-only: each benchmark is one program.
*/
#ifndef ATAB_BENCH_NAIVE_H
#define ATAB_BENCH_NAIVE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* naive: buckets of singly linked nodes, strdup'ed keys, doubling at load 1. */
typedef struct nnode {
    struct nnode *next;
    uint64_t hash;
    size_t len;
    char *key;
} nnode;

typedef struct naive {
    nnode **b;
    size_t mask, n;
} naive;

static inline uint64_t fnv1a(const char *s, size_t len)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * UINT64_C(1099511628211);
    return h;
}

static inline void *nv_create(void)
{
    naive *t = calloc(1, sizeof *t);
    t->mask = 63;
    t->b = calloc(t->mask + 1, sizeof *t->b);
    return t;
}

static inline nnode *nv_find(naive *t, const char *s, size_t len, uint64_t h)
{
    for (nnode *n = t->b[h & t->mask]; n; n = n->next)
        if (n->hash == h && n->len == len && memcmp(n->key, s, len) == 0)
            return n;
    return NULL;
}

static inline void nv_grow(naive *t)
{
    size_t cap = (t->mask + 1) * 2;
    nnode **b = calloc(cap, sizeof *b);
    for (size_t i = 0; i <= t->mask; i++) {
        for (nnode *n = t->b[i], *next; n; n = next) {
            next = n->next;
            n->next = b[n->hash & (cap - 1)];
            b[n->hash & (cap - 1)] = n;
        }
    }
    free(t->b);
    t->b = b;
    t->mask = cap - 1;
}

static inline const void *nv_intern(void *tp, const char *s, size_t len)
{
    naive *t = tp;
    uint64_t h = fnv1a(s, len);
    nnode *n = nv_find(t, s, len, h);
    if (n)
        return n->key;
    if (t->n + 1 > t->mask + 1)
        nv_grow(t);
    n = malloc(sizeof *n);
    n->key = strdup(s);
    n->hash = h;
    n->len = len;
    n->next = t->b[h & t->mask];
    t->b[h & t->mask] = n;
    t->n++;
    return n->key;
}

static inline const void *nv_lookup(void *tp, const char *s, size_t len)
{
    nnode *n = nv_find(tp, s, len, fnv1a(s, len));
    return n ? n->key : NULL;
}

static inline void nv_destroy(void *tp)
{
    naive *t = tp;
    for (size_t i = 0; i <= t->mask; i++) {
        for (nnode *n = t->b[i], *next; n; n = next) {
            next = n->next;
            free(n->key);
            free(n);
        }
    }
    free(t->b);
    free(t);
}

#endif
