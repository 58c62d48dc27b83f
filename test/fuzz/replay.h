/* SPDX-License-Identifier: MIT */
/*
** replay.h - the replay driver's walk, shared by the fuzz targets built
** with -DFUZZ_STANDALONE: each file named, and each file in a directory
** named (dot files skipped), read whole into the driver's buffer (up to
** its size) and run through the target's LLVMFuzzerTestOneInput.
*/
#ifndef FUZZ_REPLAY_H
#define FUZZ_REPLAY_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Runs the file at path, or every file under the directory; returns how
** many. A path that cannot be read ends the program (exit 1), the message
** naming `prog`. FUZZ_VERBOSE set: each file's name on stderr first. */
static long replay_path(const char *prog, const char *path, uint8_t *buf, size_t cap)
{
    struct stat sb;
    long n = 0;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "%s: no such file or directory: %s\n", prog, path);
        exit(1);
    }
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *de;
        char full[4096];
        while (d && (de = readdir(d)) != NULL) {
            if (de->d_name[0] == '.')
                continue;
            snprintf(full, sizeof full, "%s/%s", path, de->d_name);
            n += replay_path(prog, full, buf, cap);
        }
        if (d)
            closedir(d);
        return n;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open %s\n", prog, path);
        exit(1);
    }
    size_t len = fread(buf, 1, cap, f);
    fclose(f);
    if (getenv("FUZZ_VERBOSE"))
        fprintf(stderr, "%s: %s\n", prog, path);
    LLVMFuzzerTestOneInput(buf, len);
    return 1;
}

#endif
