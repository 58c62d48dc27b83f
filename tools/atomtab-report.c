/* SPDX-License-Identifier: MIT */
/*
** atomtab-report.c - interns a stream of tokens the way a host would (one
** reference kept per token) and prints the table's memory report: an
** about:memory style text tree, or about:memory JSON.
*/
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomtab.h>

#include "datafile.h"   /* find_data_file: the bundled corpus */

#define CORPUS "nodejs-api-docs.atoms"

static const char usage[] =
    "usage: atomtab-report [--json] [--release] [--process NAME] [FILE|-]...\n"
    "Interns each line of each FILE ('-' for stdin) as one token, keeping a\n"
    "reference per token as a host would, then prints the table's memory\n"
    "report. Empty lines are skipped, and a CR ending a line is not part of its\n"
    "token. With no FILE: the bundled corpus\n"
    "(" CORPUS ", next to the program or in ../share/atomtab/).\n"
    "  --json          about:memory JSON instead of the text tree\n"
    "  --release       release every reference and sweep before reporting\n"
    "  --process NAME  the JSON's process name (default: atomtab-report (pid N))\n"
    "The report adds the process's heap-allocated (the allocator's total, for\n"
    "about:memory's heap-unclassified), resident and resident-unique bytes.\n";

typedef struct held {
    const atab_atom **a;
    size_t n, cap;
} held;

/* Keeps one reference; returns 0, or -1 when out of memory. */
static int hold(held *h, const atab_atom *a)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 4096;
        const atab_atom **na = realloc(h->a, cap * sizeof *na);
        if (!na)
            return -1;
        h->a = na;
        h->cap = cap;
    }
    h->a[h->n++] = a;
    return 0;
}

/* Interns every line of f; returns 0, or -1 after printing why. */
static int intern_stream(atab_table *t, FILE *f, const char *name, held *h)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    errno = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        if (len > 0 && line[len - 1] == '\n')
            len--;
        if (len > 0 && line[len - 1] == '\r')   /* CRLF lines, as atomtab-genstatic takes them */
            len--;
        if (len == 0)
            continue;
        const atab_atom *a = atab_intern(t, line, (size_t)len);
        errno = 0;
        if (!a || hold(h, a) != 0) {
            fprintf(stderr, "atomtab-report: %s: %s\n", name,
                    a ? "out of memory" : atab_strerror(atab_last_error()));
            rc = -1;
            break;
        }
    }
    /* getline says -1 at the end and on errors (ENOMEM for a line too
    ** long, EISDIR, EIO): only feof tells them apart */
    if (rc == 0 && (ferror(f) || !feof(f))) {
        fprintf(stderr, "atomtab-report: cannot read %s: %s\n", name,
                strerror(errno ? errno : EIO));
        rc = -1;
    }
    free(line);
    return rc;
}

static int intern_file(atab_table *t, const char *path, held *h)
{
    if (strcmp(path, "-") == 0)
        return intern_stream(t, stdin, "<stdin>", h);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "atomtab-report: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }
    int rc = intern_stream(t, f, path, h);
    fclose(f);
    return rc;
}

typedef struct args {
    int json, release, nfiles;
    const char *process;
    char **files;
} args;

/* Parses the command line (options anywhere, "--" ends them); file names
** are gathered at the front of argv. Returns 0; 1 after --help; 2 after a
** usage error. */
static int parse(int argc, char **argv, args *a)
{
    int opts = 1;
    memset(a, 0, sizeof *a);
    a->files = argv + 1;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!opts || s[0] != '-' || !s[1])
            a->files[a->nfiles++] = argv[i];   /* never ahead of i */
        else if (strcmp(s, "--") == 0)
            opts = 0;
        else if (strcmp(s, "--json") == 0)
            a->json = 1;
        else if (strcmp(s, "--release") == 0)
            a->release = 1;
        else if (strcmp(s, "--process") == 0) {
            if (i + 1 == argc) {
                fprintf(stderr, "atomtab-report: --process needs a name\n%s", usage);
                return 2;
            }
            a->process = argv[++i];
        } else if (strcmp(s, "--help") == 0) {
            fputs(usage, stdout);
            return 1;
        } else {
            fprintf(stderr, "atomtab-report: unknown option %s\n%s", s, usage);
            return 2;
        }
    }
    return 0;
}

static int intern_all(atab_table *t, const args *a, held *h)
{
    char corpus[PATH_MAX];
    if (a->nfiles == 0) {
        if (find_data_file(CORPUS, corpus, sizeof corpus) != 0) {
            fprintf(stderr, "atomtab-report: bundled corpus " CORPUS
                    " not found; name a token file\n");
            return -1;
        }
        return intern_file(t, corpus, h);
    }
    for (int i = 0; i < a->nfiles; i++)
        if (intern_file(t, a->files[i], h) != 0)
            return -1;
    return 0;
}

/* jemalloc's mallctl when the tool runs on it (linked with -ljemalloc,
** the Makefile's default), else NULL: the C library's malloc. */
int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp,
            size_t newlen) __attribute__((weak));

/* The allocator's total of live bytes: jemalloc's stats.allocated (after
** an epoch write refreshes it), else glibc's mallinfo2 (arena + mmap'ed
** chunks in use). Returns 0 and fills *out, or -1 when unknown. */
static int heap_allocated(int64_t *out)
{
    if (mallctl) {
        uint64_t epoch = 1;
        size_t alloc, len = sizeof alloc;
        if (mallctl("epoch", NULL, NULL, &epoch, sizeof epoch) != 0 ||
            mallctl("stats.allocated", &alloc, &len, NULL, 0) != 0)
            return -1;
        *out = (int64_t)alloc;
        return 0;
    }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 mi = mallinfo2();
    *out = (int64_t)(mi.uordblks + mi.hblkhd);
    return 0;
#else
    return -1;
#endif
}

/* Resident bytes: the second field of /proc/self/statm, in pages. Returns
** 0 and fills *out, or -1. */
static int resident(int64_t *out)
{
    long size, pages, psz = sysconf(_SC_PAGESIZE);
    FILE *f = fopen("/proc/self/statm", "r");
    int n = f ? fscanf(f, "%ld %ld", &size, &pages) : 0;
    if (f)
        fclose(f);
    if (n != 2 || psz <= 0)
        return -1;
    *out = (int64_t)pages * psz;
    return 0;
}

/* Resident bytes not shared with another process (the unique set size):
** the Private_Clean and Private_Dirty lines of /proc/self/smaps_rollup
** (kB), summed, as Firefox's own resident-unique reporter reads them; of
** /proc/self/smaps, every mapping's, on kernels before 4.14. Returns 0 and
** fills *out, or -1. */
static int resident_unique(int64_t *out)
{
    char line[256];
    long long kb, sum = 0;
    int lines = 0;
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f)
        f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Private_Clean: %lld kB", &kb) == 1 ||
            sscanf(line, "Private_Dirty: %lld kB", &kb) == 1) {
            sum += kb;
            lines++;
        }
    fclose(f);
    if (lines == 0)
        return -1;
    *out = (int64_t)sum * 1024;
    return 0;
}

/* The process-wide entries about:memory expects: heap-allocated (for
** heap-unclassified), resident and resident-unique (its process list
** sizes a process by resident-unique, and shows "NaN" without it).
** Returns how many it filled. */
static size_t process_entries(atab_report_entry *x)
{
    size_t n = 0;
    int64_t v;
    if (heap_allocated(&v) == 0)
        x[n++] = (atab_report_entry){"heap-allocated", ATAB_KIND_OTHER,
            ATAB_UNITS_BYTES, v, mallctl
            ? "Memory the heap allocator handed out and not freed "
              "(jemalloc's stats.allocated)."
            : "Memory the heap allocator handed out and not freed "
              "(glibc's mallinfo2: uordblks + hblkhd)."};
    if (resident(&v) == 0)
        x[n++] = (atab_report_entry){"resident", ATAB_KIND_OTHER,
            ATAB_UNITS_BYTES, v,
            "Memory mapped by the process that is present in physical "
            "memory (/proc/self/statm)."};
    if (resident_unique(&v) == 0)
        x[n++] = (atab_report_entry){"resident-unique", ATAB_KIND_OTHER,
            ATAB_UNITS_BYTES, v,
            "Memory mapped by the process that is present in physical "
            "memory and not shared with any other process: its unique set "
            "size (private clean + private dirty, /proc/self/smaps_rollup)."};
    return n;
}

static int dump(atab_table *t, const args *a)
{
    char process[64];
    atab_report_entry x[3];
    atab_report_options o = {NULL, x, 0};
    o.n_extra = process_entries(x);
    if (!a->json)
        return atab_report_tree_ex(t, &o, atab_write_file, stdout);
    snprintf(process, sizeof process, "atomtab-report (pid %ld)", (long)getpid());
    return atab_report_json_ex(t, a->process ? a->process : process, &o,
                               atab_write_file, stdout);
}

#ifndef REPORT_NO_MAIN   /* defined by test/fuzz/fuzz_tools.c, which includes this file */
int main(int argc, char **argv)
{
    args a;
    held h = {0};
    int rc = parse(argc, argv, &a);
    if (rc != 0)
        return rc == 1 ? 0 : rc;
    atab_table *t = atab_table_new(NULL);
    if (!t) {
        fprintf(stderr, "atomtab-report: %s\n", atab_strerror(atab_last_error()));
        return 1;
    }
    rc = intern_all(t, &a, &h);
    fprintf(stderr, "atomtab-report: %zu tokens interned, %zu dynamic atoms\n",
            h.n, atab_count(t));
    if (rc == 0 && a.release) {
        for (size_t i = 0; i < h.n; i++)
            atab_release(t, h.a[i]);
        h.n = 0;
        fprintf(stderr, "atomtab-report: released all, swept %zu atoms\n", atab_gc(t));
    }
    if (rc == 0 && (dump(t, &a) != 0 || fflush(stdout) != 0)) {
        perror("atomtab-report: stdout");
        rc = -1;
    }
    for (size_t i = 0; i < h.n; i++)
        atab_release(t, h.a[i]);
    free(h.a);
    atab_table_free(t);
    return rc == 0 ? 0 : 1;
}
#endif
