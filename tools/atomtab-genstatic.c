/* SPDX-License-Identifier: MIT */
/*
** atomtab-genstatic.c - generates a static atom set: a .c file with the
** atoms as const data and a perfect-hash index over them, and a .h file
** declaring the set and a macro for each atom's address.
**
** Usage, options and the list format: `atomtab-genstatic --help` (the
** text is `help` below) and the man page, tools/atomtab-genstatic.1.
** Errors in a list are reported each with its line number; exit status 0,
** 1 on errors in a list, 2 on bad usage or I/O errors. Outputs are written
** to temporary files in their directories and renamed into place, so a
** failed run leaves what was there; an output path that exists and is not
** a regular file is refused.
**
** The index is CHD (compress, hash and displace): keys go to buckets of
** about four by a fixed hash (src/static_hash.h); buckets, largest first,
** each get the first displacement (d1, d2) that puts all their keys on free
** slots; there are as many slots as atoms (a few more where no seed
** places them all in that many). A lookup is one hash, one
** displacement load, one slot load and one comparison. Should no
** displacement fit (rare), the generator tries the next hash seed (0..63,
** then 64 drawn from a digest of the list: build_index); the seed goes
** into the set. Everything is decided here: a table registers a set
** by storing a pointer to it.
*/
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L   /* getline, strdup */
#endif
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomtab.h"
#include "datafile.h"   /* find_data_file: default.atoms */
#include "static_hash.h"

#define GS_MAX_ID 63         /* significant characters C11 guarantees */
#define GS_MAX_EXCLUDE 16
#define GS_STR_(x) #x
#define GS_STR(x) GS_STR_(x)

typedef struct gs_atom {
    char *name;
    size_t len;
    char *id;
    long line;
    int derived;             /* id made from the name, not written */
    uint32_t off;            /* byte offset in the set's atoms */
} gs_atom;

typedef struct gs_list {
    gs_atom *v;
    size_t n, cap;
    const char *file;        /* for messages */
    long errors;
    int read_errno;          /* the list could not be read to its end */
    FILE *err;
} gs_list;

/* ---- a string set for duplicate checks: open addressing on the hash ---- */

typedef struct gs_seen {
    const gs_atom **v;   /* the atom whose name (or id) sits in each slot */
    size_t cap;
    int by_id;
} gs_seen;

static const char *seen_key(const gs_seen *s, const gs_atom *a, size_t *len)
{
    *len = s->by_id ? strlen(a->id) : a->len;
    return s->by_id ? a->id : a->name;
}

/* Adds a; returns the atom already there with the same key, or NULL. */
static const gs_atom *seen_add(gs_seen *s, const gs_atom *a)
{
    size_t len, olen;
    const char *k = seen_key(s, a, &len);
    size_t i = (size_t)atab__static_hash(0, k, len) & (s->cap - 1);
    for (; s->v[i]; i = (i + 1) & (s->cap - 1)) {
        const char *o = seen_key(s, s->v[i], &olen);
        if (olen == len && memcmp(o, k, len) == 0)
            return s->v[i];
    }
    s->v[i] = a;
    return NULL;
}

static int seen_init(gs_seen *s, size_t n, int by_id)
{
    s->cap = 16;
    while (s->cap < 2 * n + 2)
        s->cap *= 2;
    s->v = calloc(s->cap, sizeof *s->v);
    s->by_id = by_id;
    return s->v ? 0 : -1;
}

/* ---- parsing ---- */

/* Reports an error at a line of the list; returns -1. */
static int gs_error(gs_list *l, long line, const char *fmt, const char *arg)
{
    fprintf(l->err, "%s:%ld: ", l->file, line);
    fprintf(l->err, fmt, arg);
    fputc('\n', l->err);
    l->errors++;
    return -1;
}

static int is_ident(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' ||
              (*s >= '0' && *s <= '9')))
            return 0;
    return 1;
}

static int is_ascii_name(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] >= 0x80)
            return 0;
    return 1;
}

/* Length of the UTF-8 sequence at p (at most n bytes), 0 if invalid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    size_t k;
    uint32_t c;
    if (p[0] < 0x80)
        return 1;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        k = 2, c = p[0] & 0x1f;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        k = 3, c = p[0] & 0x0f;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        k = 4, c = p[0] & 0x07;
    else
        return 0;
    if (k > n)
        return 0;
    for (size_t i = 1; i < k; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (p[i] & 0x3f);
    }
    if ((k == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
        (k == 4 && (c < 0x10000 || c > 0x10ffff)))
        return 0;   /* overlong, surrogate, beyond Unicode */
    return k;
}

/* NULL when the name's bytes are fine, else what is wrong. */
static const char *check_name(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    if (len > ATAB_STATIC_MAXLEN)
        return "name too long: %s bytes (at most " GS_STR(ATAB_STATIC_MAXLEN) ")";
    for (size_t i = 0; i < len;) {
        size_t k = utf8_seq(p + i, len - i);
        if (p[i] < 0x20 || p[i] == 0x7f)
            return "control character in name%s";
        if (!k)
            return "name is not valid UTF-8%s";
        i += k;
    }
    return NULL;
}

static int push_atom(gs_list *l, const char *name, size_t len, const char *id,
                     long line, int derived)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        gs_atom *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v, l->cap = cap;
    }
    gs_atom *a = &l->v[l->n];
    a->name = malloc(len + 1);
    a->id = strdup(id);
    if (!a->name || !a->id) {
        free(a->name), free(a->id);
        return -1;
    }
    memcpy(a->name, name, len);
    a->name[len] = '\0';
    a->len = len;
    a->line = line;
    a->derived = derived;
    a->off = 0;
    l->n++;
    return 0;
}

/* The identifier for a name given without one, as the default set's are
** made: each ASCII byte that cannot be in an identifier becomes '_'
** ("accept-charset" -> accept_charset), and one leading '_' goes before a
** digit ("2d" -> _2d). Empty and non-ASCII names have none: NULL. */
static char *derive_id(const char *name, size_t len)
{
    if (len == 0 || len > GS_MAX_ID || !is_ascii_name(name, len))
        return NULL;
    char *id = malloc(len + 2), *p = id;
    if (!id)
        return NULL;
    if (name[0] >= '0' && name[0] <= '9')
        *p++ = '_';
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        *p++ = ok ? c : '_';
    }
    *p = '\0';
    return id;
}

/* Splits an entry line into name and identifier and adds the atom; -1
** after reporting an error. */
static int parse_entry(gs_list *l, char *s, long line)
{
    char *name = s, *end, *id, *rest;
    size_t len;
    char lenbuf[32];
    if (*s == '"') {
        name = s + 1;
        end = strchr(name, '"');
        if (!end)
            return gs_error(l, line, "unterminated quoted name%s", "");
        rest = end + 1;
        if (*rest && *rest != ' ' && *rest != '\t')
            return gs_error(l, line, "text right after a quoted name%s", "");
    } else {
        end = s + strcspn(s, " \t");
        rest = end;
    }
    len = (size_t)(end - name);
    rest += strspn(rest, " \t");
    id = rest;
    rest += strcspn(rest, " \t");
    if (*rest) {
        *rest++ = '\0';
        rest += strspn(rest, " \t");
        if (*rest)
            return gs_error(l, line, "text after the identifier: '%s'", rest);
    }
    const char *why = check_name(name, len);
    if (why) {
        snprintf(lenbuf, sizeof lenbuf, "%zu", len);
        return gs_error(l, line, why, len > ATAB_STATIC_MAXLEN ? lenbuf : "");
    }
    char *made = NULL;
    if (!*id) {
        *end = '\0';
        if (!(made = derive_id(name, len)))
            return gs_error(l, line,
                            "'%s' has no identifier of its own (empty, non-ASCII or "
                            "too long): give one after it ('\"\" empty')", name);
        id = made;
    }
    int rc = 0;
    if (!is_ident(id))
        rc = gs_error(l, line, "'%s' is not a C identifier", id);
    else if (strlen(id) > GS_MAX_ID)
        rc = gs_error(l, line, "identifier too long: '%s' (at most 63 characters)", id);
    else if (push_atom(l, name, len, id, line, made != NULL) != 0)
        rc = gs_error(l, line, "out of memory%s", "");
    free(made);
    return rc;
}

/* What a line is, for the empty-line rules. */
enum { L_START, L_ENTRY, L_EMPTY };

/* Parses one line (no newline); *prev is what came before. */
static void parse_line(gs_list *l, char *s, long line, int *prev)
{
    size_t n = strlen(s);
    if (n && s[n - 1] == '\r')
        s[--n] = '\0';
    if (n == 0) {
        if (*prev == L_START)
            gs_error(l, line, "empty line at the start of the list%s", "");
        else if (*prev == L_EMPTY)
            gs_error(l, line, "two empty lines in a row%s", "");
        *prev = L_EMPTY;
        return;
    }
    if (strspn(s, " \t") == n)
        gs_error(l, line, "line of only spaces or tabs (the empty atom is \"\")%s", "");
    else if (*s == ' ' || *s == '\t')
        gs_error(l, line, "leading whitespace before the name%s", "");
    else if (*s != '#')
        parse_entry(l, s, line);
    *prev = L_ENTRY;
}

/* Reads a list; errors go to l->err as FILE:LINE: message. Returns the
** number of errors (0: fine). */
static long parse_list(gs_list *l, FILE *in)
{
    char *buf = NULL;
    size_t cap = 0;
    ssize_t got;
    long line = 0;
    int prev = L_START;
    errno = 0;
    while ((got = getline(&buf, &cap, in)) >= 0) {
        size_t n = (size_t)got;
        line++;
        if (n && buf[n - 1] == '\n')
            buf[--n] = '\0';
        if (line == 1 && n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
            memmove(buf, buf + 3, (n -= 3) + 1);   /* a UTF-8 byte-order mark: no part of a name */
            if (got == 3)   /* the mark alone, no newline: an empty file */
                break;
        }
        if (strlen(buf) != n)
            gs_error(l, line, "NUL byte in the line%s", "");
        else
            parse_line(l, buf, line, &prev);
        errno = 0;
    }
    if (ferror(in) || !feof(in)) {   /* getline failed: not the end of the list */
        l->read_errno = errno ? errno : EIO;
        free(buf);
        return l->errors;
    }
    free(buf);
    if (prev == L_EMPTY)
        gs_error(l, line, "empty line at the end of the list%s", "");
    return l->errors;
}

/* Duplicate names and identifiers; returns the number of errors. */
static long check_duplicates(gs_list *l)
{
    gs_seen names, ids;
    if (seen_init(&names, l->n, 0) || seen_init(&ids, l->n, 1)) {
        gs_error(l, 0, "out of memory%s", "");
        return l->errors;
    }
    char msg[128];
    for (size_t i = 0; i < l->n; i++) {
        const gs_atom *a = &l->v[i], *o;
        if ((o = seen_add(&names, a)) != NULL) {
            snprintf(msg, sizeof msg, "duplicate name '%%s' (first on line %ld)", o->line);
            gs_error(l, a->line, msg, a->name);
        } else if ((o = seen_add(&ids, a)) != NULL) {
            snprintf(msg, sizeof msg, "duplicate identifier '%%s' (first on line %ld)%s",
                     o->line, a->derived || o->derived
                     ? ": made from the names, give one after a name" : "");
            gs_error(l, a->line, msg, a->id);
        }
    }
    free(names.v);
    free(ids.v);
    return l->errors;
}

/* Drops the atoms whose names are in ex (already checked). */
static void apply_exclude(gs_list *l, const gs_list *ex)
{
    gs_seen s;
    size_t k = 0;
    if (seen_init(&s, ex->n + l->n, 0) != 0)   /* both lists go in */
        return;
    for (size_t i = 0; i < ex->n; i++)
        seen_add(&s, &ex->v[i]);
    for (size_t i = 0; i < l->n; i++) {
        if (seen_add(&s, &l->v[i]) == NULL) {
            l->v[k++] = l->v[i];   /* kept (and now in s: harmless) */
        } else {
            free(l->v[i].name);
            free(l->v[i].id);
        }
    }
    l->n = k;
    free(s.v);
}

static void free_list(gs_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].name), free(l->v[i].id);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* ---- the index (CHD) ---- */

typedef struct gs_index {
    uint64_t seed;
    uint32_t n_buckets, n_slots;
    uint32_t *disp;     /* per bucket */
    uint32_t *slots;    /* atom number + 1 per slot; 0: empty (before offsets) */
} gs_index;

/* Tries to place one bucket's keys (hashes h[0..k)); 1 when placed. */
static int place_bucket(gs_index *ix, const uint64_t *h, size_t k, uint32_t *pos,
                        uint32_t b, const uint32_t *who)
{
    uint32_t lim = ix->n_slots < 65536 ? ix->n_slots : 65536;
    for (uint32_t d1 = 0; d1 < lim && d1 < 1024; d1++) {   /* else: next seed */
        for (uint32_t d2 = 0; d2 < lim; d2++) {
            uint32_t d = d1 << 16 | d2;
            size_t j;
            for (j = 0; j < k; j++) {
                pos[j] = atab__sh_slot(h[j], d, ix->n_slots);
                if (ix->slots[pos[j]])
                    break;
                size_t q;
                for (q = 0; q < j && pos[q] != pos[j]; q++)
                    ;
                if (q < j)
                    break;
            }
            if (j < k)
                continue;
            for (j = 0; j < k; j++)
                ix->slots[pos[j]] = who[j] + 1;
            ix->disp[b] = d;
            return 1;
        }
    }
    return 0;
}

/* Builds the index with one seed; 0 on success, 1 to try another seed,
** -1 out of memory. */
static int build_with_seed(gs_index *ix, const gs_list *l)
{
    size_t n = l->n, nb = ix->n_buckets;
    uint64_t *h = malloc(n * sizeof *h), *bh = malloc(n * sizeof *bh);
    uint32_t *start = calloc(nb + 2, sizeof *start), *order = malloc(n * sizeof *order);
    uint32_t *pos = malloc(n * sizeof *pos), *who = malloc(n * sizeof *who);
    int rc = -1;
    if (!h || !bh || !start || !order || !pos || !who)
        goto out;
    for (size_t i = 0; i < n; i++) {   /* counting sort of keys by bucket */
        h[i] = atab__static_hash(ix->seed, l->v[i].name, l->v[i].len);
        start[atab__sh_bucket(h[i], (uint32_t)nb) + 2]++;
    }
    for (size_t b = 0; b < nb; b++)
        start[b + 2] += start[b + 1];
    for (size_t i = 0; i < n; i++)
        order[start[atab__sh_bucket(h[i], (uint32_t)nb) + 1]++] = (uint32_t)i;
    /* now keys of bucket b are order[start[b] .. start[b + 1]) */
    memset(ix->slots, 0, ix->n_slots * sizeof *ix->slots);
    memset(ix->disp, 0, nb * sizeof *ix->disp);
    size_t most = 0;
    for (size_t b = 0; b < nb; b++)
        if (start[b + 1] - start[b] > most)
            most = start[b + 1] - start[b];
    rc = 0;
    for (size_t size = most; size > 0 && rc == 0; size--) {   /* largest first */
        for (size_t b = 0; b < nb && rc == 0; b++) {
            if (start[b + 1] - start[b] != size)
                continue;
            for (size_t j = 0; j < size; j++) {
                who[j] = order[start[b] + j];
                bh[j] = h[who[j]];
            }
            if (!place_bucket(ix, bh, size, pos, (uint32_t)b, who))
                rc = 1;
        }
    }
out:
    free(h), free(bh), free(start), free(order), free(pos), free(who);
    return rc;
}

/* A digest of the whole list, names in order, from which build_index
** draws the seeds it tries after the first 64. */
static uint64_t list_digest(const gs_list *l)
{
    uint64_t d = l->n;
    for (size_t i = 0; i < l->n; i++)
        d = atab__sh_mix(d ^ atab__static_hash(ATAB__SH_K2, l->v[i].name, l->v[i].len));
    return d;
}

/* Builds the index; 0, or -1 (out of memory or no seed worked). As many
** slots as atoms first; where no seed places them all (a power-of-two
** count, such as 8 or 16, leaves the displacements few ways to move a
** bucket's keys apart), one slot more, and so on (empty slots hold
** UINT32_MAX). The seeds are 0..63 first; should none of them do at any
** slot count, as when two names were made to have one hash under each,
** 64 seeds drawn from the list's digest, which a name added to part such a
** pair changes. */
static int build_index(gs_index *ix, const gs_list *l)
{
    ix->n_buckets = (uint32_t)((l->n + 3) / 4);
    ix->disp = calloc(ix->n_buckets, sizeof *ix->disp);
    ix->slots = calloc(l->n + 64, sizeof *ix->slots);
    if (!ix->disp || !ix->slots)
        return -1;
    uint64_t digest = 0;
    for (int drawn = 0; drawn < 2; drawn++) {
        if (drawn)
            digest = list_digest(l);
        for (size_t extra = 0; extra < 64 && l->n + extra <= UINT32_MAX; extra++) {
            ix->n_slots = (uint32_t)(l->n + extra);
            for (uint64_t i = 0; i < 64; i++) {
                ix->seed = drawn ? atab__sh_mix(digest + (i + 1) * ATAB__SH_K1) : i;
                int rc = build_with_seed(ix, l);
                if (rc <= 0)
                    return rc;
            }
        }
    }
    return -1;
}

/* Offsets of the atoms, back to back: 8-byte header, chars, NUL, padding
** to 4. 0, or -1 when the total passes INT32_MAX (the header's enum). */
static int layout(gs_list *l, uint64_t *total)
{
    uint64_t off = 0;
    for (size_t i = 0; i < l->n; i++) {
        l->v[i].off = (uint32_t)off;
        off += sizeof(atab_atom) + ((l->v[i].len + 1 + 3) & ~(size_t)3);
        if (off > INT32_MAX)
            return -1;
    }
    *total = off;
    return 0;
}

/* ---- output ---- */

/* Writes s as the body of a C string literal: octal escapes for everything
** but plain printable ASCII, so no escape can run into the next byte and
** no trigraph can form. */
static void put_cstring(FILE *f, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?')
            fputc(c, f);
        else
            fprintf(f, "\\%03o", c);
    }
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

typedef struct gs_opts {
    const char *name, *macro, *list, *out_c, *out_h, *default_list;
    const char *exclude[GS_MAX_EXCLUDE];
    int n_exclude, export_, no_default;
} gs_opts;

/* The miss filter: 2^log2 bits, the bit of every atom set: at least 32
** per atom up to 16 KB (about 1 false hit in 40 for keys that are no
** atom), at least 8 per atom past that (about 1 in 12), so that a large
** host set's filter stays a small share of its bytes. Writes the array;
** returns log2. Without memory for it every bit is set: lookups still find
** every atom, only misses hash. */
static unsigned write_filter(FILE *f, const gs_opts *o, const gs_list *l)
{
    unsigned log2 = 9;
    while (((uint64_t)1 << log2) < (uint64_t)l->n * 8 && log2 < 31)
        log2++;
    while (((uint64_t)1 << log2) < (uint64_t)l->n * 32 && log2 < 17)
        log2++;
    size_t words = ((size_t)1 << log2) / 64;
    uint64_t *bits = calloc(words, sizeof *bits);
    for (size_t i = 0; bits && i < l->n; i++) {
        uint32_t b = atab__static_filter_bit(l->v[i].name, l->v[i].len, log2);
        bits[b >> 6] |= (uint64_t)1 << (b & 63);
    }
    fprintf(f, "static const uint64_t %s_index_filter[%zu] = {", o->name, words);
    for (size_t w = 0; w < words; w++)
        fprintf(f, "%sUINT64_C(0x%llx),", w % 4 ? " " : "\n    ",
                bits ? (unsigned long long)bits[w] : ~0ull);
    fprintf(f, "\n};\n\n");
    free(bits);
    return log2;
}

static void write_c(FILE *f, const gs_opts *o, const gs_list *l, const gs_index *ix,
                    uint64_t total, size_t maxlen)
{
    fprintf(f, "/* Generated by atomtab-genstatic from %s: do not edit. */\n",
            base_name(o->list));
    fprintf(f, "#include <stddef.h>\n#include <stdint.h>\n#include \"%s\"\n\n",
            base_name(o->out_h));
    fprintf(f, "struct %s_blob_ {\n", o->name);
    for (size_t i = 0; i < l->n; i++)
        fprintf(f, "    struct { atab_atom h; char c[%zu]; } a%zu;\n", l->v[i].len + 1, i);
    fprintf(f, "};\n\nconst struct %s_blob_ %s_atoms = {\n", o->name, o->name);
    for (size_t i = 0; i < l->n; i++) {
        const gs_atom *a = &l->v[i];
        unsigned flags = ATAB__STATIC | (is_ascii_name(a->name, a->len) ? ATAB__ASCII : 0);
        fprintf(f, "    {{0x%08lxu, 0}, \"", (unsigned long)(a->len << ATAB__LEN_SHIFT | flags));
        put_cstring(f, a->name, a->len);
        fprintf(f, "\"},\n");
    }
    fprintf(f, "};\n\n");
    for (size_t i = 0; i < l->n; i++)
        fprintf(f, "_Static_assert(offsetof(struct %s_blob_, a%zu) == %lu, \"layout\");\n",
                o->name, i, (unsigned long)l->v[i].off);
    fprintf(f, "_Static_assert(sizeof(struct %s_blob_) == %lu, \"layout\");\n\n", o->name,
            (unsigned long)total);
    fprintf(f, "static const uint32_t %s_index_disp[%lu] = {", o->name, (unsigned long)ix->n_buckets);
    for (uint32_t b = 0; b < ix->n_buckets; b++)
        fprintf(f, "%s0x%lxu,", b % 8 ? " " : "\n    ", (unsigned long)ix->disp[b]);
    fprintf(f, "\n};\n\nstatic const uint32_t %s_index_slots[%lu] = {", o->name,
            (unsigned long)ix->n_slots);
    for (uint32_t s = 0; s < ix->n_slots; s++)
        fprintf(f, "%s%lu,", s % 8 ? " " : "\n    ",
                ix->slots[s] ? (unsigned long)l->v[ix->slots[s] - 1].off : 0xfffffffful);
    fprintf(f, "\n};\n\n");
    unsigned log2 = write_filter(f, o, l);
    fprintf(f, "const atab_static_set %s = {\n", o->name);
    /* the ABI as a number, not the macro: compiled against another
    ** version's header, the set still says which layout and hashes it was
    ** generated for, so that version's tables refuse it (ATAB_EABI) */
    fprintf(f, "    %uu, %zu, %zu, %lu, %lu,\n", (unsigned)ATAB_STATIC_ABI, l->n, maxlen,
            (unsigned long)ix->n_buckets, (unsigned long)ix->n_slots);
    fprintf(f, "    (uint32_t)(sizeof %s_atoms + sizeof %s_index_disp + sizeof %s_index_slots + "
            "sizeof %s_index_filter),\n", o->name, o->name, o->name, o->name);
    fprintf(f, "    UINT64_C(%" PRIu64 "), &%s_atoms, %s_index_disp, %s_index_slots, \"%s\",\n",
            ix->seed, o->name, o->name, o->name, o->name);
    fprintf(f, "    %u, %s_index_filter\n};\n", log2, o->name);
}

static void write_h(FILE *f, const gs_opts *o, const gs_list *l)
{
    const char *api = o->export_ ? "ATAB_API " : "";
    fprintf(f, "/* Generated by atomtab-genstatic from %s: do not edit. */\n",
            base_name(o->list));
    /* every name below but the enumerators is NAME_x, x not starting with
    ** '_', or a tag: no identifier NAME__id can collide with one */
    fprintf(f, "#ifndef %s_GENERATED_H_\n#define %s_GENERATED_H_\n\n", o->name, o->name);
    fprintf(f, "#include <atomtab.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    fprintf(f, "/* The set: pass &%s in atab_options.static_sets. */\n", o->name);
    fprintf(f, "extern %sconst atab_static_set %s;\n", api, o->name);
    fprintf(f, "struct %s_blob_;\nextern %sconst struct %s_blob_ %s_atoms;\n\n", o->name,
            api, o->name, o->name);
    fprintf(f, "/* Atoms in the set. */\n#define %s_COUNT %zu\n\n", o->macro, l->n);
    fprintf(f, "/* %s(id): the atom named by identifier id (a constant expression). */\n",
            o->macro);
    fprintf(f, "#define %s(id) ((const atab_atom *)(const void *) \\\n"
               "    ((const char *)&%s_atoms + %s__##id))\n\n", o->macro, o->name, o->name);
    fprintf(f, "enum %s_offsets_ {\n", o->name);
    for (size_t i = 0; i < l->n; i++)
        fprintf(f, "    %s__%s = %lu,\n", o->name, l->v[i].id, (unsigned long)l->v[i].off);
    fprintf(f, "    %s_offsets_end_ = 0\n};\n\n", o->name);
    fprintf(f, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
}

/* ---- writing: temporary files renamed into place ---- */

/* An output path must name a regular file or nothing: a device, a FIFO, a
** directory or a symlink there is refused (never written, never removed).
** 0, or -1 with a message. */
static int check_output(const char *path, FILE *err)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        fprintf(err, "atomtab-genstatic: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (S_ISREG(st.st_mode))
        return 0;
    fprintf(err, "atomtab-genstatic: %s exists and is not a regular file: refusing to "
                 "replace it\n", path);
    return -1;
}

/* Where path's file lives: its directory resolved, then its last part,
** into buf; the path as given when the directory cannot be resolved. */
static void canonical(const char *path, char *buf, size_t cap)
{
    char dir[PATH_MAX], real[PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) : 1;
    if (dlen == 0)
        dlen = 1;   /* "/name" */
    if (dlen >= sizeof dir) {
        snprintf(buf, cap, "%s", path);
        return;
    }
    memcpy(dir, slash ? path : ".", dlen);
    dir[dlen] = '\0';
    if (!realpath(dir, real))
        snprintf(buf, cap, "%s", path);
    else
        snprintf(buf, cap, "%s/%s", real, slash ? slash + 1 : path);
}

static int same_path(const char *a, const char *b)
{
    char ca[PATH_MAX + 256], cb[PATH_MAX + 256];
    canonical(a, ca, sizeof ca);
    canonical(b, cb, sizeof cb);
    return strcmp(ca, cb) == 0;
}

/* A temporary file next to `path` (same directory, so rename is atomic),
** mode 0666 less the umask as fopen would give. NULL with a message. */
static FILE *open_temp(const char *path, char *tmp, size_t cap, FILE *err)
{
    if ((size_t)snprintf(tmp, cap, "%s.XXXXXX", path) >= cap) {
        fprintf(err, "atomtab-genstatic: %s: path too long\n", path);
        return NULL;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(err, "atomtab-genstatic: cannot create a file beside %s: %s\n", path,
                strerror(errno));
        tmp[0] = '\0';
        return NULL;
    }
    mode_t mask = umask(0);
    umask(mask);
    FILE *f = fchmod(fd, 0666 & ~mask) == 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(err, "atomtab-genstatic: %s: %s\n", tmp, strerror(errno));
        close(fd);
    }
    return f;
}

/* Closes a written temporary file; 0, or -1 with a message. */
static int finish_temp(FILE *f, const char *tmp, FILE *err)
{
    int bad = ferror(f) != 0;
    int saved = errno;
    if (fclose(f) != 0 && !bad)
        bad = 1, saved = errno;
    if (bad)
        fprintf(err, "atomtab-genstatic: cannot write %s: %s\n", tmp,
                strerror(saved ? saved : EIO));
    return bad ? -1 : 0;
}

/* Writes both files through temporaries, then renames them into place;
** on any failure removes only the temporaries it made. 0, or -1 with a
** message. */
static int write_outputs(const gs_opts *o, const gs_list *l, const gs_index *ix,
                         uint64_t total, FILE *err)
{
    char tc[PATH_MAX + 16] = "", th[PATH_MAX + 16] = "";
    size_t maxlen = 0;
    int rc = -1;
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].len > maxlen)
            maxlen = l->v[i].len;
    FILE *c = open_temp(o->out_c, tc, sizeof tc, err);
    FILE *h = c ? open_temp(o->out_h, th, sizeof th, err) : NULL;
    if (c && h) {
        errno = 0;
        write_c(c, o, l, ix, total, maxlen);
        write_h(h, o, l);
    }
    int ok_c = c && finish_temp(c, tc, err) == 0;
    int ok_h = h && finish_temp(h, th, err) == 0;
    if (ok_c && ok_h && rename(th, o->out_h) == 0) {
        th[0] = '\0';
        if (rename(tc, o->out_c) == 0) {
            tc[0] = '\0';
            rc = 0;
        }
    }
    if (rc != 0 && ok_c && ok_h)
        fprintf(err, "atomtab-genstatic: cannot rename into %s: %s\n",
                th[0] ? o->out_h : o->out_c, strerror(errno));
    if (tc[0])
        unlink(tc);
    if (th[0])
        unlink(th);
    return rc;
}

/* ---- command line ---- */

static const char help[] =
    "usage: atomtab-genstatic --name NAME [options] LIST OUT.c OUT.h\n"
    "\n"
    "Generates a static atom set from LIST: OUT.c defines `const atab_static_set\n"
    "NAME` (the atoms as read-only data and a perfect-hash index over them);\n"
    "OUT.h declares it and MACRO(id), each atom's `const atab_atom *` as a\n"
    "constant expression. Register it in atab_options.static_sets.\n"
    "\n"
    "  --name NAME          the set's C name (required): an identifier, not a C\n"
    "                       or C++ keyword, not reserved (_X, __x, names of\n"
    "                       <stddef.h> and <stdint.h>), not atab_*\n"
    "  --macro MACRO        the per-atom macro (default: NAME in capitals + _ATOM)\n"
    "  --export             declare the set ATAB_API, for a set a shared\n"
    "                       library exports\n"
    "  --exclude LIST       leave out the strings of another list (up to 16)\n"
    "  --no-default         the host will not register the default set\n"
    "                       (ATAB_NO_DEFAULT_STATICS): its strings are allowed\n"
    "  --default-list PATH  the default set's list (default: default.atoms\n"
    "                       beside this program or in ../share/atomtab/)\n"
    "  --help               print this and exit\n"
    "\n"
    "LIST, one line each:\n"
    "  name [identifier]    an atom. The name runs to the first space or tab;\n"
    "                       written \"...\" it may hold spaces (\"\" is the empty\n"
    "                       atom). Without an identifier one is made from the\n"
    "                       name: my-widget -> my_widget, 2d -> _2d (empty and\n"
    "                       non-ASCII names need one: caf\303\251 cafe).\n"
    "  # text               a comment\n"
    "  (empty)              separates groups; not first, not last, not twice\n"
    "A name in the default set is an error unless --no-default: tables find\n"
    "the default set's atom first, so MACRO(id) would never be returned.\n"
    "Errors are reported as LIST:LINE: message. Exit status: 0 done, 1 errors\n"
    "in a list, 2 bad usage or an I/O error. See atomtab-genstatic(1).\n";

static int usage(FILE *err, const char *why, const char *arg)
{
    if (why)
        fprintf(err, "atomtab-genstatic: %s%s%s\n", why, arg ? ": " : "", arg ? arg : "");
    fprintf(err, "usage: atomtab-genstatic --name NAME [--macro MACRO] [--export]\n"
                 "         [--exclude LIST]... [--no-default | --default-list PATH]\n"
                 "         LIST OUT.c OUT.h        (--help for more)\n");
    return 2;
}

/* C11, C23 and C++ keywords: a set or macro named so does not compile. */
static int is_keyword(const char *s)
{
    static const char *const kw[] = {
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool",
        "break", "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class",
        "compl", "concept", "const", "const_cast", "consteval", "constexpr", "constinit",
        "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
        "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern",
        "false", "float", "for", "friend", "goto", "if", "inline", "int", "long",
        "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator",
        "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
        "requires", "restrict", "return", "short", "signed", "sizeof", "static",
        "static_assert", "static_cast", "struct", "switch", "template", "this",
        "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "typeof",
        "typeof_unqual", "union", "unsigned", "using", "virtual", "void", "volatile",
        "wchar_t", "while", "xor", "xor_eq"};
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
        if (strcmp(s, kw[i]) == 0)
            return 1;
    return 0;
}

static int starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static int ends(const char *s, const char *p)
{
    size_t n = strlen(s), k = strlen(p);
    return n >= k && strcmp(s + n - k, p) == 0;
}

/* Names the headers the generated files include, <stddef.h> and
** <stdint.h> (through atomtab.h), declare or reserve (C11 7.1.3, and
** 7.31.10: int*_t, uint*_t, and INT* / UINT* ending in _MAX, _MIN, _WIDTH
** or _C), in C23 and C++ too (nullptr_t, unreachable, the *_WIDTH
** macros): as the set's or its macro's name they do not compile, or
** redefine what the generated code uses (offsetof, UINT64_C). */
static int is_std_name(const char *s)
{
    static const char *const names[] = {
        "NULL", "offsetof", "size_t", "ptrdiff_t", "max_align_t", "wchar_t",
        "SIZE_MAX", "PTRDIFF_MIN", "PTRDIFF_MAX", "SIG_ATOMIC_MIN", "SIG_ATOMIC_MAX",
        "WCHAR_MIN", "WCHAR_MAX", "WINT_MIN", "WINT_MAX", "nullptr_t", "unreachable",
        "SIZE_WIDTH", "PTRDIFF_WIDTH", "SIG_ATOMIC_WIDTH", "WCHAR_WIDTH", "WINT_WIDTH"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i]) == 0)
            return 1;
    if ((starts(s, "int") || starts(s, "uint")) && ends(s, "_t"))
        return 1;
    return (starts(s, "INT") || starts(s, "UINT")) &&
           (ends(s, "_MAX") || ends(s, "_MIN") || ends(s, "_WIDTH") || ends(s, "_C"));
}

/* Why a --name or --macro cannot be used, or NULL. atab_ and ATAB_ names
** are the library's: only its own set (atab_static_default, ATAB_ATOM,
** built with --no-default) may use them. */
static const char *bad_c_name(const char *s, int own_set)
{
    if (!is_ident(s) || strlen(s) > GS_MAX_ID)
        return "not a C identifier of at most 63 characters";
    if (is_keyword(s))
        return "a C or C++ keyword";
    if (is_std_name(s))
        return "a name <stddef.h> or <stdint.h> declares or reserves";
    if (s[0] == '_' && (s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z')))
        return "a reserved identifier (_X or __x)";
    if (!own_set && (strncmp(s, "atab_", 5) == 0 || strncmp(s, "ATAB_", 5) == 0))
        return "the atab_/ATAB_ prefix is atomtab's own";
    return NULL;
}

static char gs_macro_buf[GS_MAX_ID + 8];

/* The options one at a time; 0, 1 for --help, 2 after a usage error. */
static int parse_opt(gs_opts *o, int argc, char **argv, int *i, FILE *err)
{
    const char *a = argv[*i];
    const char *val = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (strcmp(a, "--help") == 0)
        return 1;
    if (strcmp(a, "--export") == 0)
        o->export_ = 1;
    else if (strcmp(a, "--no-default") == 0)
        o->no_default = 1;
    else if (strcmp(a, "--name") == 0 || strcmp(a, "--macro") == 0 ||
             strcmp(a, "--exclude") == 0 || strcmp(a, "--default-list") == 0) {
        if (!val)
            return usage(err, "missing the value of", a);
        ++*i;
        if (a[2] == 'n')
            o->name = val;
        else if (a[2] == 'm')
            o->macro = val;
        else if (a[2] == 'd')
            o->default_list = val;
        else if (o->n_exclude == GS_MAX_EXCLUDE)
            return usage(err, "more than 16 --exclude lists", NULL);
        else
            o->exclude[o->n_exclude++] = val;
    } else
        return usage(err, "unknown option", a);
    return 0;
}

/* Checks the names and the paths; 0 or 2 after a message. */
static int check_args(gs_opts *o, FILE *err)
{
    int own = o->no_default && o->name && strcmp(o->name, "atab_static_default") == 0 &&
              (!o->macro || strcmp(o->macro, "ATAB_ATOM") == 0);
    const char *why;
    if (!o->name)
        return usage(err, "--name is required", NULL);
    if ((why = bad_c_name(o->name, own)) != NULL)
        return fprintf(err, "atomtab-genstatic: --name %s: %s\n", o->name, why), 2;
    if (o->macro && (why = bad_c_name(o->macro, own)) != NULL)
        return fprintf(err, "atomtab-genstatic: --macro %s: %s\n", o->macro, why), 2;
    size_t nl = strlen(o->name);
    if (o->macro && (strcmp(o->macro, o->name) == 0 ||
                     (strncmp(o->macro, o->name, nl) == 0 && o->macro[nl] == '_')))
        return fprintf(err, "atomtab-genstatic: --macro %s: NAME and NAME_* are the "
                            "generated code's names\n", o->macro), 2;
    if (same_path(o->out_c, o->out_h))
        return fprintf(err, "atomtab-genstatic: OUT.c and OUT.h are the same file: %s\n",
                       o->out_c), 2;
    /* OUT.c names OUT.h in #include "...": no '"', '\\' or control byte there */
    for (const char *p = base_name(o->out_h); *p; p++)
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20 || *p == 0x7f)
            return fprintf(err, "atomtab-genstatic: %s: OUT.h's name cannot be written in "
                                "OUT.c's #include \"...\" line\n", o->out_h), 2;
    const char *ins[GS_MAX_EXCLUDE + 2];
    int nin = 0;
    ins[nin++] = o->list;
    for (int k = 0; k < o->n_exclude; k++)
        ins[nin++] = o->exclude[k];
    if (o->default_list)
        ins[nin++] = o->default_list;
    for (int k = 0; k < nin; k++)
        if (same_path(ins[k], o->out_c) || same_path(ins[k], o->out_h))
            return fprintf(err, "atomtab-genstatic: %s is both an input and an output\n",
                           ins[k]), 2;
    if (check_output(o->out_c, err) != 0 || check_output(o->out_h, err) != 0)
        return 2;
    return 0;
}

static int parse_args(gs_opts *o, int argc, char **argv, FILE *err)
{
    const char *pos[3];
    int npos = 0, rc;
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1]) {
            if ((rc = parse_opt(o, argc, argv, &i, err)) != 0)
                return rc;
        } else if (npos == 3)
            return usage(err, "too many arguments", argv[i]);
        else
            pos[npos++] = argv[i];
    }
    if (npos != 3)
        return usage(err, "LIST, OUT.c and OUT.h are required", NULL);
    o->list = pos[0], o->out_c = pos[1], o->out_h = pos[2];
    if ((rc = check_args(o, err)) != 0)
        return rc;
    if (!o->macro) {
        size_t k;
        for (k = 0; o->name[k]; k++)
            gs_macro_buf[k] = (char)(o->name[k] >= 'a' && o->name[k] <= 'z'
                                     ? o->name[k] - 'a' + 'A' : o->name[k]);
        strcpy(gs_macro_buf + k, "_ATOM");
        o->macro = gs_macro_buf;
    }
    return 0;
}

/* Reads and checks one list file into l; the number of errors, or -1 when
** the file cannot be read (to its end). */
static long load_list(gs_list *l, const char *path, FILE *err)
{
    FILE *in = fopen(path, "r");
    memset(l, 0, sizeof *l);
    l->file = path;
    l->err = err;
    if (!in) {
        fprintf(err, "atomtab-genstatic: cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    parse_list(l, in);
    fclose(in);
    if (l->read_errno) {
        fprintf(err, "atomtab-genstatic: cannot read %s: %s\n", path,
                strerror(l->read_errno));
        return -1;
    }
    return check_duplicates(l);
}

/* The default set's list: --default-list, else default.atoms beside this
** program (build trees) or in ../share/atomtab/ from it (installs).
** 0 and the path in buf, or -1. */
static int find_default_list(const gs_opts *o, char *buf, size_t cap)
{
    if (o->default_list)
        return snprintf(buf, cap, "%s", o->default_list) < (int)cap ? 0 : -1;
    return find_data_file("default.atoms", buf, cap);
}

/* Each atom of l that the default set holds is an error at its line: a
** table searches the default set first, so the host's atom would never be
** returned. The number of errors, or -1 when the default list is missing. */
static long check_default(gs_list *l, const gs_opts *o, FILE *err)
{
    char path[PATH_MAX + 64];
    gs_list def;
    gs_seen s;
    if (find_default_list(o, path, sizeof path) != 0) {
        fprintf(err, "atomtab-genstatic: cannot find the default set's list (default.atoms "
                     "beside this program or in ../share/atomtab/): give --default-list "
                     "PATH, or --no-default\n");
        return -1;
    }
    long bad = load_list(&def, path, err);
    if (bad == 0 && seen_init(&s, def.n + l->n, 0) == 0) {   /* both lists go in */
        for (size_t i = 0; i < def.n; i++)
            seen_add(&s, &def.v[i]);
        for (size_t i = 0; i < l->n; i++) {
            const gs_atom *d = seen_add(&s, &l->v[i]);
            if (!d || d < def.v || d >= def.v + def.n)
                continue;   /* not a default atom (or a duplicate, reported before) */
            /* the file's name is data: an argument, never part of a format */
            fprintf(l->err, "%s:%ld: '%s' is in the default set (ATAB_ATOM(%.63s), %.40s"
                    " line %ld), which tables search first: remove it, or pass --no-default"
                    " if the host does not register the default set\n", l->file,
                    l->v[i].line, l->v[i].name, d->id, base_name(path), d->line);
            l->errors++;
            bad++;
        }
        free(s.v);
    } else if (bad == 0) {
        fprintf(err, "atomtab-genstatic: out of memory\n");
        bad = -1;
    }
    free_list(&def);
    return bad;
}

static int genstatic_main(int argc, char **argv, FILE *err)
{
    gs_opts o;
    gs_list l, ex;
    gs_index ix = {0, 0, 0, NULL, NULL};
    uint64_t total = 0;
    int rc = parse_args(&o, argc, argv, err);
    if (rc == 1)
        return fputs(help, stdout) == EOF || fflush(stdout) != 0 ? 2 : 0;
    if (rc != 0)
        return rc;
    long bad = load_list(&l, o.list, err);
    for (int i = 0; i < o.n_exclude && bad >= 0; i++) {
        long e = load_list(&ex, o.exclude[i], err);
        if (e == 0)
            apply_exclude(&l, &ex);
        bad = e < 0 ? e : bad + e;
        free_list(&ex);
    }
    if (bad == 0 && !o.no_default) {
        long e = check_default(&l, &o, err);
        bad = e < 0 ? e : bad + e;
    }
    if (bad == 0 && l.n == 0)
        fprintf(err, "%s: no atoms in the list\n", o.list), bad = 1;
    if (bad == 0 && layout(&l, &total) != 0)
        fprintf(err, "%s: the atoms pass 2 GiB\n", o.list), bad = 1;
    if (bad == 0 && build_index(&ix, &l) != 0)
        fprintf(err, "%s: cannot build the index (out of memory, or no seed "
                     "gave a perfect hash)\n", o.list), bad = -1;
    if (bad == 0 && write_outputs(&o, &l, &ix, total, err) != 0)
        bad = -1;
    free_list(&l);
    free(ix.disp);
    free(ix.slots);
    return bad == 0 ? 0 : bad < 0 ? 2 : 1;
}

#ifndef GENSTATIC_NO_MAIN
int main(int argc, char **argv)
{
    return genstatic_main(argc, argv, stderr);
}
#endif
