/* SPDX-License-Identifier: MIT */
/*
** atom.c - the atom object: its creation (from a UTF-8 or UTF-16 key).
** Keys' hashing and comparison are hash.c's, freeing chunk.c's.
*/
#include "table.h"

static int all_ascii(const char *s, size_t len)
{
    uint64_t acc = 0, w;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {   /* a word at a time */
        memcpy(&w, s + i, 8);
        acc |= w;
    }
    for (; i < len; i++)
        acc |= (unsigned char)s[i];
    return !(acc & UINT64_C(0x8080808080808080));
}

atab_atom *atab__atom_new(atab_table *t, size_t *acct, const atab__key *k, atab_atom *block)
{
    atab_atom *a = block ? block : atab__alloc_in(t, acct, atab__atom_bytes(k->len));
    if (!a)
        return NULL;
    if (!block && (((uintptr_t)a & 7) || (uint64_t)(uintptr_t)a >> 48)) {
        /* slots and caches pack the address (table.h, thread.h): a block
        ** the allocator should not have given is as good as none */
        atab__free_in(t, acct, a, atab__atom_bytes(k->len));
        return atab__fail(ATAB_ENOMEM);
    }
    if (k->s && k->len <= ATAB__SHORT_KEY)
        return atab__atom_init_short(a, k->s, k->len);
    char *c = (char *)(a + 1);
    if (k->s)
        memcpy(c, k->s, k->len);
    else
        atab__utf16_encode(c, k->u16, k->n16);
    int ascii = all_ascii(c, k->len);
    c[k->len] = '\0';
    uint32_t flags = ascii ? ATAB__ASCII : 0;
    a->atab__len_flags = (uint32_t)(k->len << ATAB__LEN_SHIFT) | flags;
    a->atab__refcnt = 1;
    return a;
}

