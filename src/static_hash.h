/* SPDX-License-Identifier: MIT */
/*
** static_hash.h - the fixed hash and index arithmetic of static sets,
** shared by the generator (tools/atomtab-genstatic.c) and static.c, so
** the two cannot drift. Depends on nothing but <stdint.h>/<stddef.h>.
**
** Why a hash of its own: a table's slots are keyed by a hash with a random
** per-table seed (hash flooding), which the generator cannot know. The
** static index therefore uses this fixed hash, seeded only by a constant
** the generator chose (atab_static_set.seed), and it runs only for keys
** that missed the table and passed the set's miss filter: the atom found
** is then cached in the table's own seeded slots, so every later lookup of
** it is the ordinary lock-free hit and never hashes twice. Bytes are read
** into little-endian words (by loads on a little-endian host, byte by
** byte elsewhere: atab__sh_word), so a generator run on any host makes an
** index valid on every target.
*/
#ifndef ATAB_STATIC_HASH_H
#define ATAB_STATIC_HASH_H

#include <stddef.h>
#include <stdint.h>

#define ATAB__SH_K1 UINT64_C(0x9e3779b97f4a7c15)
#define ATAB__SH_K2 UINT64_C(0xbf58476d1ce4e5b9)
#define ATAB__SH_K3 UINT64_C(0x94d049bb133111eb)

static inline uint64_t atab__sh_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= ATAB__SH_K2;
    x ^= x >> 27;
    x *= ATAB__SH_K3;
    return x ^ (x >> 31);
}

/* Up to 8 bytes as a little-endian word: on a little-endian host by one
** load, or two overlapping ones (the bytes they share are the same). */
static inline uint64_t atab__sh_word(const unsigned char *p, size_t n)
{
    uint64_t w = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n == 8) {
        __builtin_memcpy(&w, p, 8);
        return w;
    }
    if (n >= 4) {
        uint32_t lo, hi;
        __builtin_memcpy(&lo, p, 4);
        __builtin_memcpy(&hi, p + n - 4, 4);
        return (uint64_t)lo | (uint64_t)hi << (8 * (n - 4));
    }
#endif
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)p[i] << (8 * i);
    return w;
}

/* The static index's hash of len bytes at s. */
static inline uint64_t atab__static_hash(uint64_t seed, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    uint64_t h = seed ^ ((uint64_t)len * ATAB__SH_K1);
    for (; len > 8; len -= 8, p += 8)
        h = atab__sh_mix(h ^ atab__sh_word(p, 8));
    return atab__sh_mix(h ^ atab__sh_word(p, len) ^ ATAB__SH_K1);
}

/* The miss filter's bit for len bytes at s, of 2^log2_bits: the length and
** the first, middle and last bytes in one word, Fibonacci-hashed (one
** multiply, the top bits). The generator sets the bit
** of every atom of a set; a key whose bit is clear is in no slot of the
** set, so most misses skip the set without hashing (the index's hash is
** the dearer part of a static lookup). */
static inline uint32_t atab__static_filter_mix(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    uint32_t x = (uint32_t)len & 0xff;
    if (len)
        x |= (uint32_t)p[0] << 8 | (uint32_t)p[len >> 1] << 16 | (uint32_t)p[len - 1] << 24;
    return x * 0x9e3779b1u;
}

static inline uint32_t atab__static_filter_bit(const char *s, size_t len, uint32_t log2_bits)
{
    return atab__static_filter_mix(s, len) >> (32 - log2_bits);
}

/* Reduces a 32-bit value to [0, n) without a division (Lemire). */
static inline uint32_t atab__sh_reduce(uint32_t x, uint32_t n)
{
    return (uint32_t)(((uint64_t)x * n) >> 32);
}

/* CHD: the bucket of a hash. */
static inline uint32_t atab__sh_bucket(uint64_t h, uint32_t n_buckets)
{
    return atab__sh_reduce((uint32_t)h, n_buckets);
}

/* CHD: the slot of a hash displaced by d = d1 << 16 | d2. */
static inline uint32_t atab__sh_slot(uint64_t h, uint32_t d, uint32_t n_slots)
{
    uint32_t f1 = (uint32_t)(h >> 32);
    uint32_t f2 = (uint32_t)(atab__sh_mix(h ^ ATAB__SH_K3) >> 32) | 1;
    return (uint32_t)(f1 + (d >> 16) * f2 + (d & 0xffff)) % n_slots;
}

#endif /* ATAB_STATIC_HASH_H */
