/* SPDX-License-Identifier: MIT */
/*
** chunk.c - chunks the table owns, which small atoms' blocks are carved
** from: carving, the directory of chunks, giving blocks and chunks back.
** The scheme is described in chunk.h.
*/
#include "table.h"

#define DIR_MIN 16   /* the directory's first room, in chunks */

/* The directory's slot for chunk address p: the index of the last chunk
** at or below p (-1: none). chunk_lock is held. */
static long dir_find(const atab_table *t, uintptr_t p)
{
    long lo = 0, hi = (long)t->n_chunks - 1, at = -1;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        if (t->chunks[mid] <= p)
            at = mid, lo = mid + 1;
        else
            hi = mid - 1;
    }
    return at;
}

/* Room for one more chunk in the directory; -1 (error set) when it cannot
** grow. chunk_lock is held. */
static int dir_room(atab_table *t)
{
    if (t->n_chunks < t->cap_chunks)
        return 0;
    size_t cap = t->cap_chunks ? 2 * (size_t)t->cap_chunks : DIR_MIN;
    uintptr_t *d = atab__alloc(t, cap * sizeof *d);
    if (!d)
        return -1;
    if (t->n_chunks)
        memcpy(d, t->chunks, t->n_chunks * sizeof *d);
    atab__free(t, t->chunks, t->cap_chunks * sizeof *d);
    t->chunks = d;
    t->cap_chunks = (uint32_t)cap;
    return 0;
}

/* A new chunk, in the directory, counted as current (BIAS); NULL (error
** set) when it or room for it cannot be had. The chunk is had first, so
** that a chunk refused leaves no directory grown for it (a failed intern
** leaves the table as it was). chunk_lock is held. */
static atab__chunk *chunk_new(atab_table *t, uint32_t size)
{
    atab__chunk *c = atab__alloc(t, size);
    if (!c)
        return NULL;
    if (((uintptr_t)c & 7) || (uint64_t)(uintptr_t)c >> 48) {
        /* slots and caches pack atoms' addresses: a chunk the allocator
        ** should not have given is as good as none */
        atab__free(t, c, size);
        return atab__fail(ATAB_ENOMEM);
    }
    if (dir_room(t) != 0) {
        atab__free(t, c, size);
        return NULL;
    }
    c->live = ATAB__CHUNK_BIAS;
    c->size = size;
    long at = dir_find(t, (uintptr_t)c) + 1;
    memmove(&t->chunks[at + 1], &t->chunks[at], (t->n_chunks - (size_t)at) * sizeof *t->chunks);
    t->chunks[at] = (uintptr_t)c;
    t->n_chunks++;
    return c;
}

/* The chunk holding block p; chunk_lock is held. */
static atab__chunk *chunk_of(const atab_table *t, const void *p)
{
    return (atab__chunk *)t->chunks[dir_find(t, (uintptr_t)p)];
}

/* Frees the chunks with no block live: first their blocks come off the
** free lists, then the chunks go back to the allocator. chunk_lock is
** held. */
static void purge(atab_table *t)
{
    for (size_t k = 0; k < ATAB__CHUNK_CLASSES; k++) {
        atab_atom *prev = NULL, *next;
        for (atab_atom *a = t->free_blocks[k]; a; a = next) {
            next = atab__block_next(a);
            if (chunk_of(t, a)->live != 0)
                prev = a;
            else if (prev)   /* its chunk goes */
                atab__block_link(prev, next);
            else
                t->free_blocks[k] = next;
        }
    }
    size_t kept = 0;
    for (size_t i = 0; i < t->n_chunks; i++) {
        atab__chunk *c = (atab__chunk *)t->chunks[i];
        if (c->live == 0)
            atab__free(t, c, c->size);
        else
            t->chunks[kept++] = (uintptr_t)c;
    }
    t->n_chunks = (uint32_t)kept;
    __atomic_store_n(&t->n_empty, 0, __ATOMIC_RELAXED);   /* atab__chunks_purge's hint */
    if (!kept) {   /* no chunk left: neither is the directory */
        atab__free(t, t->chunks, t->cap_chunks * sizeof *t->chunks);
        t->chunks = NULL;
        t->cap_chunks = 0;
    }
}

/* Takes n off chunk c's count; counts it emptied when that leaves none.
** chunk_lock is held. */
static void chunk_drop(atab_table *t, atab__chunk *c, uint32_t n)
{
    if ((c->live -= n) == 0)
        __atomic_store_n(&t->n_empty, t->n_empty + 1, __ATOMIC_RELAXED);
}

/* Purges once a batch of chunks emptied: an eighth of them, and at
** least 4 (a purge walks every free block). chunk_lock is held. */
static void purge_due(atab_table *t)
{
    if (t->n_empty >= 4 && t->n_empty >= t->n_chunks / 8)
        purge(t);
}

/* Retires b's chunk; chunk_lock is held. */
static void retire_locked(atab_table *t, atab__bump *b)
{
    if (b->cur)
        chunk_drop(t, b->cur, ATAB__CHUNK_BIAS - b->carved);
    b->cur = NULL;
    b->next = b->end = NULL;
    b->carved = 0;
}

/* b's next block from a new chunk (the caller holds chunk_lock). When none
** can be had, the empty chunks are freed first and it is tried again. */
static void *carve_new(atab_table *t, atab__bump *b, size_t bytes)
{
    uint32_t size = b->next_size ? b->next_size : ATAB__CHUNK_FIRST;
    atab_status before = atab_last_error();
    atab__chunk *c = chunk_new(t, size);
    if (!c && t->n_empty) {
        atab_status err = atab_last_error();
        purge(t);
        atab__set_error((c = chunk_new(t, size)) == NULL ? err : before);   /* had: no error */
    }
    /* the memory limit refuses it: a smaller chunk that holds the block
    ** (down to the first size), so the limit's last room is carved too */
    while (!c && atab_last_error() == ATAB_ELIMIT && size > ATAB__CHUNK_FIRST &&
           ATAB__CHUNK_HEADER + bytes <= size / 2) {
        size /= 2;
        if ((c = chunk_new(t, size)) != NULL)
            atab__set_error(before);
    }
    if (!c)
        return NULL;
    retire_locked(t, b);   /* its tail, under ATAB__CHUNK_MAX_BLOCK bytes, stays unused */
    b->cur = c;
    b->next = (char *)c + ATAB__CHUNK_HEADER + bytes;
    b->end = (char *)c + size;
    b->carved = 1;
    b->next_size = size < ATAB__CHUNK_BYTES ? 2 * size : size;
    return (char *)c + ATAB__CHUNK_HEADER;
}

/* A block of class k freed back to its chunk, or NULL. chunk_lock is held. */
static void *free_take(atab_table *t, size_t k)
{
    atab_atom *a = t->free_blocks[k];
    if (a) {
        t->free_blocks[k] = atab__block_next(a);
        chunk_of(t, a)->live++;
    }
    return a;
}

void *atab__chunk_carve_slow(atab_table *t, atab__bump *b, size_t bytes)
{
    void *p;
    pthread_mutex_lock(&t->chunk_lock);
    if ((p = free_take(t, atab__class_of_block(bytes))) != NULL) {
        /* a freed block before a new chunk */
    } else if (b) {
        p = carve_new(t, b, bytes);
    } else if ((size_t)(t->shared.end - t->shared.next) >= bytes) {
        p = t->shared.next;
        t->shared.next += bytes;
        t->shared.carved++;
    } else {
        p = carve_new(t, &t->shared, bytes);
    }
    pthread_mutex_unlock(&t->chunk_lock);
    return p;
}

/* Moves up to ATAB__CHUNK_TAKE_MORE more blocks of class k from the free
** list onto the kept list of that class in r's queue, when r has one and
** its owner may use it (thread.h: in a section, as atab__recycled_take_in);
** chunk_lock is held, so the blocks go from the one list to the other
** with no step where they are in this thread's hands alone: a fork, which
** takes chunk_lock, never comes in between (thread.c, "fork"). */
static void take_more(atab_table *t, atab__rec *r, size_t k)
{
    if (!t->free_blocks[k] || t->memory_limit || !__atomic_load_n(&r->queue, __ATOMIC_RELAXED))
        return;   /* with a limit, a block one thread kept could refuse another's atom */
    ATAB__PAUSE("recycled:put", r);
    atab__enter_rec(r);
    if (atab__cache_ours(r) && r->queue) {
        atab_atom **kept = atab__queue_kept(r->queue, t->queue_cap), *a;
        for (unsigned i = 0; i < ATAB__CHUNK_TAKE_MORE && (a = free_take(t, k)) != NULL; i++) {
            atab__block_link(a, kept[k]);
            kept[k] = a;
        }
    }
    atab__leave(r);
}

void *atab__chunk_carve_many(atab_table *t, atab__rec *r, size_t bytes)
{
    size_t k = atab__class_of_block(bytes);
    void *p;
    pthread_mutex_lock(&t->chunk_lock);
    if ((p = free_take(t, k)) != NULL) {
        ATAB__PAUSE("chunk:take", t);
        take_more(t, r, k);
    } else {
        p = carve_new(t, &r->bump, bytes);
    }
    pthread_mutex_unlock(&t->chunk_lock);
    return p;
}

/* Gives block p of class k back to its chunk, onto the free list of its
** class; chunk_lock is held. */
static void put_locked(atab_table *t, atab_atom *p, size_t k)
{
    ATAB__PAUSE("chunk:put", p);
    chunk_drop(t, chunk_of(t, p), 1);
    atab__block_link(p, t->free_blocks[k]);   /* the link overwrites the header */
    t->free_blocks[k] = p;
}

/* One pass: a carved atom's header is the free list's link once it is
** back. An atom allocated alone is freed under chunk_lock too (rare: over
** ATAB__CHUNK_MAX_BLOCK bytes). */
void atab__atoms_free(atab_table *t, size_t *acct, atab_atom *const *atoms, size_t n)
{
    pthread_mutex_lock(&t->chunk_lock);
    for (size_t i = 0; i < n; i++) {
        atab_atom *a = atoms[i];
        if (!a)
            continue;
        size_t len = atab_len(a);
        if (atab__carved(len))
            put_locked(t, a, atab__class_of(len));
        else
            atab__free_in(t, acct, a, atab__atom_bytes(len));
    }
    purge_due(t);
    pthread_mutex_unlock(&t->chunk_lock);
}

void atab__atom_free(atab_table *t, size_t *acct, atab_atom *a)
{
    atab__atoms_free(t, acct, &a, 1);
}

void atab__chunk_free_lists(atab_table *t, atab_atom **lists)
{
    pthread_mutex_lock(&t->chunk_lock);
    for (size_t k = 0; k < ATAB__CHUNK_CLASSES; k++) {
        for (atab_atom *a = lists[k], *next; a; a = next) {
            next = atab__block_next(a);
            put_locked(t, a, k);
        }
        lists[k] = NULL;
    }
    purge_due(t);
    pthread_mutex_unlock(&t->chunk_lock);
}

void atab__chunk_retire(atab_table *t, atab__bump *b)
{
    if (!b->cur)
        return;
    pthread_mutex_lock(&t->chunk_lock);
    retire_locked(t, b);
    purge_due(t);
    pthread_mutex_unlock(&t->chunk_lock);
}

int atab__chunks_purge(atab_table *t)
{
    if (!__atomic_load_n(&t->n_empty, __ATOMIC_RELAXED))
        return 0;   /* none emptied (as if read before a drop racing this one): no lock */
    pthread_mutex_lock(&t->chunk_lock);
    uint32_t had = t->n_chunks;
    if (t->n_empty)
        purge(t);
    int freed = t->n_chunks < had;
    pthread_mutex_unlock(&t->chunk_lock);
    return freed;
}

void *atab__alloc_or_purge(atab_table *t, size_t bytes)
{
    atab_status saved = atab_last_error();
    void *p = atab__alloc(t, bytes);
    if (!p && atab__chunks_purge(t) && (p = atab__alloc(t, bytes)) != NULL)
        atab__set_error(saved);
    return p;
}

/* The table's own bump is retired too: threads without a record (debug
** builds, a record that could not be had) carve from it, and its chunk
** should come back once they are done with it, as a record's does when its
** thread exits. */
void atab__chunks_gc(atab_table *t)
{
    pthread_mutex_lock(&t->chunk_lock);
    retire_locked(t, &t->shared);
    if (t->n_empty)
        purge(t);
    pthread_mutex_unlock(&t->chunk_lock);
}

/* ---- pools of small slot arrays ---- */

/* The arrays a pool of arrays of `bytes` holds, and its size. */
static unsigned pool_arrays(size_t bytes)
{
    return (unsigned)((ATAB__POOL_MIN + bytes - 1) / bytes);
}

static size_t pool_size(const atab__pool *p)
{
    return sizeof *p + (size_t)p->n * p->bytes;
}

_Static_assert(sizeof(atab__pool) == 16, "a pool's arrays stay 16-aligned");
_Static_assert((ATAB__POOL_MIN + ATAB__POOL_LEAST - 1) / ATAB__POOL_LEAST <= 16,
               "a pool's arrays fit its bit mask");

void *atab__arr_alloc(atab_table *t, size_t bytes)
{
    if (!atab__pooled(bytes))
        return atab__alloc(t, bytes);
    pthread_mutex_lock(&t->chunk_lock);
    atab__pool *p = t->pools;
    while (p && (p->bytes != bytes || p->used == (1u << p->n) - 1))
        p = p->next;
    if (!p) {
        unsigned n = pool_arrays(bytes);
        if ((p = atab__alloc(t, sizeof *p + n * bytes)) != NULL) {
            p->bytes = (uint32_t)bytes;
            p->n = (uint16_t)n;
            p->used = 0;
            p->next = t->pools;
            t->pools = p;
        }
    }
    void *a = NULL;
    if (p) {
        unsigned i = (unsigned)__builtin_ctz(~(unsigned)p->used);
        p->used |= (uint16_t)(1u << i);
        a = (char *)(p + 1) + (size_t)i * bytes;
    }
    pthread_mutex_unlock(&t->chunk_lock);
    return a;
}

void atab__arr_free(atab_table *t, void *a, size_t bytes)
{
    if (!atab__pooled(bytes)) {
        atab__free(t, a, bytes);
        return;
    }
    pthread_mutex_lock(&t->chunk_lock);
    for (atab__pool **pp = &t->pools, *p; (p = *pp) != NULL; pp = &p->next) {
        char *base = (char *)(p + 1);
        if (p->bytes != bytes || (char *)a < base || (char *)a >= base + (size_t)p->n * bytes)
            continue;
        p->used &= (uint16_t)~(1u << (size_t)((char *)a - base) / bytes);
        if (!p->used) {
            *pp = p->next;
            atab__free(t, p, pool_size(p));
        }
        break;
    }
    pthread_mutex_unlock(&t->chunk_lock);
}

void atab__chunks_init(atab_table *t)
{
    pthread_mutex_init(&t->chunk_lock, NULL);
}

void atab__chunks_fini(atab_table *t)
{
    for (size_t i = 0; i < t->n_chunks; i++)
        atab__free(t, (void *)t->chunks[i], ((atab__chunk *)t->chunks[i])->size);
    atab__free(t, t->chunks, t->cap_chunks * sizeof *t->chunks);
    for (atab__pool *p = t->pools, *next; p; p = next) {   /* none left in use */
        next = p->next;
        atab__free(t, p, pool_size(p));
    }
    t->pools = NULL;
    t->chunks = NULL;
    t->n_chunks = t->cap_chunks = 0;
    memset(&t->shared, 0, sizeof t->shared);
    memset(t->free_blocks, 0, sizeof t->free_blocks);
    pthread_mutex_destroy(&t->chunk_lock);
}

void atab__chunks_visit(atab_table *t, atab__chunk_fn fn, void *ud)
{
    pthread_mutex_lock(&t->chunk_lock);
    if (t->chunks)
        fn(ud, t->chunks, t->cap_chunks * sizeof *t->chunks, 0);
    for (const atab__pool *p = t->pools; p; p = p->next)
        fn(ud, p, pool_size(p), 0);
    for (size_t i = 0; i < t->n_chunks; i++)
        fn(ud, (const void *)t->chunks[i], ((const atab__chunk *)t->chunks[i])->size, 1);
    pthread_mutex_unlock(&t->chunk_lock);
}
