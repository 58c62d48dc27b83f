/* SPDX-License-Identifier: MIT */
/*
** test_u16.h - UTF-8 test text to UTF-16, for the tests' UTF-16 calls.
** Apart from test_util.h (which includes it) so that stress_hostile.c,
** which does not run under cmocka, can use it too.
*/
#ifndef TEST_U16_H
#define TEST_U16_H

#include <stddef.h>
#include <stdint.h>

/* Converts `len` bytes of valid UTF-8 test text to UTF-16; returns the
** number of 16-bit units written to `out`. */
static inline size_t u8_to_u16(const char *s, size_t len, uint16_t *out)
{
    const unsigned char *p = (const unsigned char *)s, *e = p + len;
    size_t n = 0;
    while (p < e) {
        uint32_t c;
        if (*p < 0x80) c = *p++;
        else if (*p < 0xe0) { c = (uint32_t)(*p & 0x1f) << 6 | (p[1] & 0x3f); p += 2; }
        else if (*p < 0xf0) { c = (uint32_t)(*p & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f); p += 3; }
        else { c = (uint32_t)(*p & 0x07) << 18 | (uint32_t)(p[1] & 0x3f) << 12 | (uint32_t)(p[2] & 0x3f) << 6 | (p[3] & 0x3f); p += 4; }
        if (c >= 0x10000) {
            c -= 0x10000;
            out[n++] = (uint16_t)(0xd800 + (c >> 10));
            out[n++] = (uint16_t)(0xdc00 + (c & 0x3ff));
        } else {
            out[n++] = (uint16_t)c;
        }
    }
    return n;
}

#endif
