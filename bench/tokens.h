/* SPDX-License-Identifier: MIT */
/*
** tokens.h - what the benchmarks share: a token file (one token per line)
** read into NUL-terminated strings, in place; the warm table they start
** from; the CPU's name for their headers. Header-only: each benchmark is
** one program.
*/
#ifndef ATAB_BENCH_TOKENS_H
#define ATAB_BENCH_TOKENS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomtab.h>

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

/* Warms t: every distinct token interned once and held (a lookup finds a
** repeat, and its reference is dropped). On failure says so, naming
** `prog`, and exits. */
static inline void tokens_warm(atab_table *t, const tokens *k, const char *prog)
{
    for (size_t j = 0; j < k->n; j++) {
        const atab_atom *a = atab_lookup(t, k->s[j], k->len[j]);
        if (a) {
            atab_release(t, a);
        } else if (!atab_intern(t, k->s[j], k->len[j])) {
            fprintf(stderr, "%s: %s\n", prog, atab_strerror(atab_last_error()));
            exit(1);
        }
    }
}

/* The CPU's model name from /proc/cpuinfo, or "unknown". */
static inline void cpu_model(char *cpu, size_t size)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    snprintf(cpu, size, "unknown");
    while (f && fgets(line, sizeof line, f)) {
        char *p = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && p) {
            snprintf(cpu, size, "%.*s", (int)strcspn(p + 2, "\n"), p + 2);
            break;
        }
    }
    if (f)
        fclose(f);
}

#endif
