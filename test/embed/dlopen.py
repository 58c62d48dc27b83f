# SPDX-License-Identifier: MIT
"""dlopen.py - loads libatomtab.so with Python's ctypes (dlopen at run
time, as a plugin host would) and uses it: tools/check-embed.sh."""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
vp = ctypes.c_void_p
for name, res, args in [
        ("atab_version", ctypes.c_char_p, []),
        ("atab_table_new", vp, [vp]),
        ("atab_intern", vp, [vp, ctypes.c_char_p, ctypes.c_size_t]),
        ("atab_count", ctypes.c_size_t, [vp]),
        ("atab_release", ctypes.c_int, [vp, vp]),
        ("atab_table_free", None, [vp])]:
    f = getattr(lib, name)
    f.restype, f.argtypes = res, args

t = lib.atab_table_new(None)
assert t, "atab_table_new failed"
a = lib.atab_intern(t, b"from-ctypes", 11)
b = lib.atab_intern(t, b"from-ctypes", 11)
assert a and a == b, "same bytes, same atom"
assert ctypes.string_at(a + 8) == b"from-ctypes", "chars follow the 8-byte header"
d = lib.atab_intern(t, b"div", 3)   # a default static atom: no dynamic copy
assert d and lib.atab_count(t) == 1, "one dynamic atom"
for x in (a, b, d):
    assert lib.atab_release(t, x) == 0
lib.atab_table_free(t)
print("ctypes: loaded and used libatomtab", lib.atab_version().decode())
