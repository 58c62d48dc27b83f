/*
** atomtab-genstatic.c - generates a static atom set: a .c file with the
** atoms as const data and a perfect-hash index over them, and a .h file
** declaring the set and a macro for each atom's address.
**
** Usage: atomtab-genstatic --name NAME [--macro MACRO] [--export]
**                          [--exclude LIST]... LIST OUT.c OUT.h
**
**   --name NAME     the set's C name: OUT.c defines `const atab_static_set
**                   NAME` (pass &NAME in atab_options.static_sets)
**   --macro MACRO   the per-atom macro (default: NAME in capitals + _ATOM):
**                   MACRO(id) is the atom's `const atab_atom *`, a
**                   constant expression
**   --export        declare the set with default visibility (ATAB_API), for
**                   a set that a shared library exports (the default set)
**   --exclude LIST  leave out the strings of another list (e.g. the default
**                   set's, so a host set does not shadow it)
**
** LIST format, one line each:
**   name [identifier]   an atom. The name runs to the first space or tab;
**                       written "..." it may hold spaces ("" is the empty
**                       atom). The identifier (default: the name) must be a
**                       C identifier; names that are not need one:
**                       "data-id data_id". Keywords are fine (`for`): the
**                       macro pastes them onto a prefix.
**   # text              a comment
**   (empty)             separates groups of atoms; not at the start or the
**                       end of the list, and never two in a row (in a
**                       one-per-line list a stray empty line reads as an
**                       empty atom: write "" for that)
** Errors, each with its line number: duplicate names or identifiers, an
** empty line out of place, a line of only spaces, leading whitespace, a
** name longer than ATAB_STATIC_MAXLEN bytes, a name with control bytes or
** invalid UTF-8 (UTF-16 lookups could never find it), an invalid or
** over-long identifier, text after the identifier. Exit status 0, 1 on
** errors in a list, 2 on bad usage or I/O errors.
**
** The index is CHD (compress, hash and displace): keys go to buckets of
** about four by a fixed hash (src/static_hash.h); buckets, largest first,
** each get the first displacement (d1, d2) that puts all their keys on free
** slots; there are as many slots as atoms. A lookup is one hash, one
** displacement load, one slot load and one comparison. Should no
** displacement fit (rare), the generator tries the next hash seed; the seed
** goes into the set. Everything is decided here: a table registers a set
** by storing a pointer to it.
*/
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L   /* getline, strdup */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomtab.h"
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
    uint32_t off;            /* byte offset in the set's atoms */
} gs_atom;

typedef struct gs_list {
    gs_atom *v;
    size_t n, cap;
    const char *file;        /* for messages */
    long errors;
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
                     long line)
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
    a->off = 0;
    l->n++;
    return 0;
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
    if (!*id) {
        *end = '\0';
        if (!is_ident(name))
            return gs_error(l, line,
                            "'%s' is not a C identifier: give one after it "
                            "(\"data-id data_id\")", name);
        id = name;
    }
    if (!is_ident(id))
        return gs_error(l, line, "'%s' is not a C identifier", id);
    if (strlen(id) > GS_MAX_ID)
        return gs_error(l, line, "identifier too long: '%s' (at most 63 characters)", id);
    if (push_atom(l, name, len, id, line) != 0)
        return gs_error(l, line, "out of memory%s", "");
    return 0;
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
    while ((got = getline(&buf, &cap, in)) >= 0) {
        size_t n = (size_t)got;
        line++;
        if (n && buf[n - 1] == '\n')
            buf[--n] = '\0';
        if (strlen(buf) != n)
            gs_error(l, line, "NUL byte in the line%s", "");
        else
            parse_line(l, buf, line, &prev);
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
            snprintf(msg, sizeof msg, "duplicate identifier '%%s' (first on line %ld)",
                     o->line);
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
    if (seen_init(&s, ex->n, 0) != 0)
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

/* Builds the index; 0, or -1 (out of memory or no seed worked). */
static int build_index(gs_index *ix, const gs_list *l)
{
    ix->n_slots = (uint32_t)l->n;
    ix->n_buckets = (uint32_t)((l->n + 3) / 4);
    ix->disp = calloc(ix->n_buckets, sizeof *ix->disp);
    ix->slots = calloc(ix->n_slots, sizeof *ix->slots);
    if (!ix->disp || !ix->slots)
        return -1;
    for (ix->seed = 0; ix->seed < 64; ix->seed++) {
        int rc = build_with_seed(ix, l);
        if (rc <= 0)
            return rc;
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

static int is_ascii(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] >= 0x80)
            return 0;
    return 1;
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

typedef struct gs_opts {
    const char *name, *macro, *list, *out_c, *out_h;
    const char *exclude[GS_MAX_EXCLUDE];
    int n_exclude, export_;
} gs_opts;

/* The miss filter: 2^log2 bits, at least 8 per atom (about 1 false hit in
** 12 for keys that are no atom), the bit of every atom set. Writes the
** array; returns log2. Without memory for it every bit is set: lookups
** still find every atom, only misses hash. */
static unsigned write_filter(FILE *f, const gs_opts *o, const gs_list *l)
{
    unsigned log2 = 9;
    while (((uint64_t)1 << log2) < (uint64_t)l->n * 8 && log2 < 31)
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
    fprintf(f, "struct %s__blob {\n", o->name);
    for (size_t i = 0; i < l->n; i++)
        fprintf(f, "    struct { atab_atom h; char c[%zu]; } a%zu;\n", l->v[i].len + 1, i);
    fprintf(f, "};\n\nconst struct %s__blob %s_atoms = {\n", o->name, o->name);
    for (size_t i = 0; i < l->n; i++) {
        const gs_atom *a = &l->v[i];
        unsigned flags = ATAB__STATIC | (is_ascii(a->name, a->len) ? ATAB__ASCII : 0);
        fprintf(f, "    {{0x%08lxu, 0}, \"", (unsigned long)(a->len << ATAB__LEN_SHIFT | flags));
        put_cstring(f, a->name, a->len);
        fprintf(f, "\"},\n");
    }
    fprintf(f, "};\n\n");
    for (size_t i = 0; i < l->n; i++)
        fprintf(f, "_Static_assert(offsetof(struct %s__blob, a%zu) == %lu, \"layout\");\n",
                o->name, i, (unsigned long)l->v[i].off);
    fprintf(f, "_Static_assert(sizeof(struct %s__blob) == %lu, \"layout\");\n\n", o->name,
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
    fprintf(f, "    ATAB_STATIC_ABI, %zu, %zu, %lu, %lu,\n", l->n, maxlen,
            (unsigned long)ix->n_buckets, (unsigned long)ix->n_slots);
    fprintf(f, "    (uint32_t)(sizeof %s_atoms + sizeof %s_index_disp + sizeof %s_index_slots + "
            "sizeof %s_index_filter),\n", o->name, o->name, o->name, o->name);
    fprintf(f, "    UINT64_C(%lu), &%s_atoms, %s_index_disp, %s_index_slots, \"%s\",\n",
            (unsigned long)ix->seed, o->name, o->name, o->name, o->name);
    fprintf(f, "    %u, %s_index_filter\n};\n", log2, o->name);
}

static void write_h(FILE *f, const gs_opts *o, const gs_list *l)
{
    const char *api = o->export_ ? "ATAB_API " : "";
    fprintf(f, "/* Generated by atomtab-genstatic from %s: do not edit. */\n",
            base_name(o->list));
    fprintf(f, "#ifndef %s__GENERATED_H\n#define %s__GENERATED_H\n\n", o->name, o->name);
    fprintf(f, "#include <atomtab.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    fprintf(f, "/* The set: pass &%s in atab_options.static_sets. */\n", o->name);
    fprintf(f, "extern %sconst atab_static_set %s;\n", api, o->name);
    fprintf(f, "struct %s__blob;\nextern %sconst struct %s__blob %s_atoms;\n\n", o->name,
            api, o->name, o->name);
    fprintf(f, "/* Atoms in the set. */\n#define %s_COUNT %zu\n\n", o->macro, l->n);
    fprintf(f, "/* %s(id): the atom named by identifier id (a constant expression). */\n",
            o->macro);
    fprintf(f, "#define %s(id) ((const atab_atom *)(const void *) \\\n"
               "    ((const char *)&%s_atoms + %s__##id))\n\n", o->macro, o->name, o->name);
    fprintf(f, "enum %s__offsets {\n", o->name);
    for (size_t i = 0; i < l->n; i++)
        fprintf(f, "    %s__%s = %lu,\n", o->name, l->v[i].id, (unsigned long)l->v[i].off);
    fprintf(f, "    %s__end_ = 0\n};\n\n", o->name);
    fprintf(f, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
}

/* Writes both files; 0, or -1 with a message. */
static int write_outputs(const gs_opts *o, const gs_list *l, const gs_index *ix,
                         uint64_t total, FILE *err)
{
    size_t maxlen = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].len > maxlen)
            maxlen = l->v[i].len;
    FILE *c = fopen(o->out_c, "w"), *h = fopen(o->out_h, "w");
    if (c)
        write_c(c, o, l, ix, total, maxlen);
    if (h)
        write_h(h, o, l);
    int bad = !c || !h || ferror(c) || ferror(h);
    if (c && fclose(c) != 0)
        bad = 1;
    if (h && fclose(h) != 0)
        bad = 1;
    if (bad) {
        fprintf(err, "atomtab-genstatic: cannot write %s / %s: %s\n", o->out_c, o->out_h,
                strerror(errno));
        remove(o->out_c);
        remove(o->out_h);
        return -1;
    }
    return 0;
}

/* ---- command line ---- */

static int usage(FILE *err)
{
    fprintf(err, "usage: atomtab-genstatic --name NAME [--macro MACRO] [--export]\n"
                 "                         [--exclude LIST]... LIST OUT.c OUT.h\n");
    return 2;
}

static char gs_macro_buf[GS_MAX_ID + 8];

static int parse_args(gs_opts *o, int argc, char **argv, FILE *err)
{
    const char *pos[3];
    int npos = 0;
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--export") == 0)
            o->export_ = 1;
        else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
            o->name = argv[++i];
        else if (strcmp(argv[i], "--macro") == 0 && i + 1 < argc)
            o->macro = argv[++i];
        else if (strcmp(argv[i], "--exclude") == 0 && i + 1 < argc &&
                 o->n_exclude < GS_MAX_EXCLUDE)
            o->exclude[o->n_exclude++] = argv[++i];
        else if (argv[i][0] == '-' || npos == 3)
            return usage(err);
        else
            pos[npos++] = argv[i];
    }
    if (npos != 3 || !o->name || !is_ident(o->name) || strlen(o->name) > GS_MAX_ID ||
        (o->macro && !is_ident(o->macro)))
        return usage(err);
    o->list = pos[0], o->out_c = pos[1], o->out_h = pos[2];
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
** the file cannot be read. */
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
    return check_duplicates(l);
}

static int genstatic_main(int argc, char **argv, FILE *err)
{
    gs_opts o;
    gs_list l, ex;
    gs_index ix = {0, 0, 0, NULL, NULL};
    uint64_t total = 0;
    int rc = parse_args(&o, argc, argv, err);
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
