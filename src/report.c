/* SPDX-License-Identifier: MIT */
/*
** report.c - the memory reporter: what a table holds, split the way
** Firefox's about:memory shows it; as entries for a host, a text tree, JSON.
**
** Measuring walks the table one shard at a time, holding only that shard's
** lock (atab__table_visit_shards), never every lock at once: a report holds
** another thread up for at most one shard's pass (1/64 of the table, one
** usable-size query per atom in it). Nothing here allocates: the entries
** are a fixed list, the tree lives in a small array on the stack, and text
** goes out through the caller's writer in pieces of at most a line or so.
*/
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "atab_int.h"

/* ------------------------------------------------------------------ */
/* Measuring                                                           */
/* ------------------------------------------------------------------ */

typedef struct census {
    const atab_table *t;
    size_t table_req, table_use;   /* table object, slot arrays and pools, records,
                                      queues, host caches, chunk directory,
                                      list of static sets */
    size_t atom_req, atom_use;     /* dynamic atoms */
    size_t recycled;               /* dead atoms' carved blocks kept for new ones */
    size_t rounding;               /* carved atoms' blocks beyond their requests */
    size_t carved;                 /* carved blocks: atoms' and kept ones */
    size_t chunk_req, chunk_use;   /* the chunks atoms are carved from */
    size_t atoms, unused;          /* dynamic atoms; those with count 0 */
    size_t statics, static_bytes;  /* the static sets */
    size_t handles;                /* outstanding external handles */
    size_t overhead;               /* the allocator's chunk headers, all blocks */
    int exact;                     /* every usable size was known */
    int overhead_known;            /* and every block's chunk header */
} census;

/* Is u an allocator's answer for the usable size of req bytes: no less,
** and not past twice them and 64 KB, which no allocator rounds to (and
** whose sums could wrap)? */
static int plausible(size_t u, size_t req)
{
    return u >= req && u - req <= req + 65536;
}

/* The usable size of a block, its chunk header added to the census's
** overhead. When the allocator cannot tell (no hook, or an answer that is
** not plausible) it is the requested size and the census is marked
** inexact: slop is then unknown, never guessed; so is a header the
** allocator does not tell (atab__overhead). */
static size_t usable(census *c, const void *p, size_t req)
{
    size_t u = atab__usable(c->t, p, req);
    if (!plausible(u, req)) {
        c->exact = c->overhead_known = 0;
        return req;
    }
    size_t h = atab__overhead(c->t, u);
    if (h == SIZE_MAX)
        c->overhead_known = 0;
    else
        c->overhead += h;
    return u;
}

static void count_array(void *ud, const void *slots, size_t bytes)
{
    census *c = ud;
    c->table_req += bytes;
    c->table_use += usable(c, slots, bytes);
}

/* Runs under the atom's shard lock: the atom cannot be swept meanwhile. A
** carved atom's usable size is its block (chunk.h); its chunk is counted
** with the chunks. */
static void count_atom(void *ud, const atab_atom *a)
{
    census *c = ud;
    if (atab_is_static(a))
        return;   /* a cached static atom costs only its slot */
    size_t req = atab__atom_size(a);
    c->atoms++;
    c->unused += atab__count(a) == 0;
    c->atom_req += req;
    if (atab__carved(atab_len(a))) {
        size_t b = atab__block_bytes(atab_len(a));
        c->rounding += b - req;
        c->carved += b;
        c->atom_use += b;
    } else {
        c->atom_use += usable(c, a, req);
    }
}

/* A carved block a thread keeps for its next new atom (its record held). */
static void count_recycled(void *ud, const void *block, size_t bytes)
{
    census *c = ud;
    (void)block;
    c->recycled += bytes;
    c->carved += bytes;
}

/* A chunk, or the directory of chunks or a pool of slot arrays (both
** counted with the table). */
static void count_chunk(void *ud, const void *block, size_t bytes, int is_chunk)
{
    census *c = ud;
    if (!is_chunk) {
        count_array(ud, block, bytes);
        return;
    }
    c->chunk_req += bytes;
    c->chunk_use += usable(c, block, bytes);
}

/* The static sets: their atoms and read-only bytes (atoms + index, as the
** generator counted them), and the table's list of sets when it is on the
** heap (counted with the table). A string in two sets counts twice. */
static void count_statics(census *c)
{
    const atab_table *t = c->t;
    size_t bytes;
    const void *p = atab__static_heap(t, &bytes);
    c->statics = 0;
    c->static_bytes = 0;
    for (size_t i = 0; i < t->n_sets; i++) {
        c->statics += t->sets[i]->n;
        c->static_bytes += t->sets[i]->bytes;
    }
    if (p) {
        c->table_req += bytes;
        c->table_use += usable(c, p, bytes);
    }
}

static void take_census(atab_table *t, census *c)
{
    memset(c, 0, sizeof *c);
    c->t = t;
    c->exact = c->overhead_known = t->alloc.usable_size != NULL;
    c->table_req = ATAB__TABLE_ALLOC;   /* the table object, t->raw */
    c->table_use = usable(c, t->raw, ATAB__TABLE_ALLOC);
    atab__flush_counts(t, 0, count_recycled, c);   /* counts exact: no spares left in caches */
    atab__threads_visit_memory(t, count_array, c);
    atab__external_visit_memory(t, count_array, c);   /* the host caches */
    atab__table_visit_shards(t, count_array, count_atom, c);
    atab__chunks_visit(t, count_chunk, c);
    count_statics(c);
    c->handles = atab_external_handles(t);
}

/* ------------------------------------------------------------------ */
/* Entries                                                             */
/* ------------------------------------------------------------------ */

#define MAX_TABLE_ENTRIES 11
#define MAX_ENTRIES (MAX_TABLE_ENTRIES + ATAB_REPORT_EXTRA_MAX)
#define PATH_CAP (ATAB_REPORT_PREFIX_MAX + 48)   /* prefix + our longest path */

typedef struct entry {
    const char *path;   /* buf, or a host's extra entry's path */
    int kind, units;
    int64_t amount;
    const char *desc;
    char buf[PATH_CAP];
} entry;

/* The report's list: the table's entries, then the host's extra ones. */
typedef struct entries {
    entry e[MAX_ENTRIES];
    size_t n;
    int exact;   /* every usable size was known */
} entries;

#define HEAP_OVERHEAD "explicit/heap-overhead/"

/* Writes the table's path `path` into e->buf with the host's prefix:
** explicit/REST becomes explicit/PREFIX/REST (explicit/heap-overhead/REST,
** explicit/heap-overhead/PREFIX/REST: the allocator's costs stay where
** about:memory's readers sum them), a single NAME becomes PREFIX-NAME with
** each '/' of the prefix written as '-' (so it stays a single name:
** about:memory wants one unit per tree). */
static void prefixed(entry *e, const char *path, const char *prefix)
{
    size_t k = 0, plen = prefix ? strlen(prefix) : 0;
    if (plen == 0) {
        e->path = path;
        return;
    }
    if (strncmp(path, "explicit/", 9) == 0) {
        int root = strncmp(path, HEAP_OVERHEAD, strlen(HEAP_OVERHEAD)) == 0
                   ? (int)strlen(HEAP_OVERHEAD) : 9;
        snprintf(e->buf, sizeof e->buf, "%.*s%s/%s", root, path, prefix, path + root);
    } else {
        for (; k < plen; k++)
            e->buf[k] = prefix[k] == '/' ? '-' : prefix[k];
        snprintf(e->buf + k, sizeof e->buf - k, "-%s", path);
    }
    e->path = e->buf;
}

static void add(entries *l, const char *prefix, const char *path, int kind,
                int units, size_t amount, const char *desc)
{
    entry *e = &l->e[l->n++];
    prefixed(e, path, prefix);
    e->kind = kind;
    e->units = units;
    e->amount = (int64_t)amount;
    e->desc = desc;
}

/* Adds the table's entries from a census (the list documented in
** atomtab.h). */
static void make_entries(const census *c, const char *prefix, entries *l)
{
    add(l, prefix, "explicit/atoms/table", ATAB_KIND_HEAP, ATAB_UNITS_BYTES,
        c->exact ? c->table_use : c->table_req, c->exact
        ? "The atom table: the table object, its shards' slot arrays (the pools "
          "of small ones whole), its per-thread reference caches and its host "
          "string cache, at the allocator's usable size."
        : "The atom table: the table object, its shards' slot arrays (the pools "
          "of small ones whole), its per-thread reference caches and its host "
          "string cache, as requested (the allocator does not tell usable sizes).");
    add(l, prefix, "explicit/atoms/dynamic/atom-objects", ATAB_KIND_HEAP,
        ATAB_UNITS_BYTES, c->atom_req,
        "Dynamic atoms as requested from the allocator: an 8-byte "
        "header, the characters and a NUL each.");
    if (c->exact)
        add(l, prefix, "explicit/atoms/dynamic/slop", ATAB_KIND_HEAP, ATAB_UNITS_BYTES,
            c->atom_use - c->atom_req + c->chunk_use - c->chunk_req,
            "Bytes reserved for dynamic atoms beyond their requests: the rounding of "
            "blocks carved from chunks to 4 bytes, and the allocator's usable size "
            "minus the request of atoms allocated alone and of the chunks.");
    else if (c->rounding)
        add(l, prefix, "explicit/atoms/dynamic/slop", ATAB_KIND_HEAP, ATAB_UNITS_BYTES,
            c->rounding,
            "Bytes reserved for dynamic atoms beyond their requests: the rounding of "
            "blocks carved from chunks to 4 bytes (the allocator's own slop is "
            "unknown).");
    if (c->recycled)
        add(l, prefix, "explicit/atoms/dynamic/recycled", ATAB_KIND_HEAP, ATAB_UNITS_BYTES,
            c->recycled,
            "Carved blocks of atoms a thread's sweep freed, which the thread keeps "
            "for its next new atoms of the same size class (until its next sweep, "
            "or atab_gc).");
    if (c->chunk_req)
        add(l, prefix, "explicit/atoms/dynamic/free", ATAB_KIND_HEAP, ATAB_UNITS_BYTES,
            c->chunk_req > c->carved ? c->chunk_req - c->carved : 0,
            "Bytes of the chunks small atoms are carved from that hold no atom: "
            "each chunk's 8-byte header, blocks freed back to a chunk that still "
            "holds others, and the chunks' uncarved tails.");
    if (c->exact && c->overhead_known)
        add(l, prefix, HEAP_OVERHEAD "atoms", ATAB_KIND_HEAP, ATAB_UNITS_BYTES,
            c->overhead,
            "The C library malloc's own bytes for the table's blocks (atoms "
            "allocated alone, chunks, slot arrays, caches, the table object): each "
            "block's chunk header, which glibc's malloc counts as in use "
            "(mallinfo2) but leaves out of the block's usable size.");
    add(l, prefix, "atoms-static-data", ATAB_KIND_NONHEAP, ATAB_UNITS_BYTES,
        c->static_bytes,
        "The static atom sets in use, in read-only data (part of "
        "the program, not the heap).");
    add(l, prefix, "atoms-dynamic", ATAB_KIND_OTHER, ATAB_UNITS_COUNT,
        c->atoms, "Dynamic atoms in the table, unused ones included.");
    add(l, prefix, "atoms-dynamic-unused", ATAB_KIND_OTHER, ATAB_UNITS_COUNT,
        c->unused,
        "Dynamic atoms nobody holds, kept until the next sweep "
        "(interning one again revives it).");
    add(l, prefix, "atoms-static", ATAB_KIND_OTHER, ATAB_UNITS_COUNT,
        c->statics, "Static atoms in the table's static sets.");
    add(l, prefix, "atoms-external-handles", ATAB_KIND_OTHER, ATAB_UNITS_COUNT,
        c->handles,
        "External handles (host strings sharing an atom's "
        "characters) not yet released.");
}

/* A valid prefix: none, or '/'-separated non-empty names within
** ATAB_REPORT_PREFIX_MAX bytes. */
static int prefix_ok(const char *p)
{
    size_t len = p ? strlen(p) : 0;
    if (len == 0)
        return 1;
    if (len > ATAB_REPORT_PREFIX_MAX || p[0] == '/' || p[len - 1] == '/')
        return 0;
    return strstr(p, "//") == NULL;
}

/* Non-zero when path a is above path b or b above a ("x/y" is above
** "x/y/z", not above "x/yz"). */
static int nests(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > lb)
        return nests(b, a);
    return la < lb && strncmp(a, b, la) == 0 && b[la] == '/';
}

/* The table's paths and units (make_entries): an extra entry may share
** one in the same units (they are summed) but not be above or below one. */
static const struct {
    const char *path;
    int units;
} table_paths[] = {
    {"explicit/atoms/table", ATAB_UNITS_BYTES},
    {"explicit/atoms/dynamic/atom-objects", ATAB_UNITS_BYTES},
    {"explicit/atoms/dynamic/slop", ATAB_UNITS_BYTES},
    {"explicit/atoms/dynamic/recycled", ATAB_UNITS_BYTES},
    {"explicit/atoms/dynamic/free", ATAB_UNITS_BYTES},
    {HEAP_OVERHEAD "atoms", ATAB_UNITS_BYTES},
    {"atoms-static-data", ATAB_UNITS_BYTES},
    {"atoms-dynamic", ATAB_UNITS_COUNT},
    {"atoms-dynamic-unused", ATAB_UNITS_COUNT},
    {"atoms-static", ATAB_UNITS_COUNT},
    {"atoms-external-handles", ATAB_UNITS_COUNT}};

/* Does extra entry x clash with path p of units u (the table's under the
** prefix, or an earlier extra one's)? It does when it lies above or below
** p: a tree node would then be a leaf and an inner node (about:memory
** refuses that, and the tree would lose the leaf's amount); and when it
** equals p in other units: equal paths are summed, and a sum of bytes and
** a count has no units. */
static int clashes(const atab_report_entry *x, const char *p, int u)
{
    return nests(x->path, p) || (strcmp(x->path, p) == 0 && x->units != u);
}

/* Does extra entry i clash with another entry (clashes)? */
static int clashes_any(const atab_report_options *o, size_t i)
{
    const atab_report_entry *x = &o->extra[i];
    entry e;
    for (size_t j = 0; j < sizeof table_paths / sizeof table_paths[0]; j++) {
        prefixed(&e, table_paths[j].path, o->prefix);
        if (clashes(x, e.path, table_paths[j].units))
            return 1;
    }
    for (size_t j = 0; j < i; j++)
        if (clashes(x, o->extra[j].path, o->extra[j].units))
            return 1;
    return 0;
}

/* Valid options: a good prefix, at most ATAB_REPORT_EXTRA_MAX extra
** entries, each with a path, an ATAB_KIND_* and an ATAB_UNITS_*, explicit/
** ones HEAP or NONHEAP in bytes, neither above nor below another entry's
** path (about:memory's rules: one unit per tree, and it refuses a file with
** an explicit/ report of another kind, or one that is an inner node). NULL
** options are none. */
static int options_ok(const atab_report_options *o)
{
    if (!o)
        return 1;
    if (!prefix_ok(o->prefix) || o->n_extra > ATAB_REPORT_EXTRA_MAX ||
        (o->n_extra && !o->extra))
        return 0;
    for (size_t i = 0; i < o->n_extra; i++) {
        const atab_report_entry *x = &o->extra[i];
        int in_explicit = x->path && strncmp(x->path, "explicit/", 9) == 0;
        if (!x->path || !x->path[0] || x->amount > ATAB_REPORT_AMOUNT_MAX ||
            x->amount < -ATAB_REPORT_AMOUNT_MAX || x->kind < ATAB_KIND_NONHEAP ||
            x->kind > ATAB_KIND_OTHER ||
            (x->units != ATAB_UNITS_BYTES && x->units != ATAB_UNITS_COUNT) ||
            (in_explicit && (x->units != ATAB_UNITS_BYTES || x->kind == ATAB_KIND_OTHER)) ||
            clashes_any(o, i))
            return 0;
    }
    return 1;
}

/* Measures t and fills l: the table's entries, then the extra ones as
** given. Options must have passed options_ok. */
static void collect(atab_table *t, const atab_report_options *o, entries *l)
{
    census c;
    take_census(t, &c);
    l->n = 0;
    l->exact = c.exact;
    make_entries(&c, o ? o->prefix : NULL, l);
    for (size_t i = 0; o && i < o->n_extra; i++) {
        const atab_report_entry *x = &o->extra[i];
        entry *e = &l->e[l->n++];
        e->path = x->path;
        e->kind = x->kind;
        e->units = x->units;
        e->amount = x->amount;
        e->desc = x->description ? x->description : "";
    }
}

/* Checks the common arguments; sets the error and returns it on failure. */
static int check_args(const atab_table *t, int have_fn,
                      const atab_report_options *o)
{
    if (!t || !have_fn || !options_ok(o)) {
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    return ATAB_OK;
}

int atab_report_ex(atab_table *t, const atab_report_options *o,
                   atab_report_fn fn, void *ud)
{
    entries l;
    int rc = check_args(t, fn != NULL, o);
    if (rc != ATAB_OK)
        return rc;
    collect(t, o, &l);
    for (size_t i = 0; i < l.n; i++) {
        const entry *e = &l.e[i];
        rc = fn(ud, e->path, e->kind, e->units, e->amount, e->desc);
        if (rc != 0)
            return rc;
    }
    return ATAB_OK;
}

int atab_report(atab_table *t, atab_report_fn fn, void *ud)
{
    return atab_report_ex(t, NULL, fn, ud);
}

int atab_report_has_usable_size(const atab_table *t)
{
    if (!t || !t->alloc.usable_size)
        return 0;
    return plausible(atab__usable(t, t->raw, ATAB__TABLE_ALLOC), ATAB__TABLE_ALLOC);
}

/* ------------------------------------------------------------------ */
/* Output through the caller's writer                                  */
/* ------------------------------------------------------------------ */

typedef struct out {
    atab_write_fn w;
    void *ud;
    int rc;          /* the writer's first non-zero return; then silent */
    size_t n;
    char buf[512];
} out;

static void flush(out *o)
{
    if (o->n && !o->rc)
        o->rc = o->w(o->ud, o->buf, o->n);
    o->n = 0;
}

/* Appends a piece; a piece never straddles two writes unless it is
** longer than the buffer (then it goes out alone). */
static void put(out *o, const char *s, size_t len)
{
    if (o->n + len > sizeof o->buf)
        flush(o);
    if (len > sizeof o->buf) {
        if (!o->rc)
            o->rc = o->w(o->ud, s, len);
        return;
    }
    memcpy(o->buf + o->n, s, len);
    o->n += len;
}

static void puts_(out *o, const char *s)
{
    put(o, s, strlen(s));
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid
** (overlong forms, surrogates and code points past U+10FFFF included). */
static size_t utf8_seq(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    if (c < 0xc2 || c > 0xf4)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) ||
        (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
        return 0;
    return n;
}

/* Is the valid n-byte UTF-8 sequence at p a control character (C1,
** U+0080-U+009F) or a line or paragraph separator (U+2028, U+2029)? */
static int breaks_text(const unsigned char *p, size_t n)
{
    return (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) ||
           (n == 3 && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9));
}

/* Writes s[0..len) as the tree's text: control characters (C0 and C1),
** line and paragraph separators and invalid UTF-8 become U+FFFD, so that a
** host's path can neither break a line nor make the dump something other
** than UTF-8. */
static void put_text(out *o, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        size_t run = 0;   /* printable ASCII goes out in one piece */
        while (p + run < end && p[run] >= 0x20 && p[run] < 0x7f)
            run++;
        put(o, (const char *)p, run);
        p += run;
        if (p == end)
            break;
        size_t n = *p >= 0x80 ? utf8_seq(p) : 0;
        if (n > (size_t)(end - p))
            n = 0;
        int keep = n && !breaks_text(p, n);
        put(o, keep ? (const char *)p : "\xef\xbf\xbd", keep ? n : 3);
        p += n ? n : 1;   /* a separator or C1 control: one U+FFFD for its bytes */
    }
}

static void repeat(out *o, const char *s, size_t times)
{
    while (times--)
        puts_(o, s);
}

/* Formats like about:memory: 1,234,567. Returns the length written. */
static size_t format_int(char *buf, int64_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%" PRId64, v), lead = tmp[0] == '-';
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        if (i > lead && (n - i) % 3 == 0)   /* n - i digits still to come */
            buf[k++] = ',';
        buf[k++] = tmp[i];
    }
    buf[k] = '\0';
    return k;
}

/* The amount as shown: "131,072 B" for bytes, "9,374" for counts. */
static size_t format_amount(char *buf, int64_t v, int units)
{
    size_t k = format_int(buf, v);
    if (units == ATAB_UNITS_BYTES) {
        memcpy(buf + k, " B", 3);
        k += 2;
    }
    return k;
}

/* ------------------------------------------------------------------ */
/* The text tree                                                       */
/* ------------------------------------------------------------------ */

/* Room for the table's entries under the longest prefix a prefix's rules
** allow (its names appear twice: explicit/PREFIX/atoms/... and
** explicit/heap-overhead/PREFIX/atoms) and heap-unclassified, so that no
** good prefix is refused, then EXTRA_NODES more for the names of the
** host's extra entries (atomtab.h). No node has more kids than the table's
** most (4) and every extra entry's: MAX_KIDS is never the limit. */
#define PREFIX_NAMES_MAX ((ATAB_REPORT_PREFIX_MAX + 1) / 2)
#define TABLE_NODES (11 + 2 * PREFIX_NAMES_MAX)
#define EXTRA_NODES 48
#define MAX_NODES (TABLE_NODES + EXTRA_NODES)
#define MAX_KIDS 16
_Static_assert(MAX_NODES <= 256, "node numbers are bytes");
_Static_assert(MAX_KIDS >= 4 + ATAB_REPORT_EXTRA_MAX, "no node runs out of kids");

typedef struct node {
    const char *name;   /* one path component (not NUL-terminated) */
    size_t len;
    int64_t amount;     /* an entry's amount, or the sum of the kids' */
    int nkids;
    unsigned char kids[MAX_KIDS];
} node;

typedef struct tree {
    node n[MAX_NODES];
    int count;
} tree;

/* The kid of `parent` named s[0..len), created when missing; -1 when the
** fixed arrays are full (extra entries past EXTRA_NODES' names). */
static int kid_of(tree *tr, int parent, const char *s, size_t len)
{
    node *p = &tr->n[parent];
    for (int i = 0; i < p->nkids; i++) {
        node *k = &tr->n[p->kids[i]];
        if (k->len == len && memcmp(k->name, s, len) == 0)
            return p->kids[i];
    }
    if (tr->count == MAX_NODES || p->nkids == MAX_KIDS)
        return -1;
    node *k = &tr->n[tr->count];
    memset(k, 0, sizeof *k);
    k->name = s;
    k->len = len;
    p->kids[p->nkids++] = (unsigned char)tr->count;
    return tr->count++;
}

/* Adds an entry under the root (node 0); path includes the root's name.
** Returns 0, or -1 when the tree is full. */
static int tree_add(tree *tr, const char *path, int64_t amount)
{
    int at = 0;
    const char *s = strchr(path, '/');
    while (s && at >= 0) {
        const char *end = strchr(s + 1, '/');
        size_t len = end ? (size_t)(end - s - 1) : strlen(s + 1);
        at = kid_of(tr, at, s + 1, len);
        s = end;
    }
    if (at < 0)
        return -1;
    tr->n[at].amount += amount;
    return 0;
}

/* about:memory's order of siblings: larger amount first, then by name. */
static int before(const node *a, const node *b)
{
    if (a->amount != b->amount)
        return a->amount > b->amount;
    int c = memcmp(a->name, b->name, a->len < b->len ? a->len : b->len);
    return c < 0 || (c == 0 && a->len < b->len);
}

/* Sums the kids into each inner node and sorts the kids. Returns the
** node's amount. */
static int64_t tree_finish(tree *tr, int id)
{
    node *nd = &tr->n[id];
    if (nd->nkids == 0)
        return nd->amount;
    nd->amount = 0;
    for (int i = 0; i < nd->nkids; i++)
        nd->amount += tree_finish(tr, nd->kids[i]);
    for (int i = 1; i < nd->nkids; i++) {   /* insertion sort */
        unsigned char k = nd->kids[i];
        int j = i;
        for (; j > 0 && before(&tr->n[k], &tr->n[nd->kids[j - 1]]); j--)
            nd->kids[j] = nd->kids[j - 1];
        nd->kids[j] = k;
    }
    return nd->amount;
}

typedef struct guide {
    int last;      /* the node at this level is its parent's last kid */
    size_t depth;  /* columns this level's indent takes */
} guide;

/* The indent before a node, about:memory style; widens this level by the
** "─" needed to right-align the node's amount with its parent's. */
static void indent(out *o, guide *g, int level, size_t extra)
{
    if (level == 0)
        return;
    for (int i = 0; i < level - 1; i++) {
        puts_(o, g[i].last ? " " : "│");
        repeat(o, " ", g[i].depth - 1);
    }
    puts_(o, g[level - 1].last ? "└" : "├");
    repeat(o, "─", g[level - 1].depth - 1 + extra);
    g[level - 1].depth += extra;
}

/* |v| * 10000 / d rounded half away from zero, as about:memory's
** Intl.NumberFormat rounds a percentage to two decimals; exact in integers
** while the product fits, else in double. */
static int64_t ten_thousandths(int64_t v, int64_t d)
{
    uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    uint64_t b = d < 0 ? 0 - (uint64_t)d : (uint64_t)d;
    if (a < ((uint64_t)1 << 49) && b < ((uint64_t)1 << 49)) {
        uint64_t q = a * 10000 / b, r = a * 10000 % b;
        return (int64_t)(q + (2 * r >= b));
    }
    double f = 10000.0 * (double)a / (double)b + 0.5;
    return f < 9.0e18 ? (int64_t)f : (int64_t)9e18;   /* a share past any real one */
}

/* A node's share of the tree's root, as about:memory's formatTreeFrac
** writes it: "100.0%" from 99.995% to 100% (and for 0 of 0), else two
** integer digits and two decimals ("07.25%"). */
static void tree_frac(char *buf, size_t cap, int64_t amount, int64_t root)
{
    double f = root == 0 ? 1.0 : (double)amount / (double)root;
    if (f >= 0.99995 && f <= 1.0) {
        snprintf(buf, cap, "100.0%%");
        return;
    }
    int64_t p = ten_thousandths(amount, root);
    snprintf(buf, cap, "%s%02" PRId64 ".%02" PRId64 "%%",
             (f < 0 && p) ? "-" : "", p / 100, p % 100);
}

/* Writes node `id` and its subtree. A chain of lone kids is shown as one
** node named "a/b" (as about:memory merges degenerate nodes). */
static void tree_write(out *o, const tree *tr, int id, guide *g, int level,
                       size_t parent_width)
{
    const node *nd = &tr->n[id];
    char amt[48], pc[48];
    size_t w = format_amount(amt, nd->amount, ATAB_UNITS_BYTES);
    indent(o, g, level, parent_width > w ? parent_width - w : 0);
    tree_frac(pc, sizeof pc, nd->amount, tr->n[0].amount);   /* of the root */
    put(o, amt, w);
    puts_(o, " (");
    puts_(o, pc);
    puts_(o, ") ");
    const node *last = nd;
    while (level > 0 && last->nkids == 1)
        last = &tr->n[last->kids[0]];
    puts_(o, last->nkids ? "-- " : "── ");
    put_text(o, nd->name, nd->len);
    for (const node *k = nd; k != last;) {
        k = &tr->n[k->kids[0]];
        puts_(o, "/");
        put_text(o, k->name, k->len);
    }
    puts_(o, "\n");
    for (int i = 0; i < last->nkids && level + 1 < MAX_NODES; i++) {
        g[level].last = i == last->nkids - 1;
        g[level].depth = 3;
        tree_write(o, tr, last->kids[i], g, level + 1, w);
    }
}

static int is_explicit(const entry *e)
{
    return strncmp(e->path, "explicit/", 9) == 0;
}

/* about:memory's heap-unclassified: with a "heap-allocated" entry, the
** heap bytes no explicit HEAP entry claims become a kid of the root
** (negative when the entries claim more than the allocator reports).
** Entries of equal paths are summed, heap-allocated's too. */
static int add_heap_unclassified(tree *tr, const entries *l)
{
    int have = 0;
    int64_t heap = 0, allocated = 0;
    for (size_t i = 0; i < l->n; i++) {
        const entry *e = &l->e[i];
        if (strcmp(e->path, "heap-allocated") == 0)
            have = 1, allocated += e->amount;
        else if (is_explicit(e) && e->kind == ATAB_KIND_HEAP)
            heap += e->amount;
    }
    if (!have)
        return 0;
    for (int i = 0; i < tr->n[0].nkids; i++) {   /* the host gave its own */
        const node *k = &tr->n[tr->n[0].kids[i]];
        if (k->len == 17 && memcmp(k->name, "heap-unclassified", 17) == 0)
            return 0;
    }
    return tree_add(tr, "explicit/heap-unclassified", allocated - heap);
}

/* The explicit tree; -1 when it does not fit the fixed arrays. */
static int write_explicit(out *o, const entries *l)
{
    tree tr;
    guide g[MAX_NODES];
    memset(&tr.n[0], 0, sizeof tr.n[0]);
    tr.n[0].name = "explicit";
    tr.n[0].len = 8;
    tr.count = 1;
    for (size_t i = 0; i < l->n; i++)
        if (is_explicit(&l->e[i]) && tree_add(&tr, l->e[i].path, l->e[i].amount) != 0)
            return -1;
    if (add_heap_unclassified(&tr, l) != 0)
        return -1;
    tree_finish(&tr, 0);
    puts_(o, "Explicit Allocations\n\n");
    tree_write(o, &tr, 0, g, 0, 0);
    if (!l->exact)
        puts_(o, "\n(slop unknown: the allocator does not tell usable sizes,"
                 " so amounts are requested bytes)\n");
    return 0;
}

/* "Other Measurements": every entry outside explicit/, sorted by name
** (about:memory's degenerate trees), amounts right-aligned, no
** percentage; bytes and counts together. Entries of equal paths are
** one line, their amounts summed, as about:memory merges them. */
static void write_other(out *o, const entries *l)
{
    const entry *sel[MAX_ENTRIES];
    int64_t sum[MAX_ENTRIES];
    size_t m = 0, wmax = 0;
    char amt[48];
    for (size_t i = 0; i < l->n; i++) {
        const entry *e = &l->e[i];
        if (is_explicit(e))
            continue;
        size_t j = 0;
        while (j < m && strcmp(sel[j]->path, e->path) != 0)
            j++;
        if (j < m) {   /* an equal path: summed (each within the bound) */
            sum[j] += e->amount;
            continue;
        }
        for (j = m++; j > 0 && strcmp(sel[j - 1]->path, e->path) > 0; j--) {
            sel[j] = sel[j - 1];
            sum[j] = sum[j - 1];
        }
        sel[j] = e;
        sum[j] = e->amount;
    }
    for (size_t i = 0; i < m; i++) {
        size_t w = format_amount(amt, sum[i], sel[i]->units);
        wmax = w > wmax ? w : wmax;
    }
    if (m == 0)
        return;
    puts_(o, "\nOther Measurements\n\n");
    for (size_t i = 0; i < m; i++) {
        size_t w = format_amount(amt, sum[i], sel[i]->units);
        repeat(o, " ", wmax - w);
        put(o, amt, w);
        puts_(o, " ── ");
        put_text(o, sel[i]->path, strlen(sel[i]->path));
        puts_(o, "\n");
    }
}

static void out_init(out *o, atab_write_fn w, void *ud)
{
    o->w = w;
    o->ud = ud;
    o->rc = 0;
    o->n = 0;
}

int atab_report_tree_ex(atab_table *t, const atab_report_options *opt,
                        atab_write_fn w, void *ud)
{
    entries l;
    out o;
    int rc = check_args(t, w != NULL, opt);
    if (rc != ATAB_OK)
        return rc;
    collect(t, opt, &l);
    out_init(&o, w, ud);
    if (write_explicit(&o, &l) != 0) {   /* nothing written yet */
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    write_other(&o, &l);
    flush(&o);
    return o.rc;
}

int atab_report_tree(atab_table *t, atab_write_fn w, void *ud)
{
    return atab_report_tree_ex(t, NULL, w, ud);
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */
/* ------------------------------------------------------------------ */

/* Writes s as a JSON string: quotes, backslashes and control characters
** escaped, invalid UTF-8 replaced by U+FFFD, so the result always parses. */
static void json_string(out *o, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    char esc[8];
    puts_(o, "\"");
    while (*p) {
        size_t run = 0;   /* plain ASCII goes out in one piece */
        while (p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
            run++;
        put(o, (const char *)p, run);
        p += run;
        if (!*p)
            break;
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p++;
            put(o, esc, 2);
        } else if (*p < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *p++);
            puts_(o, esc);
        } else {
            size_t n = utf8_seq(p);
            put(o, n ? (const char *)p : "\\ufffd", n ? n : 6);
            p += n ? n : 1;
        }
    }
    puts_(o, "\"");
}

static void json_report(out *o, const char *process, const entry *e)
{
    char num[64];
    puts_(o, "{\"process\":");
    json_string(o, process);
    puts_(o, ",\"path\":");
    json_string(o, e->path);
    snprintf(num, sizeof num, ",\"kind\":%d,\"units\":%d,\"amount\":%" PRId64,
             e->kind, e->units, e->amount);
    puts_(o, num);
    puts_(o, ",\"description\":");
    json_string(o, e->desc);
    puts_(o, "}");
}

int atab_report_json_ex(atab_table *t, const char *process,
                        const atab_report_options *opt, atab_write_fn w,
                        void *ud)
{
    entries l;
    out o;
    int rc = check_args(t, w != NULL, opt);
    if (rc != ATAB_OK)
        return rc;
    collect(t, opt, &l);
    out_init(&o, w, ud);
    puts_(&o, "{\"version\":1,\"hasMozMallocUsableSize\":");
    puts_(&o, l.exact ? "true" : "false");
    puts_(&o, ",\"reports\":[\n");
    for (size_t i = 0; i < l.n; i++) {
        json_report(&o, process ? process : "", &l.e[i]);
        puts_(&o, i + 1 < l.n ? ",\n" : "\n");
    }
    puts_(&o, "]}\n");
    flush(&o);
    return o.rc;
}

int atab_report_json(atab_table *t, const char *process, atab_write_fn w,
                     void *ud)
{
    return atab_report_json_ex(t, process, NULL, w, ud);
}

int atab_write_file(void *ud, const char *buf, size_t len)
{
    if (!ud || (!buf && len)) {   /* a failed fopen passed on: refused, as NULL input is */
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    return fwrite(buf, 1, len, (FILE *)ud) == len ? 0 : 1;
}
