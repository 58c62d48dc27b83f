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
    size_t table_req, table_use;   /* table object + slot arrays */
    size_t atom_req, atom_use;     /* dynamic atoms */
    size_t atoms, unused;          /* dynamic atoms; those with count 0 */
    size_t statics, static_bytes;  /* the static sets */
    size_t handles;                /* outstanding external handles */
    int exact;                     /* every usable size was known */
} census;

/* The usable size of a block. When the allocator cannot tell (no hook, or
** an answer below the request) it is the requested size and the census is
** marked inexact: slop is then unknown, never guessed. */
static size_t usable(census *c, const void *p, size_t req)
{
    size_t u = atab__usable(c->t, p, req);
    if (u < req) {
        c->exact = 0;
        return req;
    }
    return u;
}

static void count_array(void *ud, const void *slots, size_t bytes)
{
    census *c = ud;
    c->table_req += bytes;
    c->table_use += usable(c, slots, bytes);
}

/* Runs under the atom's shard lock: the atom cannot be swept meanwhile. */
static void count_atom(void *ud, const atab_atom *a)
{
    census *c = ud;
    if (atab_is_static(a))
        return;   /* a cached static atom costs only its slot */
    size_t req = atab__atom_size(a);
    c->atoms++;
    c->unused += atab__count(a) == 0;
    c->atom_req += req;
    c->atom_use += usable(c, a, req);
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
    c->exact = t->alloc.usable_size != NULL;
    c->table_req = ATAB__TABLE_ALLOC;   /* the table object, t->raw */
    c->table_use = usable(c, t->raw, ATAB__TABLE_ALLOC);
    atab__flush_counts(t);   /* counts exact: no spares left in caches */
    atab__threads_visit_memory(t, count_array, c);
    atab__external_visit_memory(t, count_array, c);   /* the host caches */
    atab__table_visit_shards(t, count_array, count_atom, c);
    count_statics(c);
    c->handles = atab_external_handles(t);
}

/* ------------------------------------------------------------------ */
/* Entries                                                             */
/* ------------------------------------------------------------------ */

typedef struct entry {
    const char *path;
    int kind, units;
    int64_t amount;
    const char *desc;
} entry;

#define MAX_ENTRIES 8

static entry make(const char *path, int kind, int units, size_t amount,
                  const char *desc)
{
    entry e = {path, kind, units, (int64_t)amount, desc};
    return e;
}

/* Fills e[] from a census (the list documented in atomtab.h); returns the
** number of entries. */
static size_t make_entries(const census *c, entry *e)
{
    size_t n = 0;
    e[n++] = make("explicit/atoms/table", ATAB_KIND_HEAP, ATAB_UNITS_BYTES,
                  c->exact ? c->table_use : c->table_req, c->exact
                  ? "The atom table: the table object, its shards' slot arrays, "
                    "its per-thread reference caches and its host string cache, "
                    "at the allocator's usable size."
                  : "The atom table: the table object, its shards' slot arrays, "
                    "its per-thread reference caches and its host string cache, as requested (the allocator does not tell "
                    "usable sizes).");
    e[n++] = make("explicit/atoms/dynamic/atom-objects", ATAB_KIND_HEAP,
                  ATAB_UNITS_BYTES, c->atom_req,
                  "Dynamic atoms as requested from the allocator: an 8-byte "
                  "header, the characters and a NUL each.");
    if (c->exact)
        e[n++] = make("explicit/atoms/dynamic/slop", ATAB_KIND_HEAP,
                      ATAB_UNITS_BYTES, c->atom_use - c->atom_req,
                      "Bytes the allocator reserved for dynamic atoms beyond "
                      "their requests (usable size minus requested size).");
    e[n++] = make("atoms-static-data", ATAB_KIND_NONHEAP, ATAB_UNITS_BYTES,
                  c->static_bytes,
                  "The static atom sets in use, in read-only data (part of "
                  "the program, not the heap).");
    e[n++] = make("atoms-dynamic", ATAB_KIND_OTHER, ATAB_UNITS_COUNT,
                  c->atoms, "Dynamic atoms in the table, unused ones included.");
    e[n++] = make("atoms-dynamic-unused", ATAB_KIND_OTHER, ATAB_UNITS_COUNT,
                  c->unused,
                  "Dynamic atoms nobody holds, kept until the next sweep "
                  "(interning one again revives it).");
    e[n++] = make("atoms-static", ATAB_KIND_OTHER, ATAB_UNITS_COUNT,
                  c->statics, "Static atoms in the table's static sets.");
    e[n++] = make("atoms-external-handles", ATAB_KIND_OTHER, ATAB_UNITS_COUNT,
                  c->handles,
                  "External handles (host strings sharing an atom's "
                  "characters) not yet released.");
    return n;
}

/* Measures t and fills e[]; *exact says whether usable sizes were known. */
static size_t collect(atab_table *t, entry *e, int *exact)
{
    census c;
    take_census(t, &c);
    *exact = c.exact;
    return make_entries(&c, e);
}

int atab_report(atab_table *t, atab_report_fn fn, void *ud)
{
    entry e[MAX_ENTRIES];
    int exact;
    if (!t || !fn) {
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    size_t n = collect(t, e, &exact);
    for (size_t i = 0; i < n; i++) {
        int rc = fn(ud, e[i].path, e[i].kind, e[i].units, e[i].amount, e[i].desc);
        if (rc != 0)
            return rc;
    }
    return ATAB_OK;
}

int atab_report_has_usable_size(const atab_table *t)
{
    if (!t || !t->alloc.usable_size)
        return 0;
    return atab__usable(t, t->raw, ATAB__TABLE_ALLOC) >= ATAB__TABLE_ALLOC;
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

#define MAX_NODES 24
#define MAX_KIDS 8

typedef struct node {
    const char *name;   /* one path component (not NUL-terminated) */
    size_t len;
    int64_t amount;     /* an entry's amount, or the sum of the kids' */
    int nkids;
    int kids[MAX_KIDS];
} node;

typedef struct tree {
    node n[MAX_NODES];
    int count;
} tree;

/* The kid of `parent` named s[0..len), created when missing; -1 when the
** fixed arrays are full (cannot happen with the entries above). */
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
    p->kids[p->nkids++] = tr->count;
    return tr->count++;
}

/* Adds an entry under the root (node 0); path includes the root's name. */
static void tree_add(tree *tr, const char *path, int64_t amount)
{
    int at = 0;
    const char *s = strchr(path, '/');
    while (s && at >= 0) {
        const char *end = strchr(s + 1, '/');
        size_t len = end ? (size_t)(end - s - 1) : strlen(s + 1);
        at = kid_of(tr, at, s + 1, len);
        s = end;
    }
    if (at >= 0)
        tr->n[at].amount += amount;
}

/* Sums the kids into each inner node and sorts kids largest first (ties
** keep the entries' order). Returns the node's amount. */
static int64_t tree_finish(tree *tr, int id)
{
    node *nd = &tr->n[id];
    if (nd->nkids == 0)
        return nd->amount;
    nd->amount = 0;
    for (int i = 0; i < nd->nkids; i++)
        nd->amount += tree_finish(tr, nd->kids[i]);
    for (int i = 1; i < nd->nkids; i++) {   /* insertion sort: stable */
        int k = nd->kids[i], j = i;
        for (; j > 0 && tr->n[nd->kids[j - 1]].amount < tr->n[k].amount; j--)
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

static void percent(char *buf, size_t cap, int64_t amount, int64_t parent)
{
    if (parent == 0)
        snprintf(buf, cap, "00.00");   /* 0 of 0 */
    else if (amount == parent)
        snprintf(buf, cap, "100.0");
    else
        snprintf(buf, cap, "%05.2f", 100.0 * (double)amount / (double)parent);
}

/* Writes node `id` and its subtree. A chain of lone kids is shown as one
** node named "a/b" (as about:memory merges degenerate nodes). */
static void tree_write(out *o, const tree *tr, int id, guide *g, int level,
                       size_t parent_width, int64_t parent_amount)
{
    const node *nd = &tr->n[id];
    char amt[48], pc[16];
    size_t w = format_amount(amt, nd->amount, ATAB_UNITS_BYTES);
    indent(o, g, level, parent_width > w ? parent_width - w : 0);
    percent(pc, sizeof pc, nd->amount, parent_amount);
    put(o, amt, w);
    puts_(o, " (");
    puts_(o, pc);
    puts_(o, "%) ");
    const node *last = nd;
    while (level > 0 && last->nkids == 1)
        last = &tr->n[last->kids[0]];
    puts_(o, last->nkids ? "-- " : "── ");
    put(o, nd->name, nd->len);
    for (const node *k = nd; k != last;) {
        k = &tr->n[k->kids[0]];
        puts_(o, "/");
        put(o, k->name, k->len);
    }
    puts_(o, "\n");
    for (int i = 0; i < last->nkids && level + 1 < MAX_NODES; i++) {
        g[level].last = i == last->nkids - 1;
        g[level].depth = 3;
        tree_write(o, tr, last->kids[i], g, level + 1, w, nd->amount);
    }
}

static void write_explicit(out *o, const entry *e, size_t n, int exact)
{
    tree tr;
    guide g[MAX_NODES];
    memset(&tr.n[0], 0, sizeof tr.n[0]);
    tr.n[0].name = "explicit";
    tr.n[0].len = 8;
    tr.count = 1;
    for (size_t i = 0; i < n; i++)
        if (strncmp(e[i].path, "explicit/", 9) == 0)
            tree_add(&tr, e[i].path, e[i].amount);
    int64_t total = tree_finish(&tr, 0);
    puts_(o, "Explicit Allocations\n\n");
    tree_write(o, &tr, 0, g, 0, 0, total);
    if (!exact)
        puts_(o, "\n(slop unknown: the allocator does not tell usable sizes,"
                 " so amounts are requested bytes)\n");
}

/* A flat section of the entries outside explicit/ with these units,
** largest first, amounts right-aligned. */
static void write_flat(out *o, const char *title, const entry *e, size_t n,
                       int units)
{
    const entry *sel[MAX_ENTRIES];
    size_t m = 0, wmax = 0;
    char amt[48];
    for (size_t i = 0; i < n; i++) {
        if (strncmp(e[i].path, "explicit/", 9) == 0 || e[i].units != units)
            continue;
        size_t j = m++;
        for (; j > 0 && sel[j - 1]->amount < e[i].amount; j--)
            sel[j] = sel[j - 1];
        sel[j] = &e[i];
        size_t w = format_amount(amt, e[i].amount, units);
        wmax = w > wmax ? w : wmax;
    }
    if (m == 0)
        return;
    puts_(o, "\n");
    puts_(o, title);
    puts_(o, "\n\n");
    for (size_t i = 0; i < m; i++) {
        size_t w = format_amount(amt, sel[i]->amount, units);
        repeat(o, " ", wmax - w);
        put(o, amt, w);
        puts_(o, " ── ");
        puts_(o, sel[i]->path);
        puts_(o, "\n");
    }
}

int atab_report_tree(atab_table *t, atab_write_fn w, void *ud)
{
    entry e[MAX_ENTRIES];
    int exact;
    out o;
    if (!t || !w) {
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    size_t n = collect(t, e, &exact);
    o.w = w;
    o.ud = ud;
    o.rc = 0;
    o.n = 0;
    write_explicit(&o, e, n, exact);
    write_flat(&o, "Other Measurements", e, n, ATAB_UNITS_BYTES);
    write_flat(&o, "Counts", e, n, ATAB_UNITS_COUNT);
    flush(&o);
    return o.rc;
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */
/* ------------------------------------------------------------------ */

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

int atab_report_json(atab_table *t, const char *process, atab_write_fn w,
                     void *ud)
{
    entry e[MAX_ENTRIES];
    int exact;
    out o;
    if (!t || !w) {
        atab__set_error(ATAB_EINVAL);
        return ATAB_EINVAL;
    }
    size_t n = collect(t, e, &exact);
    o.w = w;
    o.ud = ud;
    o.rc = 0;
    o.n = 0;
    puts_(&o, "{\"version\":1,\"hasMozMallocUsableSize\":");
    puts_(&o, exact ? "true" : "false");
    puts_(&o, ",\"reports\":[\n");
    for (size_t i = 0; i < n; i++) {
        json_report(&o, process ? process : "", &e[i]);
        puts_(&o, i + 1 < n ? ",\n" : "\n");
    }
    puts_(&o, "]}\n");
    flush(&o);
    return o.rc;
}

int atab_write_file(void *ud, const char *buf, size_t len)
{
    return fwrite(buf, 1, len, (FILE *)ud) == len ? 0 : 1;
}
