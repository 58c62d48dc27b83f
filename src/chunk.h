/* SPDX-License-Identifier: MIT */
/*
** chunk.h - the blocks of small dynamic atoms, carved from chunks the
** table owns (chunk.c).
**
** An atom whose block (header, characters, NUL: atab__atom_bytes) rounded
** up to 4 bytes is at most ATAB__CHUNK_MAX_BLOCK bytes is carved from a
** chunk (requested through the table's allocator hooks, charged to its
** memory limit and byte count like any allocation); a larger atom is one
** allocation of its own. A chunk costs the allocator one header where a
** malloc per atom costs one per atom, and its blocks are spaced by 4
** bytes, not by the allocator's size classes.
**
** Carving. Each thread's record keeps a current chunk and carves from it
** with a bump pointer, without a lock (atab__bump); a thread with no
** record carves from the table's own current chunk under chunk_lock
** (retired at every full sweep, so that it comes back once empty). A
** bump's first chunk is ATAB__CHUNK_FIRST bytes, each next one twice the
** last, up to ATAB__CHUNK_BYTES: a table of a few atoms costs a small
** chunk. When the current chunk is full, a block freed back to a chunk
** (below) of the size class wanted is taken before a new chunk is made;
** a thread with a queue takes up to ATAB__CHUNK_TAKE_MORE more of that
** class under the same lock and keeps them with its recycled blocks
** (thread.h), for its next new atoms of the class (not on a table with a
** memory limit: there a block one thread kept could refuse another's).
**
** Freeing. A block comes back to its chunk when an atom is freed and its
** thread keeps no block for it (thread.h: the blocks a queue sweep keeps
** go to its thread's next new atoms of the same size class), onto the
** table's free list of its class (linked through its first word). The
** table keeps its chunks' addresses sorted (the directory), so a freed
** block finds its chunk by a binary search under chunk_lock, which a
** sweep takes once per batch. A chunk counts its blocks not freed, plus
** ATAB__CHUNK_BIAS while it is some bump's current chunk (less the blocks
** carved from it, when the bump retires it), so carving writes nothing
** shared. A chunk whose count reaches 0 is freed by the next purge, which
** takes its blocks off the free lists first: once an eighth of the chunks
** (4 at least) emptied, at every full sweep (atab_gc), and before an
** allocation that failed is tried again: a chunk's, an atom's made
** alone, or the slot array an insert's shard must grow to (thread.h:
** atab__recycled_free; a thread with no record purges alone). Free blocks in chunks that hold
** atoms are reused only by atoms of their size class (the report's
** explicit/atoms/dynamic/free counts them, with the chunks' headers and
** uncarved tails).
**
** Pools. A slot array of 2 to 7 groups (ATAB__POOL_LEAST to
** ATAB__POOL_MAX bytes: table.h's size classes) is one of the arrays of a
** pool: one allocation of a header and as many arrays of that size as
** make it at least ATAB__POOL_MIN bytes, freed when its last array is. A
** shard's array grows through each of those sizes, and glibc's malloc
** keeps up to 7 freed blocks of each size up to 1,032 bytes in a
** per-thread cache, counted as in use: freed one by one, the 64 shards'
** outgrown arrays would leave about 36 KB there (the bundled corpus:
** design.md, "Slot arrays"). A pool is past that
** cache's sizes. Its cost is the room its shards left while others of
** its arrays are still in use. A one-group array is not pooled: a pool of
** 7 would keep most of its room spare once the shards have moved on, for
** a cache that holds 1.2 KB of them. The pools are listed in the table
** (chunk_lock); the report counts each as one block of the table's, its
** unused arrays included.
**
** chunk_lock is the innermost lock: taken under a shard's lock (an insert
** carves, a growth takes an array) and under reg_lock (a flush frees the
** blocks queues kept).
*/
#ifndef ATAB_CHUNK_H
#define ATAB_CHUNK_H

#include "atom.h"

#ifndef ATAB__CHUNK_BYTES
#define ATAB__CHUNK_BYTES 8192    /* the most requested per chunk (-D for measuring) */
#endif
#define ATAB__CHUNK_FIRST 1024    /* a bump's first chunk; each next one twice as
                                     large, up to ATAB__CHUNK_BYTES */
#define ATAB__CHUNK_MAX_BLOCK 256 /* the largest block carved from chunks */
#define ATAB__CHUNK_BIAS (UINT32_C(1) << 30)
#define ATAB__CHUNK_GRAIN 4       /* blocks are spaced by this: an atom's header
                                     is two 32-bit words, and slots and caches
                                     keep only an address's low 2 bits free */
#define ATAB__CHUNK_CLASSES (ATAB__CHUNK_MAX_BLOCK / ATAB__CHUNK_GRAIN)   /* bytes / grain - 1 */

/* A chunk's header; its blocks follow. */
typedef struct atab__chunk {
    uint32_t live;   /* blocks not freed (+ BIAS while current): chunk_lock */
    uint32_t size;   /* bytes requested for it, header included */
} atab__chunk;

#define ATAB__CHUNK_HEADER sizeof(atab__chunk)

/* A current chunk and where its next block starts. */
typedef struct atab__bump {
    char *next, *end;
    atab__chunk *cur;   /* NULL: none */
    uint32_t carved;    /* blocks carved from cur */
    uint32_t next_size; /* of the next chunk; 0: ATAB__CHUNK_FIRST */
} atab__bump;

/* A free block's link to the next block of its list, in its first bytes
** (over the atom's header), copied: blocks are only 4-aligned. */
static inline atab_atom *atab__block_next(const void *blk)
{
    atab_atom *next;
    memcpy(&next, blk, sizeof next);
    return next;
}

static inline void atab__block_link(void *blk, const atab_atom *next)
{
    memcpy(blk, &next, sizeof next);
}

/* The bytes of an atom of len bytes in a chunk: rounded up to the grain. */
static inline size_t atab__block_bytes(size_t len)
{
    return (atab__atom_bytes(len) + ATAB__CHUNK_GRAIN - 1) & ~(size_t)(ATAB__CHUNK_GRAIN - 1);
}

/* The size class of a block of `bytes` (a multiple of the grain). */
static inline size_t atab__class_of_block(size_t bytes)
{
    return bytes / ATAB__CHUNK_GRAIN - 1;
}

/* The size class of a carved atom of len bytes. */
static inline size_t atab__class_of(size_t len)
{
    return atab__class_of_block(atab__block_bytes(len));
}

/* Is an atom of len bytes carved from a chunk? (Its block is at most
** ATAB__CHUNK_MAX_BLOCK bytes exactly when its unrounded bytes are: the
** largest block is a multiple of the grain.) */
static inline int atab__carved(size_t len)
{
    return len <= ATAB__CHUNK_MAX_BLOCK - atab__atom_bytes(0);
}
_Static_assert(ATAB__CHUNK_MAX_BLOCK % ATAB__CHUNK_GRAIN == 0, "the largest block is whole grains");

/* A block of `bytes` (a multiple of the grain, at most ATAB__CHUNK_MAX_BLOCK):
** from b (a record's, used only by its thread) when given, else from the
** table's current chunk under chunk_lock; a new chunk when the current one
** is full. NULL (error set: ATAB_ELIMIT or ATAB_ENOMEM) when a new chunk
** cannot be had. */
ATAB__HIDDEN void *atab__chunk_carve_slow(atab_table *t, atab__bump *b, size_t bytes);

/* atab__chunk_carve_slow for the bump of record r (thread.h), which has no
** room left: when the table's free lists have a block of the size class,
** it also moves up to ATAB__CHUNK_TAKE_MORE others of that class, under
** the same chunk_lock, onto the blocks r's queue keeps for its thread's
** next new atoms (thread.h: recycled blocks), so that a run of new atoms
** the bump cannot serve takes chunk_lock once, not once an atom. None
** when r has no queue, when a flusher holds r, or when the table has a
** memory limit. Each block taken counts in its chunk as carved. Its
** owner's, outside sections. */
#define ATAB__CHUNK_TAKE_MORE 15
struct atab__rec;
ATAB__HIDDEN void *atab__chunk_carve_many(atab_table *t, struct atab__rec *r, size_t bytes);

/* Has bump b room for a block of `bytes`? */
static inline int atab__bump_fits(const atab__bump *b, size_t bytes)
{
    return (size_t)(b->end - b->next) >= bytes;
}

/* A block of `bytes` from b, which has room for it (atab__bump_fits). */
static inline void *atab__bump_take(atab__bump *b, size_t bytes)
{
    void *p = b->next;
    b->next += bytes;
    b->carved++;
    return p;
}

static inline void *atab__chunk_carve(atab_table *t, atab__bump *b, size_t bytes)
{
    if (ATAB__LIKELY(b && atab__bump_fits(b, bytes)))
        return atab__bump_take(b, bytes);
    return atab__chunk_carve_slow(t, b, bytes);
}

#define ATAB__POOL_LEAST 320  /* the smallest array a pool holds: 2 groups */
#define ATAB__POOL_MAX 1024   /* the largest: 7 groups */
#define ATAB__POOL_MIN 1024   /* a pool's arrays take at least this many bytes, so that
                                 with its header it is past glibc's cached sizes */

/* A pool's header; its arrays follow (16-aligned, as the pool). */
typedef struct atab__pool {
    union {
        struct atab__pool *next;   /* the table's pools (chunk_lock) */
        uint64_t word;             /* 8 bytes on 32-bit targets too */
    };
    uint32_t bytes;            /* each array's */
    uint16_t n;                /* arrays it holds */
    uint16_t used;             /* bit i: array i is in use */
} atab__pool;

/* Is a slot array of `bytes` one of a pool's? */
static inline int atab__pooled(size_t bytes)
{
    return bytes >= ATAB__POOL_LEAST && bytes <= ATAB__POOL_MAX;
}

/* A slot array's block of `bytes`: from a pool (atab__pooled), else an
** allocation of its own; NULL (error set) when none can be had. */
ATAB__HIDDEN void *atab__arr_alloc(atab_table *t, size_t bytes);
/* Gives back a block of atab__arr_alloc (a pool's last array frees it). */
ATAB__HIDDEN void atab__arr_free(atab_table *t, void *p, size_t bytes);

/* Frees an atom: its block back to its chunk, or its own allocation's
** bytes from `acct`. */
ATAB__HIDDEN void atab__atom_free(atab_table *t, size_t *acct, atab_atom *a);
/* Frees atoms[0..n) (NULL entries skipped): the carved ones back to their
** chunks under one chunk_lock, the others from `acct`. */
ATAB__HIDDEN void atab__atoms_free(atab_table *t, size_t *acct, atab_atom *const *atoms,
                                   size_t n);
/* Gives the blocks of lists[0..ATAB__CHUNK_CLASSES) (by size class, linked
** through their first word) back, and empties the lists. */
ATAB__HIDDEN void atab__chunk_free_lists(atab_table *t, atab_atom **lists);
/* Frees the chunks left empty, however few (an allocation was refused:
** they count against the memory limit). Non-zero when it freed any. Takes
** chunk_lock only where a chunk was seen emptied since the last purge
** (t->n_empty, read first as a hint). */
ATAB__HIDDEN int atab__chunks_purge(atab_table *t);
/* atab__alloc for a block of the table's that is not an atom's (a folded
** copy of a key, a host cache's arrays): when the allocator or the memory
** limit refuses it, the chunks left empty are freed (atab__chunks_purge)
** and it is tried again, as an atom's allocation is (table.c: new_atom;
** no thread's kept blocks: those go back only under a shard's lock). A
** block had on the second try leaves the last error as it was. */
ATAB__HIDDEN void *atab__alloc_or_purge(atab_table *t, size_t bytes);
/* Retires the table's own current chunk and frees the chunks left empty
** (a full sweep's last step). */
ATAB__HIDDEN void atab__chunks_gc(atab_table *t);
/* Retires b's current chunk (a record that goes): freed when empty. */
ATAB__HIDDEN void atab__chunk_retire(atab_table *t, atab__bump *b);

ATAB__HIDDEN void atab__chunks_init(atab_table *t);
/* Frees every chunk and the directory (the table goes; no thread uses it). */
ATAB__HIDDEN void atab__chunks_fini(atab_table *t);
/* For the reporter: fn(ud, block, bytes, is_chunk) for the directory's
** block and each pool (is_chunk 0), and for each chunk (1), under
** chunk_lock. */
typedef void (*atab__chunk_fn)(void *ud, const void *block, size_t bytes, int is_chunk);
ATAB__HIDDEN void atab__chunks_visit(atab_table *t, atab__chunk_fn fn, void *ud);

#endif /* ATAB_CHUNK_H */
