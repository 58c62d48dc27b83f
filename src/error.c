/* SPDX-License-Identifier: MIT */
/*
** error.c - per-thread last error and status strings.
*/
#include "base.h"

static _Thread_local atab_status last_error ATAB__TLS = ATAB_OK;

void atab__set_error(atab_status code)
{
    last_error = code;
}

void *atab__fail(atab_status code)
{
    last_error = code;
    return NULL;
}

atab_status atab_last_error(void)
{
    return last_error;
}

const char *atab_strerror(int code)
{
    switch (code) {
    case ATAB_OK: return "success";
    case ATAB_EINVAL: return "invalid argument (NULL table or string, bad option, or not an atom)";
    case ATAB_ETOOLONG: return "string too long (longer than ATAB_MAX_LEN bytes)";
    case ATAB_EUTF16: return "invalid UTF-16 (unpaired surrogate)";
    case ATAB_ENOMEM: return "out of memory";
    case ATAB_ELIMIT: return "the table's memory limit would be exceeded";
    case ATAB_EREFS: return "reference count misuse (released more often than referenced)";
    case ATAB_EABI: return "static set generated for another ATAB_STATIC_ABI (regenerate it with "
                           "this library's atomtab-genstatic)";
    default: return "unknown error code";
    }
}

const char *atab_version(void)
{
    return ATAB_VERSION_STRING;
}
