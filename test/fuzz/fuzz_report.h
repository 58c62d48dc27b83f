/* SPDX-License-Identifier: MIT */
/*
** fuzz_report.h - fuzz_table.c's _ex reports (OP_REPORT_EX), included by
** it after its model: the rules atomtab.h gives for a prefix and extra
** entries (valid or not), the paths a prefix gives the table's entries, a
** strict JSON reader for atab_report_json_ex's output, and the operation
** that checks all three against the table. Independent of src/report.c:
** written from the header's words.
*/
#ifndef FUZZ_REPORT_H
#define FUZZ_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "atomtab.h"

/* Every path the table may report (atomtab.h's list), unprefixed: extra
** entries may share one but not lie above or below one. */
static const char *const rx_table_paths[] = {
    "explicit/atoms/table", "explicit/atoms/dynamic/atom-objects",
    "explicit/atoms/dynamic/slop", "explicit/atoms/dynamic/recycled",
    "explicit/atoms/dynamic/free", "explicit/heap-overhead/atoms",
    "atoms-static-data", "atoms-dynamic", "atoms-dynamic-unused", "atoms-static",
    "atoms-external-handles"};
#define RX_TABLE_PATHS (sizeof rx_table_paths / sizeof rx_table_paths[0])
/* Their units (atomtab.h's list): the last four count atoms. */
#define RX_TABLE_COUNTS_FROM 7
#define RX_PATH_CAP (ATAB_REPORT_PREFIX_MAX + 64)

/* A table path under `prefix` (atab_report_options.prefix): explicit/REST
** is explicit/PREFIX/REST, explicit/heap-overhead/REST is
** explicit/heap-overhead/PREFIX/REST, NAME is PREFIX-NAME with the
** prefix's '/' written as '-'. */
static void rx_prefixed(char *out, const char *path, const char *prefix)
{
    static const char ho[] = "explicit/heap-overhead/";
    size_t k;
    if (!prefix || !*prefix) {
        snprintf(out, RX_PATH_CAP, "%s", path);
    } else if (strncmp(path, ho, sizeof ho - 1) == 0) {
        snprintf(out, RX_PATH_CAP, "%s%s/%s", ho, prefix, path + sizeof ho - 1);
    } else if (strncmp(path, "explicit/", 9) == 0) {
        snprintf(out, RX_PATH_CAP, "explicit/%s/%s", prefix, path + 9);
    } else {
        for (k = 0; prefix[k]; k++)
            out[k] = prefix[k] == '/' ? '-' : prefix[k];
        snprintf(out + k, RX_PATH_CAP - k, "-%s", path);
    }
}

/* Is one of a, b strictly above the other ("x/y" above "x/y/z")? */
static int rx_nests(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la == lb)
        return 0;
    if (la > lb) {
        const char *t = a;
        a = b, b = t, la = lb;
    }
    return strncmp(a, b, la) == 0 && b[la] == '/';
}

/* The header's rules for a prefix: none, or '/'-separated non-empty
** names within ATAB_REPORT_PREFIX_MAX bytes. */
static int rx_prefix_ok(const char *p)
{
    size_t n = p ? strlen(p) : 0;
    if (n == 0)
        return 1;
    if (n > ATAB_REPORT_PREFIX_MAX || p[0] == '/' || p[n - 1] == '/')
        return 0;
    for (size_t i = 0; i + 1 < n; i++)
        if (p[i] == '/' && p[i + 1] == '/')
            return 0;
    return 1;
}

/* Would the _ex reports take these options (else ATAB_EINVAL, nothing
** written)? */
static int rx_valid(const atab_report_options *o)
{
    char tp[RX_PATH_CAP];
    if (!rx_prefix_ok(o->prefix) || o->n_extra > ATAB_REPORT_EXTRA_MAX ||
        (o->n_extra && !o->extra))
        return 0;
    for (size_t i = 0; i < o->n_extra; i++) {
        const atab_report_entry *x = &o->extra[i];
        if (!x->path || !*x->path || x->amount > ATAB_REPORT_AMOUNT_MAX ||
            x->amount < -ATAB_REPORT_AMOUNT_MAX)
            return 0;
        if (x->kind != ATAB_KIND_NONHEAP && x->kind != ATAB_KIND_HEAP &&
            x->kind != ATAB_KIND_OTHER)
            return 0;
        if (x->units != ATAB_UNITS_BYTES && x->units != ATAB_UNITS_COUNT)
            return 0;
        if (strncmp(x->path, "explicit/", 9) == 0 &&
            (x->units != ATAB_UNITS_BYTES || x->kind == ATAB_KIND_OTHER))
            return 0;
        for (size_t j = 0; j < RX_TABLE_PATHS; j++) {
            rx_prefixed(tp, rx_table_paths[j], o->prefix);
            int units = j >= RX_TABLE_COUNTS_FROM ? ATAB_UNITS_COUNT : ATAB_UNITS_BYTES;
            if (rx_nests(x->path, tp) || (strcmp(x->path, tp) == 0 && x->units != units))
                return 0;   /* above or below one, or equal in other units (not summed) */
        }
        for (size_t j = 0; j < i; j++)
            if (rx_nests(x->path, o->extra[j].path) ||
                (strcmp(x->path, o->extra[j].path) == 0 && x->units != o->extra[j].units))
                return 0;
    }
    return 1;
}

/* ---- a strict JSON reader: RFC 8259 values, UTF-8 strings ---- */

typedef struct jrd {
    const char *p, *end;
    int depth;
    long objects_at_2;   /* objects two levels down: the reports */
    int usable;          /* "hasMozMallocUsableSize": 1 true, 0 false, -1 absent */
} jrd;

static int j_value(jrd *j);

static void j_ws(jrd *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

static int j_lit(jrd *j, const char *s)
{
    size_t n = strlen(s);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n) != 0)
        return 0;
    j->p += n;
    return 1;
}

/* One UTF-8 character at p (strict: no overlongs, surrogates or > U+10FFFF);
** its length, 0 when invalid. */
static size_t j_utf8(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0], k, min, v;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c < 0xe0)
        k = 1, min = 0x80, v = c & 0x1f;
    else if (c >= 0xe0 && c < 0xf0)
        k = 2, min = 0x800, v = c & 0x0f;
    else if (c >= 0xf0 && c < 0xf5)
        k = 3, min = 0x10000, v = c & 0x07;
    else
        return 0;
    if ((size_t)(end - p) <= k)
        return 0;
    for (unsigned i = 1; i <= k; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (p[i] & 0x3f);
    }
    return v < min || v > 0x10ffff || (v >= 0xd800 && v < 0xe000) ? 0 : k + 1;
}

/* A string; its raw (escaped) text in [*s, *s + *n) when s is not NULL. */
static int j_string(jrd *j, const char **s, size_t *n)
{
    if (j->p >= j->end || *j->p != '"')
        return 0;
    const char *start = ++j->p;
    while (j->p < j->end && *j->p != '"') {
        unsigned char c = (unsigned char)*j->p;
        if (c < 0x20)
            return 0;   /* a raw control character */
        if (c == '\\') {
            if (++j->p >= j->end)
                return 0;
            if (*j->p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (j->p + i >= j->end || !strchr("0123456789abcdefABCDEF", j->p[i]) || !j->p[i])
                        return 0;
                j->p += 5;
            } else if (*j->p && strchr("\"\\/bfnrt", *j->p)) {
                j->p++;
            } else {
                return 0;
            }
            continue;
        }
        size_t k = j_utf8((const unsigned char *)j->p, (const unsigned char *)j->end);
        if (!k)
            return 0;
        j->p += k;
    }
    if (j->p >= j->end)
        return 0;
    if (s)
        *s = start, *n = (size_t)(j->p - start);
    j->p++;
    return 1;
}

static int j_number(jrd *j)
{
    const char *s = j->p;
    if (j->p < j->end && *j->p == '-')
        j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9')
        return 0;
    if (*j->p == '0')
        j->p++;
    else
        while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
            j->p++;
    return j->p > s;   /* integers are all the reports write */
}

static int j_container(jrd *j, char close)
{
    const char *key;
    size_t klen = 0;
    j->p++;
    if (++j->depth > 16)
        return 0;
    if (close == '}' && j->depth == 3)
        j->objects_at_2++;
    j_ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++, j->depth--;
        return 1;
    }
    for (;;) {
        j_ws(j);
        if (close == '}') {
            if (!j_string(j, &key, &klen))
                return 0;
            j_ws(j);
            if (j->p >= j->end || *j->p++ != ':')
                return 0;
            j_ws(j);
            if (j->depth == 1 && klen == 22 && memcmp(key, "hasMozMallocUsableSize", 22) == 0)
                j->usable = j->p < j->end && *j->p == 't';
        }
        if (!j_value(j))
            return 0;
        j_ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == close) {
            j->p++, j->depth--;
            return 1;
        }
        return 0;
    }
}

static int j_value(jrd *j)
{
    if (j->p >= j->end)
        return 0;
    switch (*j->p) {
    case '{': return j_container(j, '}');
    case '[': return j_container(j, ']');
    case '"': return j_string(j, NULL, NULL);
    case 't': return j_lit(j, "true");
    case 'f': return j_lit(j, "false");
    case 'n': return j_lit(j, "null");
    default: return j_number(j);
    }
}

/* Is buf[0..n) one JSON object and nothing after it but white space?
** Fills *reports (objects two levels down) and *usable. */
static int json_ok(const char *buf, size_t n, long *reports, int *usable)
{
    jrd j = {buf, buf + n, 0, 0, -1};
    j_ws(&j);
    if (j.p >= j.end || *j.p != '{' || !j_value(&j))
        return 0;
    j_ws(&j);
    *reports = j.objects_at_2;
    *usable = j.usable;
    return j.p == j.end;
}

/* ---- the operation ---- */

#define RX_ENTRIES 32
#define RX_OUT_CAP 32768

typedef struct rx_entry {
    char path[RX_PATH_CAP];
    int kind, units;
    int64_t amount;
} rx_entry;

typedef struct rx_list {
    rx_entry e[RX_ENTRIES];
    size_t n;
} rx_list;

static int rx_collect(void *ud, const char *path, int kind, int units, int64_t amount,
                      const char *desc)
{
    rx_list *l = ud;
    CHECK(l->n < RX_ENTRIES && desc != NULL && strlen(path) < RX_PATH_CAP);
    rx_entry *x = &l->e[l->n++];
    memcpy(x->path, path, strlen(path) + 1);
    x->kind = kind, x->units = units, x->amount = amount;
    return 0;
}

typedef struct rx_out {
    char buf[RX_OUT_CAP];
    size_t n;
    int calls;
} rx_out;

static int rx_write(void *ud, const char *buf, size_t len)
{
    rx_out *o = ud;
    o->calls++;
    CHECK(len < RX_OUT_CAP - o->n);   /* room for every dump the fuzzer asks */
    memcpy(o->buf + o->n, buf, len);
    o->n += len;
    o->buf[o->n] = '\0';
    return 0;
}

static char rx_long[2][ATAB_REPORT_PREFIX_MAX + 2];   /* 128 and 129 bytes */

/* Prefixes, valid and not (the header's rules decide: rx_valid). */
static const char *rx_prefix(unsigned i)
{
    static const char *const p[] = {
        NULL, "", "html", "a/b/c", "w\"k\\1", "tab\tctl\x01", "caf\xc3\xa9",
        "bad\xff\xfe", "/lead", "trail/", "a//b", "worker/1", "x", "atoms"};
    if (!rx_long[0][0]) {
        memset(rx_long[0], 'p', ATAB_REPORT_PREFIX_MAX);
        memset(rx_long[1], 'q', ATAB_REPORT_PREFIX_MAX + 1);
    }
    i %= sizeof p / sizeof p[0] + 2;
    return i < sizeof p / sizeof p[0] ? p[i] : rx_long[i - sizeof p / sizeof p[0]];
}

/* Extra entries, valid and not, alone or beside others. */
static const atab_report_entry rx_pool[] = {
    {"heap-allocated", ATAB_KIND_OTHER, ATAB_UNITS_BYTES, 0, NULL},
    {"resident", ATAB_KIND_OTHER, ATAB_UNITS_BYTES, 0, NULL},
    {"explicit/host/other", ATAB_KIND_HEAP, ATAB_UNITS_BYTES, 0, NULL},
    {"explicit/host/ro", ATAB_KIND_NONHEAP, ATAB_UNITS_BYTES, 0, NULL},
    {"host-objects", ATAB_KIND_OTHER, ATAB_UNITS_COUNT, 0, NULL},
    {"explicit/atoms/table", ATAB_KIND_HEAP, ATAB_UNITS_BYTES, 0, NULL},
    {"a/b/c", ATAB_KIND_OTHER, ATAB_UNITS_COUNT, 0, NULL},
    {"a/b", ATAB_KIND_OTHER, ATAB_UNITS_COUNT, 0, NULL},
    {"odd\"path\x01\xff", ATAB_KIND_OTHER, ATAB_UNITS_COUNT, 0, NULL},
    {"explicit/atoms", ATAB_KIND_HEAP, ATAB_UNITS_BYTES, 0, NULL},
    {"", ATAB_KIND_OTHER, ATAB_UNITS_COUNT, 0, NULL},
    {NULL, ATAB_KIND_OTHER, ATAB_UNITS_COUNT, 0, NULL},
    {"explicit/x", ATAB_KIND_OTHER, ATAB_UNITS_BYTES, 0, NULL},
    {"explicit/y", ATAB_KIND_HEAP, ATAB_UNITS_COUNT, 0, NULL},
    {"kind", 3, ATAB_UNITS_COUNT, 0, NULL},
    {"units", ATAB_KIND_OTHER, 2, 0, NULL},
    {"explicit/heap-unclassified", ATAB_KIND_HEAP, ATAB_UNITS_BYTES, 0, NULL},
    {"html-atoms-dynamic", ATAB_KIND_OTHER, ATAB_UNITS_COUNT, 0, NULL},
    {"html-atoms-dynamic", ATAB_KIND_OTHER, ATAB_UNITS_BYTES, 0, NULL},
    {"resident", ATAB_KIND_OTHER, ATAB_UNITS_COUNT, 0, NULL},
};
static const int64_t rx_amounts[8] = {
    0, 1, -5, 4096, ATAB_REPORT_AMOUNT_MAX, -ATAB_REPORT_AMOUNT_MAX,
    ATAB_REPORT_AMOUNT_MAX + 1, INT64_MIN};

/* What the table's explicit HEAP entries must add up to: every byte the
** allocator handed out, at the usable size where the hook tells one. */
static int64_t rx_expected_total(const model *m)
{
    return (int64_t)(m->al->usable_mode == USABLE_ROUND16 ? m->al->usable : m->al->bytes);
}

/* Is every byte of s printable ASCII (so a dump shows it as it is)? */
static int rx_plain(const char *s)
{
    for (; *s; s++)
        if (*s < 0x20 || *s > 0x7e || *s == '"' || *s == '\\')
            return 0;
    return 1;
}

/* The tree: UTF-8 text that names every extra entry (by its full path
** outside explicit/, its last name inside) and the prefix's first name. */
static void rx_check_tree(const rx_out *o, const atab_report_options *opt)
{
    for (size_t i = 0; i < o->n;) {
        size_t k = j_utf8((const unsigned char *)o->buf + i, (const unsigned char *)o->buf + o->n);
        CHECK(k > 0);
        i += k;
    }
    for (size_t i = 0; opt && i < opt->n_extra; i++) {
        const char *p = opt->extra[i].path, *last = strrchr(p, '/');
        if (rx_plain(p))
            CHECK(strstr(o->buf, strncmp(p, "explicit/", 9) == 0 ? last + 1 : p) != NULL);
    }
    if (opt && opt->prefix && *opt->prefix && rx_plain(opt->prefix)) {
        char first[RX_PATH_CAP];
        size_t n = strcspn(opt->prefix, "/");
        memcpy(first, opt->prefix, n);
        first[n] = '\0';
        CHECK(strstr(o->buf, first) != NULL);
    }
}

/* The _ex report as the plain one (every entry under the prefix, the
** same amounts), then the extra entries as given; the explicit HEAP
** entries sum to the allocator's bytes. */
static void rx_check_entries(atab_table *t, const model *m, const rx_list *l,
                             const atab_report_options *opt)
{
    static rx_list plain;
    char want[RX_PATH_CAP];
    int64_t total = 0;
    size_t n_extra = opt ? opt->n_extra : 0;
    plain.n = 0;
    CHECK(atab_report(t, rx_collect, &plain) == ATAB_OK);
    CHECK(l->n == plain.n + n_extra);
    for (size_t i = 0; i < plain.n; i++) {
        const rx_entry *p = &plain.e[i], *x = &l->e[i];
        rx_prefixed(want, p->path, opt ? opt->prefix : NULL);
        CHECK(strcmp(x->path, want) == 0);
        CHECK(x->kind == p->kind && x->units == p->units && x->amount == p->amount);
        if (strncmp(p->path, "explicit/", 9) == 0 && p->kind == ATAB_KIND_HEAP)
            total += p->amount;
    }
    CHECK(total == rx_expected_total(m));
    for (size_t i = 0; i < n_extra; i++) {
        const atab_report_entry *e = &opt->extra[i];
        const rx_entry *x = &l->e[plain.n + i];
        CHECK(strcmp(x->path, e->path) == 0 && x->kind == e->kind && x->units == e->units &&
              x->amount == e->amount);
    }
}

/* OP_REPORT_EX: atab_report_ex, _tree_ex or _json_ex (how % 3) with a
** prefix (how / 3) and up to 9 extra entries (the next bytes); refused
** with ATAB_EINVAL, nothing written, exactly when the header's rules are
** broken. */
static void op_report_ex(atab_table *t, model *m, reader *r)
{
    static rx_list l;
    static rx_out out;
    atab_report_entry extra[ATAB_REPORT_EXTRA_MAX + 1];
    atab_report_options opt = {0};
    unsigned how, nb, x;
    if (!rd(r, &how) || !rd(r, &nb) || m->reports_ex++ >= REPORT_MAX)
        return;
    opt.prefix = rx_prefix(how / 3);
    opt.n_extra = nb % (ATAB_REPORT_EXTRA_MAX + 2);
    for (size_t i = 0; i < opt.n_extra; i++) {
        if (!rd(r, &x))
            x = (unsigned)i;
        extra[i] = rx_pool[x % (sizeof rx_pool / sizeof rx_pool[0])];
        extra[i].amount = rx_amounts[(x >> 2) % 8];
        extra[i].description = (x & 64) ? "host \"entry\"\n" : NULL;
    }
    opt.extra = (nb & 128) && opt.n_extra ? NULL : extra;
    const atab_report_options *o = nb == 0 ? NULL : &opt;
    int valid = !o || rx_valid(o), rc, want_usable = m->al->usable_mode <= USABLE_ROUND16;
    long reports;
    int usable;
    l.n = 0, out.n = 0, out.calls = 0;
    CHECK(atab_report_has_usable_size(t) == want_usable);
    switch (how % 3) {
    case 0: rc = atab_report_ex(t, o, rx_collect, &l); break;
    case 1: rc = atab_report_tree_ex(t, o, rx_write, &out); break;
    default: rc = atab_report_json_ex(t, "fuzz\x01\xc3", o, rx_write, &out); break;
    }
    if (!valid) {
        CHECK(rc == ATAB_EINVAL && atab_last_error() == ATAB_EINVAL);
        CHECK(l.n == 0 && out.calls == 0);   /* refused before writing anything */
        return;
    }
    CHECK(rc == ATAB_OK);
    if (how % 3 == 0) {
        rx_check_entries(t, m, &l, o);
    } else if (how % 3 == 1) {
        rx_check_tree(&out, o);
    } else {
        CHECK(json_ok(out.buf, out.n, &reports, &usable));
        CHECK(atab_report_ex(t, o, rx_collect, &l) == ATAB_OK && reports == (long)l.n);
        CHECK(usable == want_usable);
    }
}

#endif /* FUZZ_REPORT_H */
