# The addon, built by node-gyp (npm runs it on install) from the library's
# sources under deps/atomtab/ (scripts/vendor.js puts them there) against
# the installed Node's headers (`--nodedir=/usr` uses /usr/include/node),
# linked with the system's libxxhash. A loadable module that is never
# unloaded (-z nodelete): the library's thread-exit destructor must outlive
# a worker's dlclose. The library calls the C library's malloc.
{
  'variables': {
    'atab_version': '<!(node -p "require(\'fs\').readFileSync(\'deps/atomtab/VERSION\', \'utf8\').trim()")',
  },
  'targets': [{
    'target_name': 'atomtab',
    'sources': [
      'atomtab_node.c',
      '<!@(node -p "require(\'fs\').readFileSync(\'deps/atomtab/src/sources.txt\', \'utf8\').trim().split(/\\s+/).map((f) => \'deps/atomtab/src/\' + f).join(\' \')")',
      'deps/atomtab/gen/atomtab_atoms.c',
    ],
    'include_dirs': ['deps/atomtab/include', 'deps/atomtab/gen'],
    'defines': ['_GNU_SOURCE', 'ATAB_VERSION_STRING="<(atab_version)"'],
    'cflags_c': ['-std=c11', '-fvisibility=hidden', '-pthread'],
    'ldflags': ['-pthread', '-Wl,-z,nodelete'],
    'libraries': ['-lxxhash'],
  }],
}
