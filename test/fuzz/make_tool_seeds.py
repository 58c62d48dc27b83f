#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpus test/fuzz/corpus-tools/ for fuzz_tools.c (see the
input format there): run from the repository root; the files are committed.
Byte 0: bit 0 set for a report token file, else a genstatic list; bit 1 for
a list with an --exclude list after the first 0xff byte."""
import os

LIST, TOKENS, EXCLUDE = 0, 1, 2


def read(path, lines=None):
    with open(path, 'rb') as f:
        data = f.read()
    if lines is not None:
        data = b''.join(data.splitlines(keepends=True)[:lines])
    return data


SEEDS = {
    'list-default-head': bytes([LIST]) + read('src/default.atoms', 120),
    'list-host': bytes([LIST]) + read('test/host.atoms'),
    'list-host2': bytes([LIST]) + read('test/host2.atoms'),
    'list-collide': bytes([LIST]) + read('test/collide.atoms'),
    'list-errors': bytes([LIST]) + b'\n"unterminated\n"a"b x\n  lead\n \t \n'
    + b'dup\ndup\n9lives\nname id extra\nbad\x01ctl\n\xc3\x28 bad_utf8\n'
    + b'caf\xc3\xa9\n"" \n"" empty\nx int\n\n\nlast\n\n',
    'list-crlf': bytes([LIST]) + b'# comment\r\none\r\ntwo id_two\r\n"three four" t34\r\n',
    'list-ids': bytes([LIST]) + b'accept-charset\n2d\na.b\na_b\n' + b'x' * 64 + b'\n'
    + b'long ' + b'i' * 64 + b'\n',
    'list-exclude': bytes([LIST | EXCLUDE]) + b'alpha\nbeta\ngamma g\n"" empty\n'
    + b'\xff' + b'beta\n"" e2\nzzz\n',
    # regression: --exclude sized its string set for the exclude list only,
    # then added the list's atoms too; 20 atoms past a 1-atom exclude list
    # filled it, and the next probe never ended (atomtab-genstatic hung)
    'list-exclude-longer-list': bytes([LIST | EXCLUDE])
    + b''.join(b'atom%d\n' % i for i in range(1, 21)) + b'\xff' + b'atom1\n',
    # 8 names whose index needs a ninth slot: no seed places them in 8
    'list-extra-slot': bytes([LIST]) + b''.join(b'w1239-%d\n' % i for i in range(8)),
    'tokens-basic': bytes([TOKENS]) + b'div\nspan\ndiv\n\n\nclass\nid\nspan\n',
    'tokens-nul-cr': bytes([TOKENS]) + b'a\x00b\na\x00b\r\n\r\n\x00\n\xff\xfe\nlast-no-newline',
    'tokens-long': bytes([TOKENS]) + b'k' * 3000 + b'\n' + b'short\n' + b'k' * 3000,
    'tokens-nodejs': bytes([TOKENS]) + read('src/default.atoms', 60).replace(b' ', b'\n'),
}

os.makedirs('test/fuzz/corpus-tools', exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join('test/fuzz/corpus-tools', name), 'wb') as f:
        f.write(data)
