/* SPDX-License-Identifier: MIT */
/*
** hash.c - keys (hash.h): hashing UTF-8 bytes (short keys inline in
** hash.h, longer ones with XXH3), UTF-16 keys measured, converted to UTF-8
** a chunk at a time on the stack (no heap copy), hashed and compared with
** an atom's characters, and the public content hashes.
*/
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "hash.h"

uint64_t atab__hash_bytes(uint64_t seed, const char *s, size_t len)
{
    if (len <= ATAB__SHORT_KEY)
        return atab__hash_short(seed, s, len);   /* inline: hash.h */
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

/* ---- content hashes (public) ---- */

uint64_t atab_hash_bytes(uint64_t seed, const char *s, size_t len)
{
    return s ? atab__hash_bytes(seed, s, len) : atab__hash_bytes(seed, "", 0);
}

uint64_t atab_hash_content(const atab_atom *a, uint64_t seed)
{
    return a ? atab__hash_bytes(seed, atab_chars(a), atab_len(a)) : 0;
}
