/* SPDX-License-Identifier: MIT */
/*
** atom.c - the atom object: hashing of keys (UTF-8 or UTF-16), UTF-16 to
** UTF-8 conversion without heap copies, creation, comparison and freeing.
*/
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "table.h"

uint64_t atab__hash_bytes(uint64_t seed, const char *s, size_t len)
{
    if (len <= ATAB__SHORT_KEY)
        return atab__hash_short(seed, s, len);   /* see atab_int.h */
    return XXH3_64bits_withSeed(s, len, seed);
}

/* Is u a high (lead) or low (trail) surrogate? */
#define IS_HIGH(u) (((u) & 0xfc00u) == 0xd800u)
#define IS_LOW(u) (((u) & 0xfc00u) == 0xdc00u)

int atab__utf16_measure(const uint16_t *s, size_t n, size_t *len8)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        uint16_t u = s[i];
        if (u < 0x80)
            len += 1;
        else if (u < 0x800)
            len += 2;
        else if (IS_HIGH(u) && i + 1 < n && IS_LOW(s[i + 1]))
            len += 4, i++;              /* a valid pair */
        else if (IS_HIGH(u) || IS_LOW(u))
            return ATAB_EUTF16;         /* unpaired surrogate */
        else
            len += 3;
        if (len > ATAB_MAX_LEN)
            return ATAB_ETOOLONG;
    }
    *len8 = len;
    return ATAB_OK;
}

/* Encodes one code point starting at s[*i] (input already validated);
** returns the bytes written to dst (1..4). */
static size_t encode_one(char *dst, const uint16_t *s, size_t *i)
{
    uint32_t c = s[*i];
    unsigned char *d = (unsigned char *)dst;
    if (c < 0x80) {
        d[0] = (unsigned char)c;
        return 1;
    }
    if (c < 0x800) {
        d[0] = (unsigned char)(0xc0 | (c >> 6));
        d[1] = (unsigned char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (IS_HIGH(c)) {
        c = 0x10000 + ((c - 0xd800) << 10) + (s[++*i] - 0xdc00u);
        d[0] = (unsigned char)(0xf0 | (c >> 18));
        d[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
        d[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
        d[3] = (unsigned char)(0x80 | (c & 0x3f));
        return 4;
    }
    d[0] = (unsigned char)(0xe0 | (c >> 12));
    d[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
    d[2] = (unsigned char)(0x80 | (c & 0x3f));
    return 3;
}

void atab__utf16_encode(char *dst, const uint16_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst += encode_one(dst, s, &i);
}

/* Converts the next chunk of a UTF-16 key into buf (at most cap bytes,
** whole code points only); advances *pos; returns the bytes written. */
static size_t utf16_chunk(const atab__key *k, size_t *pos, char *buf, size_t cap)
{
    size_t out = 0;
    while (*pos < k->n16 && out + 4 <= cap) {
        out += encode_one(buf + out, k->u16, pos);
        ++*pos;
    }
    return out;
}

uint64_t atab__hash_key_u16(uint64_t seed, const atab__key *k)
{
    XXH3_state_t st;
    char buf[ATAB__U16_STACK];
    size_t pos = 0, got;
    XXH3_INITSTATE(&st);
    XXH3_64bits_reset_withSeed(&st, seed);
    while ((got = utf16_chunk(k, &pos, buf, sizeof buf)) > 0)
        XXH3_64bits_update(&st, buf, got);
    return XXH3_64bits_digest(&st);
}

/* Compares a long UTF-16 key with an atom of the same UTF-8 length. */
static int u16_equals(const atab__key *k, const atab_atom *a)
{
    char buf[ATAB__U16_STACK];
    const char *c = atab_chars(a);
    size_t pos = 0, off = 0, got;
    while ((got = utf16_chunk(k, &pos, buf, sizeof buf)) > 0) {
        if (memcmp(c + off, buf, got) != 0)
            return 0;
        off += got;
    }
    return 1;
}

int atab__key_equals_u16(const atab__key *k, const atab_atom *a)
{
    return atab_len(a) == k->len && u16_equals(k, a);
}

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

void atab__atom_free(atab_table *t, size_t *acct, atab_atom *a)
{
    atab__atoms_free(t, acct, &a, 1);
}


/* ---- content hashes (public) ---- */

uint64_t atab_hash_bytes(uint64_t seed, const char *s, size_t len)
{
    return s ? atab__hash_bytes(seed, s, len) : atab__hash_bytes(seed, "", 0);
}

uint64_t atab_hash_content(const atab_atom *a, uint64_t seed)
{
    return a ? atab__hash_bytes(seed, atab_chars(a), atab_len(a)) : 0;
}
