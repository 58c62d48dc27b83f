/* SPDX-License-Identifier: MIT */
/*
** datafile.h - how the tools find a data file installed with them: beside
** the program (build trees), else in ../share/atomtab/ from it (installs).
** Included by atomtab-genstatic.c (default.atoms) and atomtab-report.c
** (the bundled corpus).
*/
#ifndef ATAB_TOOLS_DATAFILE_H
#define ATAB_TOOLS_DATAFILE_H

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* 0 and the path of `name` in buf, or -1 (not found, or buf too small). */
static int find_data_file(const char *name, char *buf, size_t cap)
{
    static const char *const dirs[] = {"/", "/../share/atomtab/"};
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if ((size_t)snprintf(buf, cap, "%s%s%s", exe, dirs[i], name) < cap &&
            access(buf, R_OK) == 0)
            return 0;
    return -1;
}

#endif
