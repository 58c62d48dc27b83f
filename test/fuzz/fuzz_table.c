/* SPDX-License-Identifier: MIT */
/*
** fuzz_table.c - libFuzzer target: decodes its input into a sequence of
** table operations and checks the table against a simple reference model
** after every step: identity (a string keeps its atom while it lives),
** counts (atoms, unused), exact reference counts, released-and-swept atoms
** gone, requested bytes equal to what the allocator handed out, and no
** leak once the table is freed.
**
** Built two ways from this one file:
**   - with -fsanitize=fuzzer(,address,undefined): the libFuzzer target
**     (make fuzz);
**   - with -DFUZZ_STANDALONE: a driver that replays files or directories
**     given on the command line (the seed corpus, test/fuzz/corpus) plus
**     inputs from a fixed pseudo-random generator, so the model check runs
**     in every `make test` and meson test.
**
** Besides interning and releasing one atom at a time, the operations run
** ASCII-lowercase interning (the atom of the folded bytes), atab_release_all
** (as releasing each), atab_foreach (every atom the model has, once, with
** its exact count, its callback calling into the table), content hashes
** (an atom's is its bytes', in a second table too), reports, sweeps,
** external handles and static strings.
**
** Input format: byte 0 configures the table (sweep mode, memory limit,
** injected allocation failures, initial capacity); then each operation is
** one opcode byte (taken modulo N_OPS) followed by its operands (see
** decode_key). Adding an operation is one enum value, last (so the seeds,
** written with the opcodes below it, keep their meaning), one case in
** step() and, when it has state, a field in `model_ent`.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atab_int.h"   /* atab__count, atab__table_visit_shards: exact checks */
#include "atomtab_atoms.h"   /* the default static set, for OP_STATIC */

#define CHECK(c)                                                           \
    do {                                                                   \
        if (!(c)) {                                                        \
            fprintf(stderr, "fuzz_table: check failed: %s (line %d)\n", #c, \
                    __LINE__);                                             \
            abort();                                                       \
        }                                                                  \
    } while (0)

/* ---- a counting allocator that can fail ---- */

typedef struct fz_alloc {
    long live, attempts, fail_at;
    int fail_after;
    size_t bytes;
} fz_alloc;

static void *fz_malloc(void *ud, size_t size)
{
    fz_alloc *c = ud;
    long n = ++c->attempts;
    if (c->fail_at && (n == c->fail_at || (c->fail_after && n > c->fail_at)))
        return NULL;
    size_t *p = malloc(size + 16);
    if (!p)
        return NULL;
    p[0] = size;
    c->live++;
    c->bytes += size;
    return (char *)p + 16;
}

static void fz_free(void *ud, void *p, size_t size)
{
    fz_alloc *c = ud;
    if (!p)
        return;
    size_t *b = (size_t *)((char *)p - 16);
    CHECK(b[0] == size);   /* every free names its allocation's size */
    c->live--;
    c->bytes -= size;
    free(b);
}

static size_t fz_usable(void *ud, const void *p, size_t size)
{
    (void)ud; (void)p;
    return size;
}

/* ---- the reference model ----
**
** The model's storage lives across inputs (libFuzzer runs millions): its
** arrays are reset, not freed, and its two indexes are stamped with the
** input's generation, so a slot of an earlier input reads as empty and
** nothing needs clearing. No state but capacity carries over. */

typedef struct model_ent {
    size_t off, len;        /* UTF-8 bytes: m->chars + off */
    const atab_atom *a;     /* the atom while present */
    long count;             /* references the model holds (handles included) */
    long handles;           /* of those, external handles */
    int present;            /* in the table (count > 0, or unused) */
    uint32_t seen;          /* the full check that last found it (check_all) */
} model_ent;

typedef struct model {
    model_ent *e;
    size_t n, cap;
    char *chars;            /* every entry's bytes, NUL-terminated */
    size_t chars_n, chars_cap;
    int exact_sweeps;       /* sweeps only on atab_gc (threshold SIZE_MAX) */
    int may_fail;           /* allocation failures or a memory limit */
    int statics;            /* the default static set is registered */
    long handles;           /* external handles out, over all entries */
    struct fz_alloc *al;    /* the table's allocator, for the checks */
    struct model_ent *touched;   /* the entry the last step changed */
    unsigned bulk_next;     /* OP_BULK's key counter */
    unsigned bulk_made;     /* OP_BULK's keys interned */
    unsigned reports;       /* OP_REPORTs run */
    unsigned walks;         /* OP_FOREACHs run */
    long misuse;            /* releases refused with ATAB_EREFS */
    atab_options twin_opts; /* the table's options, less its allocator */
    atab_table *twin;       /* OP_HASH's second table, made on first use */
    size_t work;            /* table calls since the last full check */
    uint32_t *zeros;        /* entries that went to count 0 since the last
                            ** sweep (some since revived): model_swept's list */
    size_t zeros_n, zeros_cap;
    uint64_t gen;           /* this input's stamp, in bits 32-63 of index slots */
    uint64_t *idx;          /* by string: gen << 32 | entry + 1 (model_find) */
    size_t idx_cap;
    uint64_t *pidx;         /* by atom address: gen << 32 | entry + 1 (model_by_atom) */
    size_t pidx_cap, pidx_used;
    uint64_t pgen;          /* pidx's stamp: a rebuild takes a new one */
    uint32_t check_gen;     /* full checks so far (model_ent.seen) */
    size_t present, zero;   /* entries present; of those, at count 0 */
} model;

static model_ent *ent_at(model *m, uint64_t slot, uint64_t gen)
{
    return slot >> 32 == gen ? &m->e[(uint32_t)slot - 1] : NULL;
}

static const char *ent_s(const model *m, const model_ent *e)
{
    return m->chars + e->off;
}

/* The model's own index: open addressing on FNV-1a. */
static size_t fnv(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
    return (size_t)(h ^ h >> 32);
}

static model_ent *model_find(model *m, const char *s, size_t len)
{
    model_ent *e;
    if (!m->n)
        return NULL;
    for (size_t i = fnv(s, len) & (m->idx_cap - 1);; i = (i + 1) & (m->idx_cap - 1)) {
        if (!(e = ent_at(m, m->idx[i], m->gen)))
            return NULL;
        if (e->len == len && memcmp(ent_s(m, e), s, len) == 0)
            return e;
    }
}

static void model_index(model *m, size_t k)
{
    size_t i = fnv(ent_s(m, &m->e[k]), m->e[k].len) & (m->idx_cap - 1);
    while (ent_at(m, m->idx[i], m->gen))
        i = (i + 1) & (m->idx_cap - 1);
    m->idx[i] = m->gen << 32 | (k + 1);
}

/* The address index: every present entry under its atom's address, and
** stale slots (entries swept or moved on since), which lookups skip and a
** rebuild drops. */
static size_t ptr_hash(const atab_atom *a, size_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)a * 0x9e3779b97f4a7c15u;
    return (size_t)(x >> 32) & (cap - 1);
}

static void pidx_put(model *m, size_t k)
{
    size_t i = ptr_hash(m->e[k].a, m->pidx_cap);
    while (ent_at(m, m->pidx[i], m->pgen))
        i = (i + 1) & (m->pidx_cap - 1);
    m->pidx[i] = m->pgen << 32 | (k + 1);
    m->pidx_used++;
}

/* Drops the stale slots: a new stamp, the present entries again, in an
** index at most half full once they are all in. */
static void pidx_rebuild(model *m)
{
    size_t want = 64;
    while (want < 4 * m->present + 4)
        want *= 2;
    if (want > m->pidx_cap) {
        free(m->pidx);
        m->pidx = calloc(want, sizeof *m->pidx);
        CHECK(m->pidx != NULL);
        m->pidx_cap = want;
    }
    m->pgen++;   /* every slot of the old stamp reads as empty */
    m->pidx_used = 0;
    for (size_t k = 0; k < m->n; k++)
        if (m->e[k].present)
            pidx_put(m, k);
}

/* The present entry whose atom is at a, or NULL. */
static model_ent *model_by_atom(model *m, const atab_atom *a)
{
    model_ent *e;
    for (size_t i = ptr_hash(a, m->pidx_cap);; i = (i + 1) & (m->pidx_cap - 1)) {
        if (!(e = ent_at(m, m->pidx[i], m->pgen)))
            return NULL;
        if (e->present && e->a == a)
            return e;
    }
}

/* Entry e has become present as atom a. */
static void model_present(model *m, model_ent *e, const atab_atom *a)
{
    e->a = a;
    e->present = 1;
    m->present++;
    m->work++;
    if (2 * (m->pidx_used + 1) > m->pidx_cap)
        pidx_rebuild(m);   /* includes e */
    else
        pidx_put(m, (size_t)(e - m->e));
}

static model_ent *model_add(model *m, const char *s, size_t len)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->e = realloc(m->e, m->cap * sizeof *m->e);
        CHECK(m->e != NULL);
    }
    if (2 * (m->n + 1) > m->idx_cap) {   /* a new array, the entries again */
        free(m->idx);
        m->idx_cap = m->idx_cap ? 2 * m->idx_cap : 128;
        m->idx = calloc(m->idx_cap, sizeof *m->idx);
        CHECK(m->idx != NULL);
        for (size_t k = 0; k < m->n; k++)
            model_index(m, k);
    }
    if (m->chars_n + len + 1 > m->chars_cap) {
        while (m->chars_n + len + 1 > m->chars_cap)
            m->chars_cap = m->chars_cap ? 2 * m->chars_cap : 4096;
        m->chars = realloc(m->chars, m->chars_cap);
        CHECK(m->chars != NULL);
    }
    model_ent *e = &m->e[m->n++];
    memset(e, 0, sizeof *e);
    e->off = m->chars_n;
    e->len = len;
    if (len)
        memcpy(m->chars + e->off, s, len);
    m->chars[e->off + len] = '\0';
    m->chars_n += len + 1;
    model_index(m, m->n - 1);
    return e;
}

/* Empties the model for the next input, keeping its storage; the new
** stamps make every index slot read as empty. */
static void model_reset(model *m, fz_alloc *al)
{
    model keep = *m;
    memset(m, 0, sizeof *m);
    m->e = keep.e, m->cap = keep.cap;
    m->chars = keep.chars, m->chars_cap = keep.chars_cap;
    m->idx = keep.idx, m->idx_cap = keep.idx_cap;
    m->pidx = keep.pidx, m->pidx_cap = keep.pidx_cap;
    m->zeros = keep.zeros, m->zeros_cap = keep.zeros_cap;
    m->gen = keep.gen + 1;
    m->pgen = keep.pgen + 1;
    m->check_gen = keep.check_gen;
    m->al = al;
    if (!m->pidx)
        pidx_rebuild(m);
}

/* A sweep freed every atom at count 0: those on the list still at 0 (an
** entry is listed each time its count reaches 0, and only then can it be
** at 0: a new entry starts at 1). */
static void model_swept(model *m)
{
    for (size_t i = 0; i < m->zeros_n; i++) {
        model_ent *e = &m->e[m->zeros[i]];
        if (e->present && e->count == 0)
            e->present = 0, e->a = NULL;
    }
    m->zeros_n = 0;
    m->present -= m->zero;
    m->zero = 0;
}

/* One reference more or less on a present entry. */
static void model_ref(model *m, model_ent *e)
{
    m->zero -= e->count++ == 0;
    m->touched = e;
    m->work++;
}

static void model_unref(model *m, model_ent *e)
{
    m->touched = e;
    m->work++;
    if (--e->count)
        return;
    m->zero++;
    if (m->zeros_n == m->zeros_cap) {
        m->zeros_cap = m->zeros_cap ? 2 * m->zeros_cap : 256;
        m->zeros = realloc(m->zeros, m->zeros_cap * sizeof *m->zeros);
        CHECK(m->zeros != NULL);
    }
    m->zeros[m->zeros_n++] = (uint32_t)(e - m->e);
}

/* ---- an independent UTF-16 <-> UTF-8 reference ---- */

/* UTF-16 to UTF-8; -1 on an unpaired surrogate. */
static long ref_u16_to_u8(const uint16_t *u, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = u[i];
        if (c >= 0xd800 && c < 0xdc00) {
            if (i + 1 >= n || u[i + 1] < 0xdc00 || u[i + 1] >= 0xe000)
                return -1;
            c = 0x10000 + ((c - 0xd800) << 10) + (u[++i] - 0xdc00);
        } else if (c >= 0xdc00 && c < 0xe000) {
            return -1;
        }
        if (c < 0x80) {
            out[o++] = (char)c;
        } else if (c < 0x800) {
            out[o++] = (char)(0xc0 | c >> 6);
            out[o++] = (char)(0x80 | (c & 0x3f));
        } else if (c < 0x10000) {
            out[o++] = (char)(0xe0 | c >> 12);
            out[o++] = (char)(0x80 | (c >> 6 & 0x3f));
            out[o++] = (char)(0x80 | (c & 0x3f));
        } else {
            out[o++] = (char)(0xf0 | c >> 18);
            out[o++] = (char)(0x80 | (c >> 12 & 0x3f));
            out[o++] = (char)(0x80 | (c >> 6 & 0x3f));
            out[o++] = (char)(0x80 | (c & 0x3f));
        }
    }
    return (long)o;
}

/* Strict UTF-8 to UTF-16 (no overlongs, no surrogates); -1 when invalid. */
static long ref_u8_to_u16(const char *s8, size_t n, uint16_t *out)
{
    const unsigned char *s = (const unsigned char *)s8;
    size_t o = 0, i = 0, k;
    while (i < n) {
        uint32_t c = s[i], min;
        if (c < 0x80)
            k = 0, min = 0;
        else if (c >= 0xc2 && c < 0xe0)
            k = 1, c &= 0x1f, min = 0x80;
        else if (c >= 0xe0 && c < 0xf0)
            k = 2, c &= 0x0f, min = 0x800;
        else if (c >= 0xf0 && c < 0xf5)
            k = 3, c &= 0x07, min = 0x10000;
        else
            return -1;
        if (i + k >= n && k)
            return -1;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                return -1;
            c = c << 6 | (s[i + j] & 0x3f);
        }
        if (c < min || c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
            return -1;
        if (c >= 0x10000) {
            out[o++] = (uint16_t)(0xd800 + ((c - 0x10000) >> 10));
            out[o++] = (uint16_t)(0xdc00 + ((c - 0x10000) & 0x3ff));
        } else {
            out[o++] = (uint16_t)c;
        }
        i += k + 1;
    }
    return (long)o;
}

/* ---- decoding the input ---- */

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static int rd(reader *r, unsigned *out)
{
    if (!r->n)
        return 0;
    *out = *r->p++;
    r->n--;
    return 1;
}

#define KEY_MAX 1024   /* long keys too: UTF-16 past 256 bytes is chunked */

/* A key: a length byte (255: a long key of 256 + 2 * next byte) then that
** many bytes, each mapped onto a small alphabet when the length byte is
** even (so keys repeat), taken raw when odd. */
static size_t decode_key(reader *r, char *buf)
{
    unsigned b, l, x;
    if (!rd(r, &b))
        return 0;
    l = b == 255 ? (rd(r, &x) ? 256 + 2 * x : 256) : (b >> 1) % 40;
    for (unsigned i = 0; i < l && i < KEY_MAX; i++) {
        if (!rd(r, &x))
            x = i;
        buf[i] = (b & 1) ? (char)x : "abcdefgh\xc3\xa9-_0:"[x % 14];
    }
    return l < KEY_MAX ? l : KEY_MAX;
}

/* A UTF-16 key: a length byte, then units as pairs of bytes; bytes with
** the top bits 110110/110111 become surrogates (paired or not). */
static size_t decode_u16(reader *r, uint16_t *u)
{
    unsigned b, hi, lo;
    if (!rd(r, &b))
        return 0;
    size_t n = b == 255 ? 300 : b % 24;
    for (size_t i = 0; i < n; i++) {
        if (!rd(r, &hi))
            hi = (unsigned)i;
        if (!rd(r, &lo))
            lo = 0;
        if (hi < 0x80 && (i % 4))
            u[i] = (uint16_t)(0x61 + hi % 8);   /* mostly ASCII */
        else
            u[i] = (uint16_t)(hi << 8 | lo);
    }
    return n;
}

/* ---- checking the table against the model ---- */

/* Every atom the table holds, checked against the model's entry at its
** address as the table's shards are visited. */
typedef struct visit {
    model *m;
    size_t n;   /* dynamic atoms seen */
} visit;

static void see(void *ud, const atab_atom *a)
{
    visit *v = ud;
    if (atab_is_static(a))
        return;   /* a static atom cached in a slot: not the model's */
    model_ent *e = model_by_atom(v->m, a);
    CHECK(e != NULL);   /* else the table holds an atom the model lacks */
    CHECK(e->seen != v->m->check_gen);   /* an atom is in one slot only */
    e->seen = v->m->check_gen;
    v->n++;
    CHECK(atab_len(a) == e->len);
    CHECK(memcmp(atab_chars(a), ent_s(v->m, e), e->len) == 0);
    CHECK(atab_chars(a)[e->len] == '\0');
    CHECK(atab__count(a) == e->count);
}

/* atab_count without its 64 lock round trips (the fuzzer is one thread
** and checks after every step; the end checks atab_count itself). */
static size_t count_unlocked(atab_table *t)
{
    size_t n = 0;
    for (unsigned i = 0; i < ATAB__SHARDS; i++)
        n += t->shards[i].used - t->shards[i].statics;
    return n;
}

/* Finds which atoms at count 0 a call's sweeps freed (a thread's sweep
** frees the atoms on its queue still at 0, atab_gc every atom at 0, and
** later releases may bring more to 0): one visit of the table. A release
** allocates no atom, so no freed address is in use again yet. Every atom
** the model counts must still be there. */
static void mark_seen(void *ud, const atab_atom *a)
{
    visit *v = ud;
    if (atab_is_static(a))
        return;
    model_ent *e = model_by_atom(v->m, a);
    CHECK(e != NULL && e->seen != v->m->check_gen);
    e->seen = v->m->check_gen;
    v->n++;
}

static void model_resync(atab_table *t, model *m)
{
    visit v = {m, 0};
    size_t kept = 0;
    if (count_unlocked(t) == m->present)
        return;   /* nothing swept */
    CHECK(!m->exact_sweeps);
    m->check_gen++;
    atab__table_visit_shards(t, NULL, mark_seen, &v);
    for (size_t i = 0; i < m->zeros_n; i++) {
        model_ent *e = &m->e[m->zeros[i]];
        if (!e->present || e->count != 0)
            continue;   /* revived or swept: off the list */
        if (e->seen == m->check_gen) {
            m->zeros[kept++] = m->zeros[i];
        } else {
            e->present = 0, e->a = NULL;
            m->present--, m->zero--;
        }
    }
    m->zeros_n = kept;
    CHECK(v.n == m->present);
}

/* Every atom the model says is present is in the table, at its pointer,
** with its bytes and its exact count (the caller flushed the caches): the
** table's atoms are present entries' atoms, each once, as many as there
** are present entries. One visit of the table, no allocation. */
static void check_all(atab_table *t, model *m)
{
    visit v = {m, 0};
    m->check_gen++;
    atab__table_visit_shards(t, NULL, see, &v);
    CHECK(v.n == m->present);
}

/* The spare references the caches hold on a (thread.h): the atom's count
** is what holders hold plus every cache's spares. The fuzzer has one
** thread: the table's records are its own (none where the allocation
** failed; their caches stay empty in debug builds, which count every
** reference on the atom). */
static uint32_t cached_spares(atab_table *t, const atab_atom *a)
{
    uint32_t n = 0;
    for (atab__rec *r = t->recs; r; r = r->next) {
        const uint64_t *e = atab__cache_find(r, a, atab__hash_bytes(t->seed, atab_chars(a),
                                                                   atab_len(a)));
        n += e && !(*e & ATAB__ENT_STATIC) ? atab__spares(*e) : 0;
    }
    return n;
}


/* Compares the table with the model after a step: cheaply every time (the
** number of atoms, the bytes, the atom the step touched, exact count
** included), and fully (atab_get_stats, every atom: check_all) when `full`.
** `after_release`: with a sweep threshold, a release may have run a sweep,
** which freed some of the unused atoms (which ones: model_resync; any use
** of one of them after, under ASan). */
static void check(atab_table *t, model *m, int after_release, int full)
{
    size_t n = count_unlocked(t);
    if (n != m->present) {   /* a sweep ran: only a release starts one */
        CHECK(after_release && !m->exact_sweeps);
        CHECK(n < m->present && n >= m->present - m->zero);
        model_resync(t, m);
    }
    CHECK(atab__bytes(t) == m->al->bytes);
    model_ent *e = m->touched;
    if (e && e->present) {
        CHECK(atab_len(e->a) == e->len && memcmp(atab_chars(e->a), ent_s(m, e), e->len) == 0);
        CHECK(atab__count(e->a) - cached_spares(t, e->a) == e->count);
    }
    m->touched = NULL;
    if (full) {
        m->work = 0;
        atab_stats st;
        CHECK(atab_get_stats(t, &st) == ATAB_OK);   /* flushes the caches */
        CHECK(st.atoms == m->present);
        CHECK(st.unused == m->zero);
        CHECK(st.misuse == (size_t)m->misuse);
        CHECK(st.bytes == m->al->bytes);   /* the table's account is the allocator's */
        check_all(t, m);
    }
}

/* ---- operations ---- */

enum {
    OP_INTERN, OP_INTERN_OLD, OP_INTERN_U16, OP_INTERN_U16_OLD, OP_LOOKUP,
    OP_LOOKUP_U16, OP_REF, OP_RELEASE, OP_RELEASE_ALL, OP_GC, OP_REPORT,
    OP_BULK,       /* interns 4n generated keys at once: growth */
    OP_EXTERNAL,   /* external handle acquire / release (src/external.c) */
    OP_STATIC,     /* a string of the default static set, by every entry */
    OP_INTERN_LOWER, OP_INTERN_LOWER_U16,   /* ASCII-lowercase interning */
    OP_RELEASE_LIST,   /* atab_release_all on a list of references */
    OP_FOREACH,        /* atab_foreach, its callback calling into the table */
    OP_HASH,           /* content hashes, here and in a second table */
    N_OPS
};

/* FUZZ_VERBOSE set: say why each miss missed (read once). */
static int verbose(void)
{
    static int v = -1;
    if (v < 0)
        v = getenv("FUZZ_VERBOSE") != NULL;
    return v;
}

/* The outcome of an intern or lookup of `s` whose model entry is e (NULL:
** never seen). Updates the model; `insert` 0 for lookups. */
static void expect_atom(model *m, const char *s, size_t len, const atab_atom *a,
                        int insert)
{
    model_ent *e = model_find(m, s, len);
    if (a && atab_is_static(a)) {   /* only from a registered set, never a twin */
        CHECK(m->statics && (!e || !e->present));
        CHECK(atab_len(a) == len && memcmp(atab_chars(a), s, len) == 0);
        return;
    }
    if (e && e->present) {   /* a hit, or a revival: never fails */
        CHECK(a == e->a);
        model_ref(m, e);
        return;
    }
    if (!a) {   /* a miss: lookups find nothing, interns may run out */
        atab_status err = atab_last_error();
        if (verbose())
            fprintf(stderr, "miss: insert %d err %d\n", insert, err);
        CHECK(!insert ? err == ATAB_OK : (m->may_fail && (err == ATAB_ENOMEM ||
                                                          err == ATAB_ELIMIT)));
        return;
    }
    CHECK(insert);
    CHECK(!atab_is_static(a));
    CHECK(model_by_atom(m, a) == NULL);   /* a new atom is a new pointer */
    if (!e)
        e = model_add(m, s, len);
    e->count = 1;
    model_present(m, e, a);
    m->touched = e;
}

/* The first entry from b on with a plain reference (not a handle). */
static model_ent *first_held(model *m, unsigned b)
{
    for (size_t i = 0; i < m->n; i++) {
        model_ent *e = &m->e[(b + i) % m->n];
        if (e->present && e->count > e->handles)
            return e;
    }
    return NULL;
}

/* A model entry with references, picked by the next byte (read only when
** one is held). */
static model_ent *pick_held(model *m, reader *r)
{
    unsigned b;
    if (m->present == m->zero || !rd(r, &b))
        return NULL;
    return first_held(m, b);
}

static model_ent *pick_any(model *m, reader *r)
{
    unsigned b;
    if (!m->n || !rd(r, &b))
        return NULL;
    return &m->e[b % m->n];
}

typedef struct rep_counts {
    int64_t atoms, unused;
} rep_counts;

static int rep_cb(void *ud, const char *path, int kind, int units, int64_t amount,
                  const char *desc)
{
    rep_counts *c = ud;
    (void)kind; (void)units; (void)desc;
    if (strcmp(path, "atoms-dynamic") == 0)
        c->atoms = amount;
    else if (strcmp(path, "atoms-dynamic-unused") == 0)
        c->unused = amount;
    return 0;
}

static int null_writer(void *ud, const char *buf, size_t len)
{
    (void)buf;
    *(size_t *)ud += len;
    return 0;
}

static void op_report(atab_table *t, model *m, unsigned how)
{
    size_t n = 0;
    rep_counts c = {-1, -1};
    if (how % 3 == 1)
        CHECK(atab_report_tree(t, null_writer, &n) == ATAB_OK && n > 0);
    else if (how % 3 == 2)
        CHECK(atab_report_json(t, "fuzz\"\\", null_writer, &n) == ATAB_OK && n > 0);
    CHECK(atab_report(t, rep_cb, &c) == ATAB_OK);
    CHECK(c.atoms == (int64_t)m->present && c.unused == (int64_t)m->zero);
}

static char kbuf[KEY_MAX * 3 + 8];
static uint16_t ubuf[KEY_MAX * 2];

/* The outcome of a UTF-16 intern or lookup of u[0..n) (as expect_atom). */
static void expect_u16(model *m, const uint16_t *u, size_t n, const atab_atom *a,
                       int insert)
{
    long l8 = ref_u16_to_u8(u, n, kbuf);
    if (l8 < 0) {
        CHECK(a == NULL && atab_last_error() == ATAB_EUTF16);
        return;
    }
    expect_atom(m, kbuf, (size_t)l8, a, insert);
}

static void op_intern_u16(atab_table *t, model *m, const uint16_t *u, size_t n,
                          int insert)
{
    expect_u16(m, u, n, insert ? atab_intern_utf16(t, u, n) : atab_lookup_utf16(t, u, n),
               insert);
}

/* An external handle: acquire one on a held atom (a reference more), or
** release one the model holds (a reference less). Returns as step(). */
static int op_external(atab_table *t, model *m, reader *r)
{
    unsigned b;
    model_ent *e;
    if (!rd(r, &b))
        return 0;
    if (b & 1) {   /* release a handle, if any is out */
        for (size_t i = 0; m->handles && i < m->n; i++) {
            e = &m->e[(b / 2 + i) % m->n];
            if (e->present && e->handles > 0) {
                CHECK(atab_external_release(t, e->a) == ATAB_OK);
                e->handles--;
                m->handles--;
                model_unref(m, e);
                CHECK(atab_external_handles(t) == (size_t)m->handles);
                return 1;
            }
        }
        return 0;
    }
    if (m->present == m->zero)
        return 0;
    for (size_t i = 0; i < m->n; i++) {
        e = &m->e[(b / 2 + i) % m->n];
        if (e->present && e->count > 0) {
            CHECK(atab_external_acquire(t, e->a) == e->a);
            e->handles++;
            m->handles++;
            model_ref(m, e);
            CHECK(atab_external_handles(t) == (size_t)m->handles);
            return 0;
        }
    }
    return 0;
}

/* The default set's atom in slot b * 11 of its index, or NULL (an empty
** slot). */
static const atab_atom *default_static(unsigned b)
{
    const atab_static_set *set = &atab_static_default;
    uint32_t off = set->slots[(b * 11u) % set->n_slots];
    if (off == UINT32_MAX)
        return NULL;
    return (const atab_atom *)(const void *)((const char *)set->atoms + off);
}

/* One string of the default static set (picked by the next byte) through
** intern, lookup or UTF-16: the set's atom when the set is registered,
** never counted, else an ordinary dynamic atom. */
static void op_static(atab_table *t, model *m, reader *r)
{
    unsigned b, how;
    const atab_atom *sa;
    if (!rd(r, &b) || !rd(r, &how) || !(sa = default_static(b)))
        return;
    size_t len = atab_len(sa);
    const atab_atom *a;
    memcpy(kbuf, atab_chars(sa), len);
    long n16 = ref_u8_to_u16(kbuf, len, ubuf);
    switch (how % 3) {
    case 0: a = atab_intern(t, kbuf, len); break;
    case 1: a = atab_lookup(t, kbuf, len); break;
    default: a = n16 < 0 ? NULL : atab_intern_utf16(t, ubuf, (size_t)n16); break;
    }
    if (m->statics) {
        CHECK(a == sa && atab_is_static(a));
        CHECK(atab_ref(a) == a && atab_release(t, a) == ATAB_OK);   /* no-ops */
        CHECK(atab_external_acquire(t, a) == a && atab_external_release(t, a) == ATAB_OK);
        CHECK(a->atab__refcnt == 0);
        return;
    }
    if (how % 3 == 2 && n16 < 0)
        return;
    expect_atom(m, kbuf, len, a, how % 3 != 1);
}

/* ---- ASCII-lowercase interning ---- */

static char lbuf[KEY_MAX];
static uint16_t lbuf16[KEY_MAX * 2];

/* Uppercases the ASCII letters of a key where the next byte's bits say
** (bit i % 8 for position i): the lowercase interns' input. */
static void upcase(reader *r, char *s, size_t len)
{
    unsigned mask;
    if (!rd(r, &mask))
        return;
    for (size_t i = 0; i < len; i++)
        if ((mask >> (i % 8) & 1) && s[i] >= 'a' && s[i] <= 'z')
            s[i] = (char)(s[i] - 32);
}

static void upcase_u16(reader *r, uint16_t *u, size_t n)
{
    unsigned mask;
    if (!rd(r, &mask))
        return;
    for (size_t i = 0; i < n; i++)
        if ((mask >> (i % 8) & 1) && u[i] >= 'a' && u[i] <= 'z')
            u[i] = (uint16_t)(u[i] - 32);
}

/* A failure only the folded copy's block explains: a key with an
** uppercase letter past the stack buffer, on a table that may fail. */
static int fold_failed(const model *m, int folded, size_t size)
{
    atab_status err = atab_last_error();
    if (!folded || size <= 256 || !m->may_fail || (err != ATAB_ENOMEM && err != ATAB_ELIMIT))
        return 0;
    if (verbose())
        fprintf(stderr, "lower: failed, err %d (the folded copy's block, or the intern)\n", err);
    return 1;
}

/* atab_intern_lower: the atom atab_intern gives the key with 'A'..'Z'
** folded (every other byte as it is). Past 256 bytes with an uppercase
** letter the folding needs a block, so there even a hit may fail. */
static void op_intern_lower(atab_table *t, model *m, reader *r)
{
    size_t len = decode_key(r, kbuf);
    int folded = 0;
    upcase(r, kbuf, len);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)kbuf[i];
        folded |= c >= 'A' && c <= 'Z';
        lbuf[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    const atab_atom *a = atab_intern_lower(t, kbuf, len);
    if (!a && fold_failed(m, folded, len))
        return;   /* the table unchanged: check() */
    expect_atom(m, lbuf, len, a, 1);
}

/* atab_intern_lower_utf16: units 'A'..'Z' folded; the block past 128 units. */
static void op_intern_lower_u16(atab_table *t, model *m, reader *r)
{
    size_t n = decode_u16(r, ubuf);
    int folded = 0;
    upcase_u16(r, ubuf, n);
    for (size_t i = 0; i < n; i++) {
        folded |= ubuf[i] >= 'A' && ubuf[i] <= 'Z';
        lbuf16[i] = (uint16_t)(ubuf[i] >= 'A' && ubuf[i] <= 'Z' ? ubuf[i] + 32 : ubuf[i]);
    }
    const atab_atom *a = atab_intern_lower_utf16(t, ubuf, n);
    if (!a && fold_failed(m, folded, 2 * n))
        return;
    expect_u16(m, lbuf16, n, a, 1);
}

/* ---- releases several at once, walks ---- */

#define LIST_MAX 8

/* atab_release_all on a list of up to LIST_MAX entries: plain references
** (an atom may be there more than once), NULL entries, static atoms, and,
** first, at times an atom at count 0: a release nobody holds, refused
** (ATAB_EREFS, misuse counted) while the others go ahead. The model
** releases each. */
static void op_release_list(atab_table *t, model *m, reader *r)
{
    const atab_atom *v[LIST_MAX];
    unsigned b, x;
    size_t k = 0;
    int refused = 0;
    model_ent *e;
    if (!rd(r, &b))
        return;
    for (unsigned i = 0; i < b % (LIST_MAX + 1) && rd(r, &x); i++) {
        if (x % 8 == 0) {
            v[k++] = NULL;
        } else if (x % 8 == 1) {
            v[k++] = default_static(x);   /* NULL for an empty slot */
        } else if (x % 8 == 2 && k == 0) {
            for (size_t j = 0; m->zero && j < m->n && !refused; j++) {
                e = &m->e[(x + j) % m->n];
                if (e->present && e->count == 0)
                    v[k++] = e->a, refused = 1;
            }
        } else if ((e = first_held(m, x)) != NULL) {
            v[k++] = e->a;
            model_unref(m, e);   /* the model is ahead until the call */
        }
    }
    int rc = atab_release_all(t, k ? v : NULL, k);
    CHECK(rc == (refused ? ATAB_EREFS : ATAB_OK));
    if (refused) {
        CHECK(atab_last_error() == ATAB_EREFS);
        m->misuse++;
    }
    if (!m->exact_sweeps)
        model_resync(t, m);
}

/* OP_FOREACH's walk: its callback checks each atom against the model
** and, by mode, stops the walk, takes references or releases them. */
enum { WALK_ALL, WALK_STOP, WALK_REF, WALK_RELEASE };
#define WALK_STOPPED 12345   /* what the callback returns to stop */
#define WALK_MAX 16   /* walks in one input: each visits every atom */

typedef struct walk {
    atab_table *t;
    model *m;
    unsigned mode;
    size_t n, stop_at;   /* atoms visited; WALK_STOP: stop after so many */
} walk;

static int walk_fn(void *ud, const atab_atom *a, uint32_t count)
{
    walk *w = ud;
    model *m = w->m;
    CHECK(!atab_is_static(a));
    model_ent *e = model_by_atom(m, a);
    CHECK(e != NULL && e->seen != m->check_gen);   /* a present atom, once */
    e->seen = m->check_gen;
    CHECK(atab_len(a) == e->len && memcmp(atab_chars(a), ent_s(m, e), e->len) == 0);
    CHECK(count == (uint32_t)e->count);   /* exact: the caches were flushed */
    w->n++;
    if (w->mode == WALK_REF && w->n % 2) {
        CHECK(atab_ref(a) == a);
        model_ref(m, e);
    } else if (w->mode == WALK_RELEASE && e->count > e->handles) {
        CHECK(atab_release(w->t, a) == ATAB_OK);   /* may sweep, in a sweeping table */
        model_unref(m, e);
    }
    return w->mode == WALK_STOP && w->n == w->stop_at ? WALK_STOPPED : 0;
}

static void count_plain_zero(void *ud, const atab_atom *a)
{
    if (!atab_is_static(a) && (__atomic_load_n(atab__count_word(a), __ATOMIC_RELAXED) & ~ATAB__REF_SPARED) == 0)
        ++*(size_t *)ud;
}

/* Every unused atom is on a queue or counted towards a sweep (t->unused,
** and the zeros a record gathers before adding them): else no sweep but
** atab_gc would free it. */
static void check_none_unswept(atab_table *t)
{
    size_t plain = 0, counted = t->unused;
    for (atab__rec *r = t->recs; r; r = r->next)
        counted += (size_t)r->zeros;
    atab__table_visit_shards(t, NULL, count_plain_zero, &plain);
    CHECK(plain <= counted);
}

/* atab_foreach visits every atom the model has present, each once, with
** the model's count; a walk may come short by the atoms at count 0 that
** a sweep took during it, by the shards after one whose block could not
** be had (a table that may fail), or by where the callback stopped it. */
static void op_foreach(atab_table *t, model *m, reader *r)
{
    unsigned b;
    if (!rd(r, &b) || m->walks++ >= WALK_MAX)
        return;
    walk w = {t, m, b & 3, 0, 1 + (b >> 2)};
    int stopped = 0;
    m->check_gen++;
    CHECK(atab_foreach(t, NULL, NULL) == ATAB_EINVAL);
    int rc = atab_foreach(t, walk_fn, &w);
    if (rc == WALK_STOPPED) {
        CHECK(w.mode == WALK_STOP && w.n == w.stop_at);
        stopped = 1;
    } else if (rc != ATAB_OK) {
        CHECK(m->may_fail && (rc == ATAB_ENOMEM || rc == ATAB_ELIMIT));
        CHECK(atab_last_error() == rc);
        stopped = 1;
    }
    for (size_t i = 0; i < m->n && !stopped; i++) {   /* none left out */
        model_ent *e = &m->e[i];
        CHECK(!e->present || e->seen == m->check_gen || (e->count == 0 && !m->exact_sweeps));
    }
    check_none_unswept(t);   /* the walk's references orphaned none */
    if (!m->exact_sweeps)
        model_resync(t, m);
    m->touched = NULL;
}

/* ---- content hashes ---- */

/* An atom's content hash (atab_hash_content) is its bytes' (atab_hash_bytes)
** under any seed, a static atom's too, and the equal string's atom in a
** second table with the same options has the same one. */
static void op_hash(model *m, reader *r)
{
    static const uint64_t seeds[4] = {0, 1, 0x9e3779b97f4a7c15u, UINT64_MAX};
    unsigned b;
    model_ent *e = pick_any(m, r);
    const atab_atom *a, *sa;
    if (!e || !rd(r, &b))
        return;
    uint64_t seed = seeds[b % 4], h = atab_hash_bytes(seed, ent_s(m, e), e->len);
    CHECK(atab_hash_content(NULL, seed) == 0);
    CHECK(atab_hash_bytes(seed, NULL, 0) == atab_hash_bytes(seed, "", 0));
    if (e->present)
        CHECK(atab_hash_content(e->a, seed) == h);
    if ((sa = default_static(b / 4)) != NULL)
        CHECK(atab_hash_content(sa, seed) == atab_hash_bytes(seed, atab_chars(sa), atab_len(sa)));
    if (!m->twin)
        CHECK((m->twin = atab_table_new(&m->twin_opts)) != NULL);
    CHECK((a = atab_intern(m->twin, ent_s(m, e), e->len)) != NULL);
    CHECK(atab_hash_content(a, seed) == h);
    CHECK(atab_release(m->twin, a) == ATAB_OK);
}

/* OP_BULK's keys in one input. Enough for every shard's array to be
** rebuilt several times (64 shards); more only makes the input slower: a
** sweep visits every slot, and with a small sweep threshold one can run
** at every release, so that table's size counts twice. */
#define BULK_MAX 2048
/* OP_REPORTs that run in one input: each visits every atom (twice for the
** tree and JSON forms), as a full check does; more only slow the input. */
#define REPORT_MAX 16
#define BULK_MAX_SWEEPING 256

static unsigned bulk_max(const model *m)
{
    return m->exact_sweeps ? BULK_MAX : BULK_MAX_SWEEPING;
}

/* Interns 4 * (b % 16) generated keys at once (growth); with bit 7 of b,
** only keys that fall in shard 0 (that shard's growth, and past 128 atoms
** there, atab_foreach's block for it). */
static void op_bulk(atab_table *t, model *m, reader *r)
{
    char key[32];
    unsigned b, n = rd(r, &b) ? 4 * (b % 16) : 0;
    for (unsigned i = 0; i < n && m->bulk_made < bulk_max(m); m->bulk_next++) {
        int l = snprintf(key, sizeof key, "bulk-%u", m->bulk_next);
        if ((b & 128) && atab__h_shard(atab__hash_bytes(t->seed, key, (size_t)l)) != 0)
            continue;
        expect_atom(m, key, (size_t)l, atab_intern(t, key, (size_t)l), 1);
        i++, m->bulk_made++;
    }
    m->touched = NULL;
}

/* Runs one operation; returns 1 when it released a reference. */
static int step(atab_table *t, model *m, reader *r, unsigned op)
{
    model_ent *e;
    size_t len;
    unsigned b;
    switch (op % N_OPS) {
    case OP_INTERN:
    case OP_LOOKUP:
        len = decode_key(r, kbuf);
        expect_atom(m, kbuf, len,
                    op % N_OPS == OP_INTERN ? atab_intern(t, kbuf, len)
                                            : atab_lookup(t, kbuf, len),
                    op % N_OPS == OP_INTERN);
        return 0;
    case OP_INTERN_OLD:   /* hits, revivals, and re-interning swept strings */
        if (!(e = pick_any(m, r)))
            return 0;
        memcpy(kbuf, ent_s(m, e), e->len);
        expect_atom(m, kbuf, e->len, atab_intern(t, kbuf, e->len), 1);
        return 0;
    case OP_INTERN_U16:
    case OP_LOOKUP_U16:
        len = decode_u16(r, ubuf);
        op_intern_u16(t, m, ubuf, len, op % N_OPS == OP_INTERN_U16);
        return 0;
    case OP_INTERN_U16_OLD: {   /* a UTF-8 atom reached through UTF-16 */
        long n16;
        if (!(e = pick_any(m, r)) || (n16 = ref_u8_to_u16(ent_s(m, e), e->len, ubuf)) < 0)
            return 0;
        op_intern_u16(t, m, ubuf, (size_t)n16, 1);
        return 0;
    }
    case OP_REF:
        if ((e = pick_held(m, r)) != NULL) {
            CHECK(atab_ref(e->a) == e->a);
            model_ref(m, e);
        }
        return 0;
    case OP_RELEASE:
        if ((e = pick_held(m, r)) != NULL) {
            CHECK(atab_release(t, e->a) == ATAB_OK);
            model_unref(m, e);
            return 1;
        }
        return 0;
    case OP_RELEASE_ALL:   /* drop every reference to one atom */
        if ((e = pick_held(m, r)) != NULL) {
            while (e->count > e->handles + 1) {   /* a sweep may run at any of them */
                CHECK(atab_release(t, e->a) == ATAB_OK);
                model_unref(m, e);
                check(t, m, 1, 0);
            }
            CHECK(atab_release(t, e->a) == ATAB_OK);
            model_unref(m, e);
            return 1;
        }
        return 0;
    case OP_GC:
        CHECK(atab_gc(t) == m->zero);
        model_swept(m);
        return 0;
    case OP_REPORT:
        if (!rd(r, &b))
            b = 0;
        if (m->reports++ < REPORT_MAX)
            op_report(t, m, b);
        return 0;
    case OP_BULK:
        op_bulk(t, m, r);
        return 0;
    case OP_EXTERNAL:
        return op_external(t, m, r);
    case OP_STATIC:
        op_static(t, m, r);
        return 0;
    case OP_INTERN_LOWER:
        op_intern_lower(t, m, r);
        return 0;
    case OP_INTERN_LOWER_U16:
        op_intern_lower_u16(t, m, r);
        return 0;
    case OP_RELEASE_LIST:
        op_release_list(t, m, r);
        return 0;
    case OP_FOREACH:
        op_foreach(t, m, r);
        return 0;
    case OP_HASH:
        op_hash(m, r);
        return 0;
    default:
        return 0;
    }
}

/* Drops every reference the model holds, checking after each release (a
** sweep may run at any one of them). */
static void release_everything(atab_table *t, model *m, int keep_handles)
{
    for (size_t i = 0; i < m->n; i++) {
        model_ent *e = &m->e[i];
        while (!keep_handles && e->present && e->handles > 0) {
            CHECK(atab_external_release(t, e->a) == ATAB_OK);
            e->handles--;
            m->handles--;
            model_unref(m, e);
            check(t, m, 1, 0);
        }
        while (e->present && e->count > e->handles) {
            CHECK(atab_release(t, e->a) == ATAB_OK);
            model_unref(m, e);
            check(t, m, 1, 0);
        }
    }
}

/* Frees the table with handles still out (cfg bit 64): the table defers
** its free, and the atoms the handles hold stay valid, until the last
** handle is released; then nothing may be left. */
static void free_with_handles(atab_table *t, model *m, fz_alloc *al)
{
    atab_table_free(t);
    CHECK(al->live > 0);   /* deferred: the table and the held atoms */
    for (size_t i = 0; i < m->n; i++) {
        model_ent *e = &m->e[i];
        for (; e->present && e->handles > 0; e->handles--, m->handles--) {
            CHECK(atab_len(e->a) == e->len && memcmp(atab_chars(e->a), ent_s(m, e), e->len) == 0);
            CHECK(atab_external_release(t, e->a) == ATAB_OK);
        }
    }
}

/* Is a full check due? Every FULL_EVERY steps and table calls (interns,
** refs, releases) while the table is small; past FULL_EVERY * FULL_RATIO
** atoms, every present / FULL_RATIO, so that full checks (two visits of
** every atom: atab_get_stats and check_all) cost at most 2 * FULL_RATIO
** atom visits a call, whatever the table's size. Measured: FULL_RATIO 8
** instead of 4 costs 9% more CPU (-seed=7 -runs=60000 on a 10-minute
** corpus); FULL_EVERY 64 instead of 32 saves only 2%. */
#define FULL_EVERY 32
#define FULL_RATIO 4

static int full_due(const model *m)
{
    return m->work >= FULL_EVERY && m->work * FULL_RATIO >= m->present;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    unsigned cfg = 0, x = 0, op;
    fz_alloc al = {0};
    static model m;   /* its storage serves every input */
    model_reset(&m, &al);
    atab_allocator hooks = {fz_malloc, fz_free, fz_usable, &al};
    atab_options o;
    rd(&r, &cfg);
    memset(&o, 0, sizeof o);
    o.flags = ATAB_FIXED_SEED | ATAB_NO_DEFAULT_STATICS;
    if (cfg & 32) {   /* the default static set: its strings are static atoms */
        o.flags &= ~ATAB_NO_DEFAULT_STATICS;
        m.statics = 1;
    }
    o.seed = cfg & 0x80 ? 0 : 0x9e3779b97f4a7c15u;
    o.allocator = &hooks;
    m.exact_sweeps = !(cfg & 1);
    o.sweep_threshold = (cfg & 1) ? 1 + (cfg >> 1) % 8 : SIZE_MAX;
    if (cfg & 2) {   /* injected failures: once, or from then on */
        rd(&r, &x);
        al.fail_at = 2 + (long)x;
        al.fail_after = (cfg & 4) != 0;
        m.may_fail = 1;
    }
    if (cfg & 8) {   /* a memory limit, a few kilobytes past the table */
        rd(&r, &x);
        o.memory_limit = ATAB__TABLE_ALLOC + 2048 + 256 * (size_t)x;
        m.may_fail = 1;
    }
    if (cfg & 16)
        o.initial_capacity = 100;
    m.twin_opts = o;
    m.twin_opts.allocator = NULL;
    m.twin_opts.memory_limit = 0;
    atab_table *t = atab_table_new(&o);
    CHECK(t != NULL);   /* failures start at the 2nd allocation */
    while (rd(&r, &op)) {
        int rc = step(t, &m, &r, op);
        m.work++;
        check(t, &m, rc == 1, full_due(&m));
    }
    check(t, &m, 0, 1);
    CHECK(atab_count(t) == m.present);   /* the public count, with its locks */
    int keep = (cfg & 64) && m.handles > 0;
    release_everything(t, &m, keep);
    CHECK(atab_gc(t) == m.zero);
    model_swept(&m);
    check(t, &m, 0, 1);
    if (keep) {
        free_with_handles(t, &m, &al);
    } else {
        CHECK(atab_count(t) == 0);
        atab_table_free(t);
    }
    CHECK(al.live == 0 && al.bytes == 0);   /* nothing leaked */
    atab_table_free(m.twin);
    return 0;
}

#ifdef FUZZ_STANDALONE
/* ---- the replay driver: seed files, then generated inputs ---- */
#include "replay.h"

int main(int argc, char **argv)
{
    long files = 0, gen = 0;
    const char *env = getenv("FUZZ_REPLAY_RANDOM");
    long n_random = env ? atol(env) : 300;
    uint64_t x = 0x243f6a8885a308d3u;
    static uint8_t buf[2048], file[1 << 16];
    for (int i = 1; i < argc; i++)
        files += replay_path("fuzz_table", argv[i], file, sizeof file);
    for (gen = 0; gen < n_random; gen++) {   /* xorshift inputs, fixed seed */
        size_t n = 1 + (size_t)(gen * 7 % (long)sizeof buf);
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[i] = (uint8_t)(x >> 24);
        }
        LLVMFuzzerTestOneInput(buf, n);
    }
    printf("fuzz_table: %ld corpus files and %ld generated inputs checked "
           "against the model\n", files, gen);
    return 0;
}
#endif
