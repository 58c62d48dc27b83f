/* SPDX-License-Identifier: MIT */
/*
** atomtab.h - interned atom/string table.
** One shared, immutable copy per distinct string, compared by pointer.
** This header is the manual: every public function is documented here.
*/
#ifndef ATOMTAB_H
#define ATOMTAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version, checked against the VERSION file by both builds. */
#define ATAB_VERSION_MAJOR 0
#define ATAB_VERSION_MINOR 1
#define ATAB_VERSION_PATCH 0

#if defined(__GNUC__)
#define ATAB_API __attribute__((visibility("default")))
#else
#define ATAB_API
#endif

/* ------------------------------------------------------------------ */
/* Atoms                                                               */
/* ------------------------------------------------------------------ */

/**
 * An atom. Compare atoms by pointer: equal bytes give the same pointer for
 * as long as the atom lives (on one table).
 *
 * Layout (8 bytes on every platform, documented so the accessors below can
 * be inline; do not touch the fields):
 *
 *   offset 0  uint32  len_flags   length << 2 | ATAB__ASCII | ATAB__STATIC
 *   offset 4  uint32  refcnt      reference count (atomic; 0 for static atoms)
 *   offset 8  char[]  chars       `length` bytes, then a NUL
 *
 * A dynamic atom is one block of 8 + length + 1 bytes: carved from a chunk
 * the table owns, rounded up to 4 bytes, when that is at most 256 bytes;
 * else an allocation of its own. The hash used by the table lives in the
 * table's slots, not in the atom.
 */
typedef struct atab_atom {
    uint32_t atab__len_flags;
    uint32_t atab__refcnt;
} atab_atom;

#define ATAB__STATIC 1u    /* lives in read-only data; never counted or freed */
#define ATAB__ASCII 2u     /* every byte < 0x80 */
#define ATAB__LEN_SHIFT 2

/** Longest atom, in bytes (UTF-8): 2^30 - 1. */
#define ATAB_MAX_LEN ((size_t)0x3fffffff)

/** Length in bytes, excluding the trailing NUL. */
static inline size_t atab_len(const atab_atom *a)
{
    return a->atab__len_flags >> ATAB__LEN_SHIFT;
}

/** The characters: NUL-terminated, at a stable address for the atom's life. */
static inline const char *atab_chars(const atab_atom *a)
{
    return (const char *)(a + 1);
}

/**
 * A 32-bit hash of the atom, stable for the atom's life, for hosts that key
 * their own maps by atom. It mixes the atom's address (atoms are unique by
 * address), so it costs no bytes in the atom and no hashing of the chars.
 * It is not the same across tables or runs.
 */
static inline uint32_t atab_hash(const atab_atom *a)
{
    uint64_t x = (uint64_t)(uintptr_t)a;
    x ^= x >> 29;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    return (uint32_t)(x >> 32);
}

/**
 * A 64-bit hash of the atom's bytes under `seed`, for hosts whose maps must
 * iterate in the same order from run to run (atab_hash does not: it mixes
 * the address). Nothing is stored in the atom: the bytes are hashed on each
 * call (inline-fast up to 32 bytes, XXH3 beyond). Equal bytes give equal
 * hashes on every table, static or dynamic atom alike, in every run and
 * process of this library version on machines of the same byte order; it
 * may change between library versions. Not a cryptographic hash. 0 for
 * NULL. Thread-safe.
 */
ATAB_API uint64_t atab_hash_content(const atab_atom *a, uint64_t seed);

/**
 * The hash atab_hash_content gives an atom of these `len` bytes, without
 * interning them (to find an atom in a host map before interning). NULL s
 * hashes as no bytes. Thread-safe.
 */
ATAB_API uint64_t atab_hash_bytes(uint64_t seed, const char *s, size_t len);

/** Non-zero for a static atom (from a generated set in read-only data). */
static inline int atab_is_static(const atab_atom *a)
{
    return (a->atab__len_flags & ATAB__STATIC) != 0;
}

/** Non-zero when every byte of the atom is below 0x80. */
static inline int atab_is_ascii(const atab_atom *a)
{
    return (a->atab__len_flags & ATAB__ASCII) != 0;
}

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/** Status codes: 0 for success, negative for an error. */
typedef enum atab_status {
    ATAB_OK = 0,
    ATAB_EINVAL = -1,   /**< NULL table or string, bad option, not an atom */
    ATAB_ETOOLONG = -2, /**< length beyond ATAB_MAX_LEN (or SIZE_MAX) */
    ATAB_EUTF16 = -3,   /**< unpaired surrogate in UTF-16 input */
    ATAB_ENOMEM = -4,   /**< the allocator failed */
    ATAB_ELIMIT = -5,   /**< the table's memory limit would be exceeded */
    ATAB_EREFS = -6,    /**< reference count misuse (double release) */
    ATAB_EABI = -7      /**< a static set generated for another ATAB_STATIC_ABI */
} atab_status;

/**
 * The error of the last failing call on this thread (like errno: set by a
 * failing call, left alone by a successful one). Each failing call sets it
 * before it returns NULL or an error status. Thread-safe (per thread).
 */
ATAB_API atab_status atab_last_error(void);

/** A static English sentence for a status code; never NULL. Thread-safe. */
ATAB_API const char *atab_strerror(int code);

/** The library's version, "MAJOR.MINOR.PATCH": the version of the library
 *  running, where ATAB_VERSION_* are those of the header compiled against.
 *  Thread-safe. */
ATAB_API const char *atab_version(void);

/* ------------------------------------------------------------------ */
/* Tables                                                              */
/* ------------------------------------------------------------------ */

typedef struct atab_table atab_table;

/**
 * Allocator hooks, in the spirit of lua_Alloc. All memory the table uses
 * (atoms, slot arrays, the table object) goes through them.
 * @param alloc        returns at least `size` bytes aligned to 16, or NULL.
 * @param free         frees `p`, which was allocated with `size` bytes.
 * @param usable_size  optional: the bytes really reserved for `p` (for the
 *                     memory reporter's slop); NULL when unknown. A host's
 *                     hooks report no allocator overhead (chunk headers),
 *                     with or without it: see "Memory reporting".
 */
typedef struct atab_allocator {
    void *(*alloc)(void *ud, size_t size);
    void (*free)(void *ud, void *p, size_t size);
    size_t (*usable_size)(void *ud, const void *p, size_t size);
    void *ud;
} atab_allocator;

/** The default allocator: the C library's malloc/free/malloc_usable_size
 *  (whatever malloc the process runs on), or jemalloc's mallocx/sdallocx/
 *  sallocx when the library was built with ALLOCATOR=jemalloc (atomtab.pc's
 *  `allocator` variable says which). Thread-safe. */
ATAB_API const atab_allocator *atab_default_allocator(void);

typedef struct atab_static_set atab_static_set;

/** Flags for atab_options.flags. */
#define ATAB_FIXED_SEED 1u          /* use options.seed (tests, benchmarks) */
#define ATAB_NO_DEFAULT_STATICS 2u  /* do not register the built-in set */
/** Checked references: threads' caches keep no spare references, so every
 *  reference is on its atom's count and a release of a reference nobody
 *  holds is always refused with ATAB_EREFS (atab_release). Hits and
 *  releases then write the atom's count (one atomic operation each), which
 *  costs where many threads use the same atoms. For finding a host's
 *  double releases. */
#define ATAB_CHECKED_REFS 4u

/**
 * Options for atab_table_new. Zero-initialise, then set what you need;
 * every zero field means "the default".
 */
typedef struct atab_options {
    size_t initial_capacity; /**< atoms expected (default: small) */
    size_t sweep_threshold;  /**< unused atoms a thread gathers before
                                  it sweeps them (at most 2048 at a time),
                                  and unused atoms no thread gathered
                                  that trigger a full sweep (default
                                  10000; SIZE_MAX: only atab_gc sweeps) */
    size_t memory_limit;     /**< bytes the table requests from its allocator
                                  (the table, its arrays and caches, the
                                  chunks small atoms are carved from, 1 KB
                                  to 8 KB each, and larger atoms); 0: no
                                  limit. Each thread that has used the
                                  table keeps its record (its cache) and
                                  its current chunk until it exits or the
                                  table is freed: atab_gc does not take
                                  them back */
    uint64_t seed;           /**< hash seed, with ATAB_FIXED_SEED only;
                                  else random per table (getrandom) */
    unsigned flags;          /**< ATAB_FIXED_SEED, ATAB_NO_DEFAULT_STATICS,
                                  ATAB_CHECKED_REFS */
    const atab_allocator *allocator;         /**< NULL: default */
    const atab_static_set *const *static_sets; /**< host sets, may be NULL */
    size_t n_static_sets;
} atab_options;

/**
 * Creates a table.
 * @param opts  NULL for defaults; copied, need not outlive the call.
 * @return the table, or NULL with atab_last_error() set to ATAB_EINVAL
 *         (bad option), ATAB_EABI (a static set from another generator
 *         version), ATAB_ENOMEM, or ATAB_ELIMIT (a memory_limit too small
 *         for the table object, or for the list of its static sets).
 * Thread-safe (tables share nothing).
 */
ATAB_API atab_table *atab_table_new(const atab_options *opts);

/**
 * Frees the table and every dynamic atom in it. Accepts NULL. Atoms held
 * through external handles (atab_external_acquire) stay valid: the table
 * then defers its own free until the last handle is released.
 * Not thread-safe: no other call on `t` may run or follow, except
 * atab_external_release of outstanding handles, from any thread.
 */
ATAB_API void atab_table_free(atab_table *t);

/*
 * Threads. Every call but atab_table_free may run on any thread at once.
 * A table that one thread fills at a time, as most hosts' tables are (a
 * parser's, a compiler's, a script engine's main thread), is faster for
 * it: the first thread to take one of the table's internal locks (its
 * first insert, as a rule) inserts without them from then on, until
 * another thread takes one. Another thread's insert, its release of an
 * atom's last reference (whose sweep takes them), atab_count,
 * atab_get_stats, atab_foreach or a report then takes that over (after
 * one wait for an insert under way), if that thread has used the table
 * before (and not eight other tables since), so a table filled on one
 * thread and then used on another keeps it; else, and after four such
 * moves in a table's life, it ends it, as a fork from another thread
 * does. Other threads' hits and lookups do not (but for the first lookup
 * of a static atom in its part of the table), nor releases that leave an
 * atom referenced. When the thread that has it exits, or once it has
 * ended all threads that used the table but one have exited, the next
 * thread to take a lock has it; so has a forked child's thread.
 */

/*
 * fork(). A multithreaded host may fork while its threads use tables.
 * Around fork() the library takes every live table's locks (pthread_atfork
 * handlers, registered by the first atab_table_new), so a fork waits for a
 * sweep (a full one, or a thread's sweep of the atoms it left unused), an
 * insert (and the free of the slot array its growth replaced) or a
 * thread's exit in progress, or another thread's insert made without the
 * locks (above, "Threads"), to end; lock-free hits never hold it up. Not
 * waited for: a new short key's insert between its atom's block and the
 * table's lock, whose chunk (8 KB at most) the child keeps until
 * atab_table_free; and a call's scratch memory another thread holds at
 * that moment (atab_intern_lower's copy of a key over 256 bytes,
 * atab_foreach's list of atoms), which the child never frees and
 * atab_get_stats keeps counting. The child, which has only the forking
 * thread, may use every table: intern, lookup, release, atab_gc,
 * atab_get_stats (exact, but for such scratch memory's bytes), reports and
 * atab_table_free. The references that other threads' caches
 * held in reserve go back to the counts; atoms those threads held stay
 * referenced (their holders are gone) and are never freed in the child.
 * Not covered: host caches (atab_host_cache_*) and the allocator. A host
 * cache another thread was using at the fork may be half changed, its lock
 * held: the child must not use it, nor free its table (atab_table_free
 * frees the caches left on it). A host allocator must be fork-safe itself
 * (the C library's malloc is), its pthread_atfork handlers, if any,
 * registered before the first atab_table_new: a fork waits for sweeps and
 * growths that may call it. Tested in test/test_fork.c.
 */

/**
 * Interns exactly `len` bytes at `s` (any bytes, embedded NUL included).
 * Only those bytes decide the atom. On x86 a key of 1 to 8 bytes may be
 * read by one load that starts up to 7 bytes before `s`, only where those
 * bytes lie on the key's own 4 KB page (they are read, never used); not in
 * sanitizer builds, nor under Valgrind's memcheck, helgrind or DRD, which
 * would report them. The same holds for atab_lookup.
 * @return the atom with one reference owned by the caller (none for a static
 *         atom), or NULL with atab_last_error() set: ATAB_EINVAL (NULL t, or
 *         NULL s with len > 0), ATAB_ETOOLONG, ATAB_ENOMEM, ATAB_ELIMIT.
 *         On error the table's atoms are as they were. Memory it had for
 *         new atoms may stay: the chunk (1 KB to 8 KB) this thread carves
 *         small atoms from, and the chunks' directory's room for it, when
 *         a later block (the slot array's growth) was the one refused; it
 *         counts in atab_stats.bytes, the next new atoms take their blocks
 *         from it, and failing again keeps nothing more.
 * Thread-safe.
 */
ATAB_API const atab_atom *atab_intern(atab_table *t, const char *s, size_t len);

/** atab_intern(t, s, strlen(s)); NULL s is ATAB_EINVAL. Thread-safe. */
ATAB_API const atab_atom *atab_intern_cstr(atab_table *t, const char *s);

/**
 * Interns UTF-16 text (as host runtimes hold it), stored as UTF-8: the same
 * text through either entry point gives the same atom. A hit does not
 * allocate. Unpaired surrogates fail with ATAB_EUTF16. `len` counts
 * 16-bit units. Other errors as atab_intern. Thread-safe.
 */
ATAB_API const atab_atom *atab_intern_utf16(atab_table *t, const uint16_t *s,
                                            size_t len);

/**
 * Like atab_intern, but never inserts: NULL when absent, with
 * atab_last_error() set to ATAB_OK (absent is not an error: a stale error
 * is cleared), or set on bad input. A found dynamic atom comes with one
 * reference for the caller. Thread-safe.
 */
ATAB_API const atab_atom *atab_lookup(atab_table *t, const char *s, size_t len);

/** UTF-16 twin of atab_lookup. Thread-safe. */
ATAB_API const atab_atom *atab_lookup_utf16(atab_table *t, const uint16_t *s,
                                            size_t len);

/**
 * Interns `len` bytes at `s` with ASCII letters folded to lowercase
 * ('A'..'Z' to 'a'..'z'; every other byte, non-ASCII included, as it is):
 * the atom of the folded bytes, as atab_intern would give it. Input that
 * has no uppercase ASCII byte is interned in place, never copied (a hit
 * then costs what atab_intern's does, plus one pass over the bytes);
 * otherwise the bytes are folded into a buffer on the stack, or, past 256
 * bytes, into a block from the table's allocator, freed before the call
 * returns.
 * @return as atab_intern: the atom with one reference for the caller, or
 *         NULL with atab_last_error() set: ATAB_EINVAL (NULL t, or NULL s
 *         with len > 0), ATAB_ETOOLONG, ATAB_ENOMEM, ATAB_ELIMIT. A key over
 *         256 bytes with an uppercase byte needs that block even when its
 *         atom exists, so it alone may fail with ATAB_ENOMEM or ATAB_ELIMIT
 *         on a hit. On error the table is as atab_intern leaves it.
 * Thread-safe.
 */
ATAB_API const atab_atom *atab_intern_lower(atab_table *t, const char *s, size_t len);

/**
 * UTF-16 twin of atab_intern_lower: units 'A'..'Z' are folded, every other
 * unit is kept; no copy when none is uppercase; past 128 units with one,
 * the folded copy comes from the table's allocator (as above). Errors as
 * atab_intern_utf16, and ATAB_ENOMEM or ATAB_ELIMIT for that copy.
 * Thread-safe.
 */
ATAB_API const atab_atom *atab_intern_lower_utf16(atab_table *t, const uint16_t *s,
                                                  size_t len);

/**
 * Adds a reference; the caller must already hold one. No-op for static
 * atoms. A count that would overflow saturates: the atom is then never
 * freed (a leak, never a use-after-free). Returns `a`. Thread-safe.
 */
ATAB_API const atab_atom *atab_ref(const atab_atom *a);

/**
 * Drops a reference. An atom with no holder left stays in the table,
 * unused, until a sweep; interning it again before then revives it. The
 * thread that leaves an atom unused keeps it on a small queue; when the
 * queue holds the sweep threshold's worth (2048 at most), that thread
 * sweeps it after the release: each atom still unused is unlinked under
 * its shard's lock and freed after a grace period, so the cost follows the
 * garbage, not the table, and no other thread waits for it. A release
 * usually writes nothing shared:
 * the reference stays in this thread's small cache as a spare for its next
 * hit of the same atom (spares count in the atom's count until a sweep, a
 * report, or the thread's exit gives them back).
 * No-op for static atoms. @return ATAB_OK, ATAB_EINVAL (NULL, or another
 * table's atom: below), or ATAB_EREFS
 * for a release of a reference nobody holds (a double release) that the
 * count shows: nothing changes then, and atab_stats.misuse counts it. The
 * count shows it when no other thread keeps spare references of the atom,
 * and for an atom a sweep has taken and not yet freed.
 * When one does, the count cannot tell its spares from a held reference:
 * the release returns ATAB_OK and takes that thread's spares off the
 * count. The atom is then kept (a queue sweep never frees an atom that a
 * thread's cache has kept spares of; a full sweep takes the spares back
 * first) until that thread's next intern or lookup of it, or a full sweep
 * (atab_gc, or the sweep threshold), finds the count short of those
 * spares and counts the misuse in atab_stats.misuse; it is never freed
 * under that thread. Not caught: that thread taking its spare at the same
 * moment as the double release (on another core), or another thread
 * interning the atom anew before either. Tables made with
 * ATAB_CHECKED_REFS keep no spares and refuse every such release. A double
 * release of an atom that another holder still holds cannot be told from
 * that holder's own release, as with any reference count. Another
 * table's atom released to `t` is refused (ATAB_EINVAL, counted in
 * atab_stats.misuse, nothing touched) where its count shows other holders
 * (its release would keep a spare here, or in a table made with
 * ATAB_CHECKED_REFS drop it from the count); where the release brings its
 * count to 0 (the count cannot
 * tell), `t`'s sweep finds it in none of its slots, takes it off `t`'s
 * queue and counts the misuse, and its own table frees it when it
 * sweeps: never `t`'s to hand out or free. Debug builds (-DATAB_DEBUG)
 * refuse every pointer that is not an atom of `t` (ATAB_EINVAL, counted;
 * nothing is touched), and count every reference on the atom, as
 * ATAB_CHECKED_REFS does.
 * Thread-safe.
 */
ATAB_API int atab_release(atab_table *t, const atab_atom *a);

/**
 * Releases one reference on each of `atoms[0..n-1]`, as atab_release does
 * each: an array may hold an atom several times (one reference released
 * per entry), static atoms, and NULL entries, which are skipped (the slots
 * of interns that failed). A refused release (ATAB_EREFS, or ATAB_EINVAL
 * for another table's atom, or in debug builds for any pointer that is not
 * an atom of `t`) changes nothing and the others still go
 * ahead. @return ATAB_OK; ATAB_EINVAL for NULL t, or NULL atoms with n > 0
 * (nothing released); else the first error among the releases, which
 * atab_last_error() then also says. Thread-safe.
 */
ATAB_API int atab_release_all(atab_table *t, const atab_atom *const *atoms, size_t n);

/**
 * Sweeps: gives every thread's spare references back to the counts, takes
 * every atom off the threads' queues (and frees the queues), then frees
 * every dynamic atom whose count is zero, and returns how many it freed
 * (atoms the threads swept from their queues earlier are not counted). Lookups and releases on other threads never wait for it: it takes
 * one shard's lock at a time (only inserts into that shard wait, for one
 * pass over it), an atom is unlinked under that lock and freed only once
 * no thread can still be reading it, and a hit racing the sweep either
 * revives the atom first or finds it gone. Thread-safe. Returns 0 for NULL.
 */
ATAB_API size_t atab_gc(atab_table *t);

/** Counts, exact at the moment of the call. */
typedef struct atab_stats {
    size_t atoms;        /**< live dynamic atoms, unused ones included */
    size_t unused;       /**< dynamic atoms with count 0, awaiting a sweep */
    size_t statics_seen; /**< static atoms cached in the table's slots */
    size_t capacity;     /**< slots over all shards */
    size_t bytes;        /**< requested bytes in use, as memory_limit counts
                              them: the table object, its slot arrays, the
                              chunks and the atoms allocated alone, the
                              threads' records and queues, host caches */
    size_t misuse;       /**< releases refused with ATAB_EREFS (a reference
                              nobody held; nothing was changed by them),
                              and over-releases found later, whose atoms
                              were kept (atab_release) */
} atab_stats;

/** Fills *out. @return ATAB_OK or ATAB_EINVAL for NULL arguments.
 *  Thread-safe: it gives the threads' spare references back to the counts
 *  (no thread waits for that), then locks one shard at a time. */
ATAB_API int atab_get_stats(atab_table *t, atab_stats *out);

/** Live dynamic atoms (unused included); 0 for NULL. Thread-safe (one
 *  shard locked at a time). */
ATAB_API size_t atab_count(atab_table *t);

/** Called by atab_foreach for each atom; non-zero stops the walk. */
typedef int (*atab_foreach_fn)(void *ud, const atab_atom *a, uint32_t count);

/**
 * Calls `fn` once for every live dynamic atom of `t` (unused ones, at count
 * 0, included; static atoms never), with its reference count: exact, as
 * atab_get_stats makes it (every thread's spare references given back
 * first), at the moment its shard was read; UINT32_MAX for a saturated
 * count. The walk goes one shard at a time: under that shard's lock it
 * takes one reference on each of the shard's atoms, then calls `fn` with no
 * lock held and drops those references (the count passed is from before
 * it). So `fn` may call any function of the table, intern and release
 * included (and atab_ref the atom to keep it past the call); other threads
 * go on meanwhile, waiting at most for one shard's collection. An atom
 * that lives through the whole walk is visited exactly once; one interned
 * or freed during the walk may or may not be. No order is promised.
 * A shard of more than 128 atoms is collected into a block from the
 * table's allocator.
 * @return ATAB_OK; ATAB_EINVAL for NULL t or fn; ATAB_ENOMEM or ATAB_ELIMIT
 *         when a shard's block cannot be had (atab_last_error() says so;
 *         the shards before it were visited, none after); else the first
 *         non-zero value `fn` returned (atab_last_error() left alone).
 * Thread-safe.
 */
ATAB_API int atab_foreach(atab_table *t, atab_foreach_fn fn, void *ud);

/* ------------------------------------------------------------------ */
/* Memory reporting                                                    */
/* ------------------------------------------------------------------ */

/*
 * The table reports what it holds as entries in the shape of Firefox's
 * memory reporters (nsIMemoryReporter), so a host can merge them into its
 * own report. Entries (paths are '/'-separated, as in about:memory):
 *
 *   explicit/atoms/table                HEAP     BYTES  the table object, its
 *                                                       slot arrays (small
 *                                                       ones in pools, counted
 *                                                       whole), the threads'
 *                                                       records (their caches
 *                                                       of spare references)
 *                                                       and queues, and the
 *                                                       host caches, at the
 *                                                       allocator's usable size
 *   explicit/atoms/dynamic/atom-objects HEAP     BYTES  requested bytes of the
 *                                                       dynamic atoms (8-byte
 *                                                       header + chars + NUL)
 *   explicit/atoms/dynamic/slop         HEAP     BYTES  usable minus requested:
 *                                                       atoms of up to 256 bytes
 *                                                       are carved from chunks
 *                                                       the table owns, each
 *                                                       rounded up to 4 bytes;
 *                                                       larger atoms and the
 *                                                       chunks are allocations,
 *                                                       whose usable size the
 *                                                       allocator tells (when it
 *                                                       cannot, only the carved
 *                                                       blocks' rounding, and the
 *                                                       entry is left out when
 *                                                       that is 0)
 *   explicit/atoms/dynamic/recycled     HEAP     BYTES  carved blocks of atoms a
 *                                                       thread's sweep freed, kept
 *                                                       for its next new atoms of
 *                                                       their size class (until
 *                                                       its next sweep or
 *                                                       atab_gc); left out when
 *                                                       there are none
 *   explicit/atoms/dynamic/free         HEAP     BYTES  the bytes of the chunks
 *                                                       that hold no atom: each
 *                                                       chunk's 8-byte header,
 *                                                       blocks freed back to a
 *                                                       chunk that holds others,
 *                                                       uncarved tails; left out
 *                                                       when there are no chunks
 *   explicit/heap-overhead/atoms        HEAP     BYTES  the C library malloc's
 *                                                       chunk headers for all the
 *                                                       blocks above (glibc: one
 *                                                       size_t per block, 16 bytes
 *                                                       for a block it mmaps);
 *                                                       only with the default
 *                                                       allocator on glibc's malloc
 *   atoms-static-data                   NONHEAP  BYTES  static atoms in read-only
 *                                                       data (part of the binary)
 *   atoms-dynamic                       OTHER    COUNT  live dynamic atoms
 *   atoms-dynamic-unused                OTHER    COUNT  of those, unused ones
 *                                                       awaiting a sweep
 *   atoms-static                        OTHER    COUNT  static atoms in the sets
 *   atoms-external-handles              OTHER    COUNT  outstanding external
 *                                                       handles
 *
 * When the allocator cannot tell usable sizes (no usable_size hook, or a
 * hook that answers less than was requested, or more than twice it and
 * 64 KB), its slop is unknown: the slop
 * entry is only the carved blocks' rounding (left out when 0) and
 * explicit/atoms/table is the requested size;
 * atab_report_has_usable_size() then returns 0.
 *
 * The allocator's own bytes per block: with the default allocator on
 * glibc's malloc, explicit/heap-overhead/atoms is each block's chunk
 * header, derived from its malloc_usable_size, so that the explicit total
 * is what glibc's mallinfo2 counts in use for the table (uordblks +
 * hblkhd), to the byte. It is KIND_HEAP because glibc counts it in its
 * in-use bytes, the "heap-allocated" a glibc host reports. With a prefix
 * it is explicit/heap-overhead/PREFIX/atoms. It is left out where the
 * table cannot know it: a host's allocator hooks (with or without a
 * usable_size hook), a malloc in glibc's place (ASan, valgrind, an
 * LD_PRELOADed one: usable sizes not of glibc's shape), and the jemalloc
 * build (jemalloc keeps no header per block; stats.allocated equals the
 * explicit total).
 */

/** Entry kinds (Firefox's nsIMemoryReporter::KIND_*). */
#define ATAB_KIND_NONHEAP 0  /**< bytes outside the heap (read-only data) */
#define ATAB_KIND_HEAP 1     /**< bytes from the allocator */
#define ATAB_KIND_OTHER 2    /**< everything else (counts) */

/** Entry units (Firefox's nsIMemoryReporter::UNITS_*). */
#define ATAB_UNITS_BYTES 0
#define ATAB_UNITS_COUNT 1

/**
 * Receives one report entry. The strings are valid during the call only.
 * @return 0 to go on; any other value stops the report, and atab_report
 *         returns that value.
 */
typedef int (*atab_report_fn)(void *ud, const char *path, int kind, int units,
                              int64_t amount, const char *description);

/**
 * Measures the table and calls `fn` once per entry (the list above), in a
 * fixed order. The table is measured one shard at a time under that
 * shard's lock only, so other threads wait at most for one shard's pass
 * (about 1/64 of the table), never for the whole table; each shard is
 * exact at the moment it is read, the total is not one instant. `fn` runs
 * after the measuring, with no lock held: it may call into the table.
 * Allocates nothing.
 * @return ATAB_OK, ATAB_EINVAL (NULL t or fn), or the first non-zero value
 *         `fn` returned.
 * Thread-safe.
 */
ATAB_API int atab_report(atab_table *t, atab_report_fn fn, void *ud);

/**
 * Non-zero when the table's allocator tells usable sizes, so the report
 * includes slop (about:memory's "hasMozMallocUsableSize"). Checked on
 * every block during atab_report; this asks the allocator about the table
 * object only. 0 for NULL. Thread-safe.
 */
ATAB_API int atab_report_has_usable_size(const atab_table *t);

/**
 * Receives the text of a dump, piece by piece (not NUL-terminated).
 * @return 0 to go on; any other value stops the dump, which returns it.
 */
typedef int (*atab_write_fn)(void *ud, const char *buf, size_t len);

/**
 * A ready-made atab_write_fn for stdio: `ud` is a FILE *. Returns 0, or 1
 * when the stream took fewer bytes than given (see ferror), or ATAB_EINVAL
 * (atab_last_error() set, nothing written) for a NULL stream. Thread-safe
 * as stdio is (each call is one fwrite).
 */
ATAB_API int atab_write_file(void *ud, const char *buf, size_t len);

/**
 * Writes the report as a text tree, as Firefox's about:memory (verbose)
 * renders the same JSON: "Explicit Allocations", the explicit/ tree
 * (amount in bytes, percentage of the tree's root, drawn with "├──"
 * "└──", largest first and then by name, a chain of lone kids merged into
 * one "a/b" line), then "Other Measurements": every entry outside explicit/
 * (bytes and counts alike), sorted by path, amounts right-aligned, no
 * percentage. UTF-8 text, lines end with '\n' (a control character or
 * invalid UTF-8 in a host's prefix or path is shown as U+FFFD).
 * Example: atab_report_tree(t, atab_write_file, stdout).
 * @return ATAB_OK, ATAB_EINVAL (NULL t or w), or the writer's first
 *         non-zero return.
 * Thread-safe, as atab_report; allocates nothing.
 */
ATAB_API int atab_report_tree(atab_table *t, atab_write_fn w, void *ud);

/**
 * Writes the report as JSON in the format Firefox's about:memory loads:
 * {"version":1,"hasMozMallocUsableSize":true|false,"reports":[{"process":
 * ...,"path":...,"kind":...,"units":...,"amount":...,"description":...},
 * ...]}, one report per line.
 * @param process  the "process" field of every report (UTF-8, escaped as
 *                 needed); NULL gives "".
 * @return as atab_report_tree. Thread-safe, as atab_report; allocates
 * nothing.
 */
ATAB_API int atab_report_json(atab_table *t, const char *process,
                              atab_write_fn w, void *ud);

/** The longest prefix atab_report_options takes, in bytes. */
#define ATAB_REPORT_PREFIX_MAX 128
/** The most extra entries atab_report_options takes. */
#define ATAB_REPORT_EXTRA_MAX 8
/** The largest magnitude of an extra entry's amount: 2^53 (8 PiB). */
#define ATAB_REPORT_AMOUNT_MAX ((int64_t)1 << 53)

/** One report entry a host adds to a dump (see atab_report_options). */
typedef struct atab_report_entry {
    const char *path;         /**< '/'-separated, non-empty; explicit/... in
                                   bytes, of kind HEAP or NONHEAP, and neither
                                   above nor below another entry's path (the
                                   table's, prefixed, or another extra one's;
                                   equal paths are summed): about:memory
                                   refuses a dump that breaks these */
    int kind;                 /**< ATAB_KIND_* */
    int units;                /**< ATAB_UNITS_* */
    int64_t amount;           /**< at most ATAB_REPORT_AMOUNT_MAX either way
                                   (the sums fit an int64_t) */
    const char *description;  /**< NULL gives "" */
} atab_report_entry;

/**
 * Options for the _ex reports; a zeroed struct (or NULL) is the plain
 * atab_report / atab_report_tree / atab_report_json. Read during the call
 * only; the strings must stay valid until it returns.
 */
typedef struct atab_report_options {
    /**
     * Keeps the paths of several tables in one host apart. NULL or "": none.
     * Otherwise '/'-separated non-empty names (no leading, trailing or
     * doubled '/'), at most ATAB_REPORT_PREFIX_MAX bytes. The table's
     * explicit/REST becomes explicit/PREFIX/REST (explicit/heap-overhead/REST
     * becomes explicit/heap-overhead/PREFIX/REST); a single-name entry NAME
     * becomes PREFIX-NAME with each '/' of the prefix written as '-' (it
     * stays a single name, as about:memory wants one unit per tree).
     * Example: "html" gives explicit/html/atoms/table and html-atoms-dynamic.
     */
    const char *prefix;
    /**
     * Process-wide entries the host measured, reported after the table's as
     * given (no prefix), e.g. "heap-allocated" (the allocator's total) and
     * "resident": with "heap-allocated", the tree shows about:memory's
     * explicit/heap-unclassified, heap-allocated minus the explicit HEAP
     * entries. At most ATAB_REPORT_EXTRA_MAX; NULL when n_extra is 0.
     */
    const atab_report_entry *extra;
    size_t n_extra;
} atab_report_options;

/**
 * atab_report with options: the table's entries with the prefix applied,
 * then the extra entries.
 * @return ATAB_OK, ATAB_EINVAL (NULL t or fn, or options breaking the
 *         rules of atab_report_options), or the first non-zero value `fn`
 *         returned. Thread-safe, as atab_report; allocates nothing.
 */
ATAB_API int atab_report_ex(atab_table *t, const atab_report_options *o,
                            atab_report_fn fn, void *ud);

/**
 * atab_report_tree with options. Extra entries outside explicit/ are
 * listed under "Other Measurements" by their full path, even those with a
 * '/' (about:memory would draw those as trees of their own). The tree is
 * drawn in fixed arrays on the stack: they hold the table's entries under
 * any prefix, and at least 48 more names for the extra entries' paths
 * (each name the tree does not have yet counts once; a shorter prefix
 * leaves room for more).
 * @return as atab_report_ex, with the writer's first non-zero return in
 *         place of fn's, and ATAB_EINVAL for extra entries that need more
 *         names than the arrays have left; ATAB_EINVAL is returned before
 *         anything is written.
 * Thread-safe, as atab_report; allocates nothing.
 */
ATAB_API int atab_report_tree_ex(atab_table *t, const atab_report_options *o,
                                 atab_write_fn w, void *ud);

/**
 * atab_report_json with options (the table's entries prefixed, then the
 * extra ones).
 * @return ATAB_OK, ATAB_EINVAL (NULL t or w, or options breaking the rules
 *         of atab_report_options), or the writer's first non-zero return.
 *         Thread-safe, as atab_report; allocates nothing.
 */
ATAB_API int atab_report_json_ex(atab_table *t, const char *process,
                                 const atab_report_options *o,
                                 atab_write_fn w, void *ud);

/* ------------------------------------------------------------------ */
/* Static atom sets                                                    */
/* ------------------------------------------------------------------ */

/*
 * A static set is a list of atoms compiled into the program as read-only
 * data by the generator, atomtab-genstatic (tools/atomtab-genstatic.c,
 * installed with the library):
 *
 *   atomtab-genstatic --name myset LIST myset.c myset.h
 *
 * LIST has one atom per line, optionally followed by a C identifier (made
 * from the name when absent: "data-id" -> data_id); `atomtab-genstatic
 * --help` and its man page give the whole format. myset.c defines `const atab_static_set
 * myset` (the atoms, each with the same 8-byte header as a dynamic atom
 * and ATAB__STATIC set, plus a perfect-hash index over them); myset.h
 * declares it and a macro MYSET_ATOM(id) giving each atom's address as a
 * constant expression. Pass the set to atab_table_new:
 *
 *   const atab_static_set *sets[] = {&myset};
 *   atab_options o = {0};
 *   o.static_sets = sets;
 *   o.n_static_sets = 1;
 *
 * On every table created with it, atab_intern, atab_intern_utf16 and
 * atab_lookup of a string in the set return the set's atom (never a
 * dynamic copy), so `atab_intern_cstr(t, "x") == MYSET_ATOM(x)`; atab_ref,
 * atab_release and atab_gc do nothing to it. Registering sets costs a
 * table nothing per atom: the index is built by the generator. A NULL set
 * makes atab_table_new fail with ATAB_EINVAL, one written for another
 * version of this layout (ATAB_STATIC_ABI: regenerate it with this
 * library's atomtab-genstatic) with ATAB_EABI.
 *
 * The library's own set (HTML, SVG and MathML element and attribute
 * names, CSS property names, common JS names) is registered on every table
 * unless ATAB_NO_DEFAULT_STATICS is given; <atomtab_atoms.h> declares it
 * (atab_static_default) and ATAB_ATOM(id), e.g. ATAB_ATOM(div),
 * ATAB_ATOM(accept_charset) for "accept-charset". Linked against the
 * shared library, a program that uses ATAB_ATOM() refers to the set's atoms
 * as data, and the linker may copy them into the program (a copy
 * relocation: about 57 KB copied at start-up into writable memory); the
 * library then uses that copy too, so the pointers still agree.
 *
 * Overlaps: sets are searched in order, the default set first, then the
 * options' sets in the order given; a string in more than one set gives
 * the first set's atom, and later sets' atoms for it are never returned
 * (their macros then do not name the table's atom). The generator's
 * --exclude option leaves out the strings of another list.
 */

/** Version of the layout below; the generator writes it, tables check it. */
#define ATAB_STATIC_ABI 2u

/** Longest atom a static set may hold, in bytes. */
#define ATAB_STATIC_MAXLEN 256

/**
 * A static set, as the generator writes it (do not fill one by hand).
 * `atoms` holds the atoms back to back, each 4-aligned: header, chars,
 * NUL, padding. The index is hash-and-displace (CHD): with
 * h = atab__static_hash(seed, chars), bucket b = h's low 32 bits reduced
 * to n_buckets; disp[b] = d1 << 16 | d2 places the string at slot
 * (f1 + d1 * f2 + d2) % n_slots (f1, f2 from h); slots[] holds the atom's
 * byte offset in `atoms`, or UINT32_MAX for an empty slot.
 */
struct atab_static_set {
    uint32_t abi;             /**< ATAB_STATIC_ABI */
    uint32_t n;               /**< atoms */
    uint32_t maxlen;          /**< longest atom, bytes */
    uint32_t n_buckets;       /**< entries in disp */
    uint32_t n_slots;         /**< entries in slots */
    uint32_t bytes;           /**< read-only bytes: atoms + disp + slots + filter */
    uint64_t seed;            /**< the index's hash seed, fixed by the generator */
    const void *atoms;        /**< the atoms */
    const uint32_t *disp;     /**< per bucket: d1 << 16 | d2 */
    const uint32_t *slots;    /**< per slot: byte offset of an atom */
    const char *name;         /**< the set's name (--name) */
    uint32_t filter_log2;     /**< the miss filter has 2^filter_log2 bits */
    const uint64_t *filter;   /**< bit atab__static_filter_bit() set for each
                                   atom (src/static_hash.h): a clear bit
                                   skips the set without hashing */
};

/* ------------------------------------------------------------------ */
/* External strings: host strings that share an atom's characters      */
/* ------------------------------------------------------------------ */

/*
 * A host runtime (a JS engine, a GC'd language) can make its own string
 * object point at atab_chars(a) instead of copying it, as V8's external
 * strings and Node-API's node_api_create_external_string_latin1 do. Such a
 * string must keep the atom alive: it holds an *external handle*.
 *
 * A handle is not an object: it is the pair (table, atom) the host already
 * has, so it costs no bytes and no allocation: the finalizer's `data` is
 * the string's characters, atab_chars(a) (what external-string APIs hand
 * back to their finalizers), from which atab_atom_of_chars() recovers the
 * atom, and its `hint` is the table. The table counts the handles
 * outstanding (report entry atoms-external-handles).
 *
 * Lifetime: a handle holds one reference on a dynamic atom (none on a
 * static atom, which lives in read-only data and needs none; handles on
 * static atoms are not counted and their release never touches the
 * table). atab_table_free with handles outstanding frees what it can (the
 * host caches below, unused atoms) and defers the rest: the table and the
 * atoms the handles hold stay valid until the last handle is released,
 * which then frees the table. No handle may be acquired after
 * atab_table_free; releases may come at any time after it, from any thread.
 */

/**
 * Takes an external handle on `a` for a host string that points at
 * atab_chars(a). The caller must hold a reference on `a` (as for atab_ref).
 * @return `a`, or NULL with atab_last_error() set to ATAB_EINVAL (NULL
 *         argument, another table's atom, or the table is being freed).
 * Thread-safe: the reference is taken on the atom's count (one atomic
 * operation, after a lock-free probe that finds the atom in `t`; never a
 * spare from the thread's cache), and the table's
 * handle count is one atomic add.
 */
ATAB_API const atab_atom *atab_external_acquire(atab_table *t, const atab_atom *a);

/**
 * Releases a handle taken by atab_external_acquire on the same table: call
 * it from the host string's finalizer. It drops the handle's reference
 * only, so it never frees an atom that someone else holds. The last
 * release after atab_table_free frees the table. A release when the table
 * has no handle out is refused (ATAB_EREFS, counted in atab_stats.misuse;
 * nothing touched); one handle released twice at once on two threads may
 * drop its atom's reference twice before the second finds it gone.
 * A release of another table's atom is refused (ATAB_EINVAL, counted in
 * atab_stats.misuse, nothing touched).
 * @return ATAB_OK, ATAB_EINVAL (NULL argument, or another table's atom) or
 *         ATAB_EREFS (as atab_release, or no handle out). Thread-safe.
 */
ATAB_API int atab_external_release(atab_table *t, const atab_atom *a);

/** The atom whose characters are at `chars` (= atab_chars(a)). */
static inline const atab_atom *atab_atom_of_chars(const void *chars)
{
    return (const atab_atom *)chars - 1;
}

/**
 * Finalizer adapters: atab_external_release(hint, atab_atom_of_chars(data)),
 * for finalizers whose `data` is atab_chars(a) and `hint` the table.
 *  - Node-API's `void (*)(napi_env env, void *data, void *hint)`
 *    (napi_finalize; node_api_basic_finalize takes a const env): the env
 *    is unused. Declared with void * so no Node header is needed; a host
 *    that would rather not cast the function pointer passes a one-line
 *    thunk with the exact signature.
 *  - Two-pointer deallocators, data first (CFStringCreateWithBytesNoCopy-
 *    style deallocators, GLib's GDestroyNotify-with-closure callers).
 * NULL data is refused (atab_last_error() set to ATAB_EINVAL, nothing
 * touched). Thread-safe, as atab_external_release.
 */
ATAB_API void atab_external_finalize_napi(void *env, void *data, void *hint);
ATAB_API void atab_external_finalize(void *data, void *hint);

/*
 * Host caches: at most one host string per atom in each cache, made on
 * first use and handed out again after, so reading the same atom twice
 * makes no new host object. A table has any number of caches, one per host
 * heap: a V8 string belongs to one isolate, so each Node.js worker has its
 * own cache over the one table the process shares.
 *
 * Memory: nothing per atom that is never asked for. A cache is a side
 * table keyed by the atom's address: 17 bytes a slot (atom, host string,
 * and a byte read only by trims), open addressing with linear probing,
 * allocated on the first miss through the table's allocator, grown x2 past
 * load 1/2 (16 slots first), so 34 to 68 bytes per cached atom, plus a
 * header per cache and one list per table. The memory report counts every
 * cache's bytes. A hit is about 40 instructions plus ops.hold (callgrind:
 * 36 to 40 with 100 to 10,000 atoms cached).
 *
 * A cache holds the host string strongly (a host such as V8 cannot hold a
 * string weakly) and one reference on the atom. Neither may keep an atom
 * alive forever: atab_host_cache_trim drops the entries whose atom has no
 * references but those of caches (this one's and its string's handle, and
 * the same for every other cache of the table that holds the atom: an atom
 * shared by two heaps is let go by each), and a cache trims itself when it
 * has grown to twice the entries the last trim kept (1024 at least), so
 * its size stays proportional to the atoms in use and the trimming costs
 * O(1) amortised per miss. Static atoms' entries are never trimmed (the
 * static sets are bounded).
 *
 * Threads: atab_host_cache_new may be called from any thread at any time.
 * Each cache is used by one thread at a time (its host's: a JS heap is
 * single-threaded too); different caches of one table may be used from
 * different threads at once, and other threads may intern, release and
 * report meanwhile. A trim first brings the threads' spare references back
 * to the counts (as atab_get_stats does; no thread waits for it), and holds
 * every cache's lock for one pass over its own entries, so other caches'
 * misses wait for it (hits never do). The callbacks run on the cache's thread,
 * with no lock of the library held, and must not call the cache.
 *
 * Lifetime: atab_host_cache_free before atab_table_free; a cache still on
 * the table when it is freed is freed with it (its strings dropped), and
 * must not be used after.
 */

/** A host cache (opaque). */
typedef struct atab_host_cache atab_host_cache;

/** The host's string callbacks for a cache. */
typedef struct atab_host_ops {
    /** Makes a host string for `a`, kept by the cache; the cache's hold on it
     *  is the one create returns (e.g. a strong persistent handle). Set
     *  *string_refs to the references on `a` the string holds (1 when it is
     *  an external string holding a handle, 0 for a copy). NULL on failure. */
    void *(*create)(void *ud, atab_table *t, const atab_atom *a, unsigned *string_refs);
    /** What atab_host_cache_get returns for a cached string (e.g. a new
     *  local reference, or the same pointer with a count bumped); NULL:
     *  the cached pointer as is. */
    void *(*hold)(void *ud, void *s);
    /** Drops the cache's hold on `s` (the string may then be collected). */
    void (*drop)(void *ud, void *s);
    void *ud;
} atab_host_ops;

/**
 * Makes a host cache on `t` with the host's callbacks (copied). Allocates
 * the cache's small header (no entries yet), and the table's list of
 * caches with its first cache.
 * @return the cache, or NULL with atab_last_error() set: ATAB_EINVAL (NULL
 *         argument, or no create/drop), ATAB_ENOMEM, ATAB_ELIMIT.
 * Thread-safe.
 */
ATAB_API atab_host_cache *atab_host_cache_new(atab_table *t, const atab_host_ops *ops);

/**
 * The host string for `a`: the cached one (through ops.hold), or a new one
 * from ops.create, cached. The caller must hold a reference on `a`.
 * ops.hold is called on a miss too: the cache keeps what create returned
 * and returns hold(create's string), so every string returned has been
 * through hold exactly once. A miss may first trim the cache (ops.drop on
 * the entries trimmed; see atab_host_cache_trim).
 * @return the string, or NULL with atab_last_error() set: ATAB_EINVAL (NULL
 *         argument, or another table's atom: nothing made, nothing
 *         taken), ATAB_ENOMEM (the cache could not grow, or create
 *         failed: nothing is cached, nothing is lost), ATAB_ELIMIT.
 * Not thread-safe: the cache's one thread at a time (see above).
 */
ATAB_API void *atab_host_cache_get(atab_host_cache *c, const atab_atom *a);

/**
 * Drops the entries whose atom has no references but caches' (see above),
 * releasing the cache's reference, then ops.drop. The atom then goes away
 * when the host collects the string. @return the entries dropped; 0 for
 * NULL or an empty cache. Not thread-safe: the cache's thread.
 */
ATAB_API size_t atab_host_cache_trim(atab_host_cache *c);

/** Drops every entry. @return the entries dropped; 0 for NULL.
 *  Not thread-safe: the cache's thread. */
ATAB_API size_t atab_host_cache_clear(atab_host_cache *c);

/** Entries in the cache; 0 for NULL. Not thread-safe: the cache's thread
 *  (another thread may read a stale count). */
ATAB_API size_t atab_host_cache_count(const atab_host_cache *c);

/**
 * Drops every entry and frees the cache. Accepts NULL. Not thread-safe:
 * call it on the cache's thread; other caches of the table may be in use
 * meanwhile.
 */
ATAB_API void atab_host_cache_free(atab_host_cache *c);

/** Outstanding external handles on dynamic atoms; 0 for NULL. Thread-safe
 *  (one atomic load: exact at the moment of the call). */
ATAB_API size_t atab_external_handles(const atab_table *t);

#ifdef __cplusplus
}
#endif

#endif /* ATOMTAB_H */
