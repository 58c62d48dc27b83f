/*
** tokens.h - a token file (one token per line) read into NUL-terminated
** strings, in place, for the benchmarks (suite.c, threads.c, membytes.c).
** Header-only: each benchmark is one program.
*/
#ifndef ATAB_BENCH_TOKENS_H
#define ATAB_BENCH_TOKENS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tokens {
    char *text;         /* the file, each '\n' made a NUL */
    const char **s;     /* the tokens, in file order; s[i][len[i]] == 0 */
    size_t *len;
    size_t n;
} tokens;

/* Reads `path` into *t, empty lines skipped; on failure says so, naming
** `prog`, and exits (a benchmark without its input has nothing to do). */
static void tokens_load(const char *path, tokens *t, const char *prog)
{
    FILE *f = fopen(path, "rb");
    long size;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0) {
        perror(path);
        exit(1);
    }
    rewind(f);
    t->text = malloc((size_t)size + 1);
    t->s = malloc(((size_t)size / 2 + 1) * sizeof *t->s);
    t->len = malloc(((size_t)size / 2 + 1) * sizeof *t->len);
    if (!t->text || !t->s || !t->len || fread(t->text, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "%s: cannot read %s\n", prog, path);
        exit(1);
    }
    fclose(f);
    t->text[size] = '\n';
    t->n = 0;
    for (char *p = t->text, *end = t->text + size; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p) + 1);
        *nl = '\0';
        if (nl > p) {
            t->s[t->n] = p;
            t->len[t->n++] = (size_t)(nl - p);
        }
        p = nl + 1;
    }
}

#endif
