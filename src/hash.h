/* SPDX-License-Identifier: MIT */
/*
** hash.h - keys: how a string is hashed (short keys inline, long ones with
** XXH3 in hash.c) and compared with an atom's characters.
*/
#ifndef ATAB_HASH_H
#define ATAB_HASH_H

#include "base.h"

/* What is being looked up: UTF-8 bytes, or UTF-16 units too long to
** convert on the stack. `len` is always the UTF-8 length. */
typedef struct atab__key {
    const char *s;          /* UTF-8 bytes, or NULL for a UTF-16 key */
    const uint16_t *u16;    /* UTF-16 units when s is NULL */
    size_t n16;             /* units in u16 */
    size_t len;             /* UTF-8 bytes */
    uint64_t hash;          /* atab__hash_bytes of the UTF-8 bytes */
} atab__key;

#define ATAB__U16_STACK 256 /* UTF-16 keys up to this many UTF-8 bytes are
                               converted on the stack */

ATAB__HIDDEN uint64_t atab__hash_bytes(uint64_t seed, const char *s, size_t len);

/* Keys of at most ATAB__SHORT_KEY bytes (most atoms) hash inline on the
** hit path: up to 8 bytes, the key as one word (atab__hash_pre_word); 9 to 16
** bytes, the key's first and last words (overlapping; every byte is in one
** of them), each keyed, multiplied as 128 bits and the halves folded; 17
** to 32 bytes, its first and last 16 bytes so, two products folded into
** one; then the length, folded once more (the multiply-fold mix of wyhash
** and rapidhash). atab__hash_bytes gives the
** same value: it calls this for short keys, XXH3 for longer ones. Long
** UTF-16 keys (atab__hash_key_u16) are always longer. */
#define ATAB__SHORT_KEY 32
#if ATAB__X86_64_ASM
static inline uint64_t atab__fold_mul(uint64_t a, uint64_t b)
{
    uint64_t hi;   /* the product in rdx:rax, folded where it lands (GCC moves it twice) */
    __asm__("mulq %2\n\txorq %%rdx, %%rax" : "+a"(a), "=&d"(hi) : "rm"(b) : "cc");
    return a;
}
#elif defined(__SIZEOF_INT128__)
static inline uint64_t atab__fold_mul(uint64_t a, uint64_t b)
{
    __extension__ typedef unsigned __int128 u128;
    u128 m = (u128)a * b;
    return (uint64_t)m ^ (uint64_t)(m >> 64);
}
#else
static inline uint64_t atab__fold_mul(uint64_t a, uint64_t b)
{
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
    uint64_t lo = (mid << 32) | (uint32_t)ll;
    uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    return lo ^ hi;
}
#endif

/* The seed's keys, made once per table (atab__hash_keys). */
typedef struct atab__hkeys {
    uint64_t a;   /* keys the first word */
    uint64_t b;   /* keys the last word (the second, past 16 bytes) */
    uint64_t m;   /* the final multiplier (odd) */
    uint64_t c;   /* past 16 bytes: keys the last 16 bytes' first word */
    uint64_t d;   /* and their last */
} atab__hkeys;

static inline atab__hkeys atab__hash_keys(uint64_t seed)
{
    atab__hkeys k;
    /* the seed keys both factors, so no key can zero one of them on its
    ** own (that would make every key with that word collide) */
    k.a = seed ^ UINT64_C(0x2d358dccaa6c78a5);
    k.b = ((seed << 32 | seed >> 32) ^ UINT64_C(0x8bb84b93962eacc9)) | 1;
    k.m = (seed ^ UINT64_C(0x9e3779b97f4a7c15)) | 1;
    k.c = (seed << 16 | seed >> 48) ^ UINT64_C(0x5851f42d4c957f2d);
    k.d = (seed << 48 | seed >> 16) ^ UINT64_C(0x14057b7ef767814f);
    return k;
}

static inline uint64_t atab__load_le64(const char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

static inline uint32_t atab__load_le32(const char *p)
{
    uint32_t w;
    memcpy(&w, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap32(w);
#endif
    return w;
}

/* A key of 1 to 8 bytes is hashed and compared as one word: its bytes,
** little-endian, the rest 0. atab__word_end reads it with the one load
** that ends at the key's end, shifted down: the 8 - len bytes before p
** must be readable (an atom's header is; a host's key, where its page
** holds them: intern.c). */
#if ATAB__X86_64_ASM
static inline uint64_t atab__word_end(const char *p, size_t len)
{
    uint64_t w;   /* shr takes its count mod 64: -8 * len is 64 - 8 * len, in one imul */
    __asm__("imull $-8, %k2, %%ecx\n\t"
            "movq %1, %0\n\t"
            "shrq %%cl, %0"
            : "=&r"(w)
            : "m"(*(const char(*)[8])(const void *)(p + len - 8)), "r"(len)
            : "rcx", "cc");
    return w;
}
#else
static inline uint64_t atab__word_end(const char *p, size_t len)
{
    return atab__load_le64(p + len - 8) >> ((64 - 8 * len) & 63);
}
#endif

/* The same word from the key's own bytes alone: two 4-byte loads (the
** bytes they share land on themselves), or the first, middle and last
** byte of 1 to 3. */
static inline uint64_t atab__word_safe(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    if (len >= 4)
        return atab__load_le32(s) | (uint64_t)atab__load_le32(s + len - 4) << (8 * (len - 4));
    return p[0] | (uint64_t)p[len / 2] << (8 * (len / 2)) | (uint64_t)p[len - 1] << (8 * (len - 1));
}

/* The bits of a short key's hash that the threads' caches use (an
** entry's set and tag, thread.h; table.h leaves bits 0-34 to them) come
** from the keys' product before the length's multiply, so that a hit finds
** its entry a multiply sooner: atab__hash_pre gives that product, which
** has the length in it too (it keys the first word). */
#define ATAB__HASH_EARLY UINT64_C(0x3fff)

/* Every short key's last step: the length folded into the keys' product h,
** whose ATAB__HASH_EARLY bits stay. */
static inline uint64_t atab__hash_len(const atab__hkeys *k, uint64_t h, size_t len)
{
    uint64_t lc = len ^ UINT64_C(0x4b33a62ed433d4a3);
    __asm__("" : "+r"(lc));   /* lc in a register before the multiply: GCC would
                                 reorder the xors and move the product twice */
    return (atab__fold_mul(lc ^ h, k->m) & ~ATAB__HASH_EARLY) | (h & ATAB__HASH_EARLY);
}

/* The keys' product of a key of 1 to 8 bytes from its word w: keyed (the
** key with the length added) and multiplied as 128 bits by the second key,
** the halves folded. */
static inline uint64_t atab__hash_pre_word(const atab__hkeys *k, uint64_t w, size_t len)
{
    return atab__fold_mul(w ^ (k->a + len), k->b);
}

/* The keys' product of a key of 1 to ATAB__SHORT_KEY bytes. */
ATAB__INLINE uint64_t atab__hash_pre(const atab__hkeys *k, const char *s, size_t len)
{
    if (len - 1 < 8)
        return atab__hash_pre_word(k, atab__word_safe(s, len), len);
    const unsigned char *p = (const unsigned char *)s;
    uint64_t a = 0, b = 0, ka = k->a + len;
    if (len > 16) {
        uint64_t c, d;
        memcpy(&a, p, 8), memcpy(&b, p + 8, 8);
        memcpy(&c, p + len - 16, 8), memcpy(&d, p + len - 8, 8);
        return atab__fold_mul(a ^ ka, b ^ k->b) ^ atab__fold_mul(c ^ k->c, d ^ k->d);
    }
    if (len > 0)   /* 9 to 16 */
        memcpy(&a, p, 8), memcpy(&b, p + len - 8, 8);
    return atab__fold_mul(a ^ ka, b ^ k->b);
}

ATAB__INLINE uint64_t atab__hash_short_keyed(const atab__hkeys *k, const char *s, size_t len)
{
    return atab__hash_len(k, atab__hash_pre(k, s, len), len);
}

/* atab__hash_pre of an atom's characters c[0..len), len 0..16 (0: an
** empty dynamic atom, on a table without the default set): 1 to 8 bytes
** read in place (the header before c is the atom's). */
static inline uint64_t atab__hash_atom_pre(const atab__hkeys *k, const char *c, size_t len)
{
    if (len - 1 < 8)
        return atab__hash_pre_word(k, atab__word_end(c, len), len);
    return atab__hash_pre(k, c, len);
}

static inline uint64_t atab__hash_short(uint64_t seed, const char *s, size_t len)
{
    atab__hkeys k = atab__hash_keys(seed);
    return atab__hash_short_keyed(&k, s, len);
}

static inline uint64_t atab__hash_inline(uint64_t seed, const char *s, size_t len)
{
    if (ATAB__LIKELY(len <= ATAB__SHORT_KEY))
        return atab__hash_short(seed, s, len);
    return atab__hash_bytes(seed, s, len);
}
ATAB__HIDDEN uint64_t atab__hash_key_u16(uint64_t seed, const atab__key *k);
/* Validates UTF-16; sets *len8 to the UTF-8 length. ATAB_EUTF16 on an
** unpaired surrogate, ATAB_ETOOLONG past ATAB_MAX_LEN. */
ATAB__HIDDEN int atab__utf16_measure(const uint16_t *s, size_t n, size_t *len8);
ATAB__HIDDEN void atab__utf16_encode(char *dst, const uint16_t *s, size_t n);
ATAB__HIDDEN int atab__key_equals_u16(const atab__key *k, const atab_atom *a);

/* Equal n bytes? Inline for the short strings atoms mostly are: whole
** words, the last one overlapping, never a byte past either end. */
static inline int atab__eq_bytes(const char *x, const char *y, size_t n)
{
    uint64_t a, b;
    uint32_t c, d;
    if (n > 16) {
        if (n > 32)
            return memcmp(x, y, n) == 0;
        uint64_t e, f;
        memcpy(&a, x, 8), memcpy(&b, y, 8), memcpy(&e, x + 8, 8), memcpy(&f, y + 8, 8);
        if ((a ^ b) | (e ^ f))
            return 0;
        memcpy(&a, x + n - 16, 8), memcpy(&b, y + n - 16, 8);
        memcpy(&e, x + n - 8, 8), memcpy(&f, y + n - 8, 8);
        return ((a ^ b) | (e ^ f)) == 0;
    }
    if (n >= 8) {
        memcpy(&a, x, 8), memcpy(&b, y, 8);
        if (a != b)
            return 0;
        memcpy(&a, x + n - 8, 8), memcpy(&b, y + n - 8, 8);
        return a == b;
    }
    if (n >= 4) {
        memcpy(&c, x, 4), memcpy(&d, y, 4);
        if (c != d)
            return 0;
        memcpy(&c, x + n - 4, 4), memcpy(&d, y + n - 4, 4);
        return c == d;
    }
    if (n >= 2) {   /* 2-3 bytes: the first two and the last two cover them all */
        uint16_t e, f;
        memcpy(&e, x, 2), memcpy(&f, y, 2);
        if (e != f)
            return 0;
        memcpy(&e, x + n - 2, 2), memcpy(&f, y + n - 2, 2);
        return e == f;
    }
    return n == 0 || x[0] == y[0];
}

static inline int atab__key_equals(const atab__key *k, const atab_atom *a)
{
    if (ATAB__LIKELY(k->s != NULL))
        return atab_len(a) == k->len && atab__eq_bytes(atab_chars(a), k->s, k->len);
    return atab__key_equals_u16(k, a);
}

#endif /* ATAB_HASH_H */
