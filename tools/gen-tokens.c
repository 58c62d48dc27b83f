/* SPDX-License-Identifier: MIT */
/*
** gen-tokens.c - a large-vocabulary token stream for the benchmarks: the
** C identifiers of header files, in file order with their repeats, one per
** line. Comments, string and character literals and numbers are skipped.
**
** usage: find /usr/include -name '*.h' | LC_ALL=C sort | gen-tokens [-d N] [-n N]
**   reads file names from stdin (one per line) and tokenizes them in that
**   order; stops after the N-th distinct identifier (-d, default 250000)
**   or after N tokens (-n, default: no limit), whichever comes first.
** The output depends only on the files and their order: deterministic for
** a given /usr/include. Prints the counts to stderr, and a warning when
** fewer distinct identifiers than -d were found (install more -dev
** packages for a larger vocabulary); exits 0 unless it cannot write.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A set of the identifiers seen: open addressing over FNV-1a hashes. */
typedef struct set {
    char **keys;
    size_t cap, n;
} set;

static uint64_t fnv(const char *s, size_t len)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * UINT64_C(1099511628211);
    return h;
}

static void die(const char *what)
{
    perror(what);
    exit(2);
}

static void set_grow(set *st);

/* Adds s; returns 1 when it was new. */
static int set_add(set *st, const char *s, size_t len)
{
    if ((st->n + 1) * 2 > st->cap)
        set_grow(st);
    size_t i = (size_t)fnv(s, len) & (st->cap - 1);
    for (; st->keys[i]; i = (i + 1) & (st->cap - 1))
        if (strlen(st->keys[i]) == len && memcmp(st->keys[i], s, len) == 0)
            return 0;
    if (!(st->keys[i] = strndup(s, len)))
        die("strndup");
    st->n++;
    return 1;
}

static void set_grow(set *st)
{
    set old = *st;
    st->cap = old.cap ? old.cap * 2 : 1024;
    st->n = 0;
    if (!(st->keys = calloc(st->cap, sizeof *st->keys)))
        die("calloc");
    for (size_t i = 0; i < old.cap; i++) {
        if (old.keys[i]) {
            set_add(st, old.keys[i], strlen(old.keys[i]));
            free(old.keys[i]);
        }
    }
    free(old.keys);
}

static int is_start(int c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_ident(int c) { return is_start(c) || (c >= '0' && c <= '9'); }

typedef struct gen {
    set seen;
    size_t tokens, max_distinct, max_tokens;
} gen;

/* Emits one identifier; returns 0 when a limit is reached. */
static int emit(gen *g, const char *s, size_t len)
{
    set_add(&g->seen, s, len);
    fwrite(s, 1, len, stdout);
    putchar('\n');
    g->tokens++;
    return g->seen.n < g->max_distinct && (!g->max_tokens || g->tokens < g->max_tokens);
}

/* Skips a literal that started with quote q at p[i-1]; returns the index
** after it (or n). */
static size_t skip_literal(const char *p, size_t i, size_t n, char q)
{
    while (i < n && p[i] != q && p[i] != '\n')
        i += p[i] == '\\' ? 2 : 1;
    return i + 1;
}

/* Tokenizes one file's text; returns 0 when a limit is reached. */
static int tokenize(gen *g, const char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        char c = p[i];
        if (c == '/' && i + 1 < n && p[i + 1] == '*') {
            const char *e = memmem(p + i + 2, n - i - 2, "*/", 2);
            i = e ? (size_t)(e - p) + 2 : n;
        } else if (c == '/' && i + 1 < n && p[i + 1] == '/') {
            const char *e = memchr(p + i, '\n', n - i);
            i = e ? (size_t)(e - p) : n;
        } else if (c == '"' || c == '\'') {
            i = skip_literal(p, i + 1, n, c);
        } else if (is_start((unsigned char)c)) {
            size_t j = i;
            while (j < n && is_ident((unsigned char)p[j]))
                j++;
            if (!emit(g, p + i, j - i))
                return 0;
            i = j;
        } else if (c >= '0' && c <= '9') {
            while (i < n && (is_ident((unsigned char)p[i]) || p[i] == '.'))
                i++;   /* a number, suffixes included */
        } else {
            i++;
        }
    }
    return 1;
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, len = 0, got;
    if (!f)
        return NULL;
    do {
        if (len == cap && !(buf = realloc(buf, cap = cap ? cap * 2 : 65536)))
            die("realloc");
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    fclose(f);
    *n = len;
    return buf;
}

int main(int argc, char **argv)
{
    gen g = {{NULL, 0, 0}, 0, 250000, 0};
    char path[4096];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-d") == 0 && i + 1 < argc)
            g.max_distinct = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            g.max_tokens = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: gen-tokens [-d DISTINCT] [-n TOKENS] < FILE-LIST\n");
            return 2;
        }
    }
    int more = 1;
    while (more && fgets(path, sizeof path, stdin)) {
        size_t n, l = strcspn(path, "\n");
        path[l] = '\0';
        char *text = slurp(path, &n);
        if (!text)
            continue;   /* unreadable: skipped (dangling links) */
        more = tokenize(&g, text, n);
        free(text);
    }
    fprintf(stderr, "gen-tokens: %zu tokens, %zu distinct\n", g.tokens, g.seen.n);
    if (g.seen.n < g.max_distinct)
        fprintf(stderr, "gen-tokens: warning: fewer distinct identifiers than %zu\n",
                g.max_distinct);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
