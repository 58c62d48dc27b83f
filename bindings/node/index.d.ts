// SPDX-License-Identifier: MIT
// Types for atomtab's Node.js package (index.js).

/** The table's counts, exact at the call. */
export interface Stats {
  /** Live dynamic atoms in the process's table (unused ones included). */
  atoms: number;
  /** Dynamic atoms no one holds, awaiting a sweep (gc()). */
  unused: number;
  /** Strings (in every isolate) that share an atom's characters. */
  handles: number;
  /** Strings in this isolate's cache: one per atom it has interned. */
  cached: number;
  /** Bytes the table has requested: atoms, slot arrays, caches. */
  bytes: number;
}

/** A measurement of the host's, reported after the table's entries. */
export interface ReportEntry {
  /** '/'-separated, non-empty, taken as it is (no prefix); entries under
   *  explicit/ must be in bytes. */
  path: string;
  /** about:memory's kind: bytes from the heap, outside it, or anything
   *  else ('other' is refused under explicit/, as about:memory refuses it).
   *  Default 'heap' for a path under explicit/, else 'other'. */
  kind?: 'heap' | 'nonheap' | 'other';
  /** Default 'bytes'. */
  units?: 'bytes' | 'count';
  /** An integer (Number.isSafeInteger). */
  amount: number;
  /** Default "". */
  description?: string;
}

export interface ReportOptions {
  /** true: about:memory's JSON (Firefox loads it); false: a text tree. */
  json?: boolean;
  /** The JSON reports' "process" field. Default "". */
  process?: string;
  /**
   * Keeps this table's paths apart from other reporters' in one dump:
   * '/'-separated non-empty names, at most 128 bytes of UTF-8, no leading
   * or trailing '/'. With 'worker/1', explicit/atoms/table becomes
   * explicit/worker/1/atoms/table and atoms-dynamic becomes
   * worker-1-atoms-dynamic. Default "" (none).
   */
  prefix?: string;
  /**
   * At most 8 entries the host measured, e.g. { path: 'resident', amount:
   * process.memoryUsage().rss }. With 'heap-allocated' (the allocator's
   * total, in bytes) the tree shows explicit/heap-unclassified: that total
   * less the explicit heap entries.
   */
  extra?: ReportEntry[];
}

/**
 * The canonical string equal to `s`: the same string object for every
 * equal string interned in this isolate while the isolate's cache keeps
 * it, sharing the atom's characters (no copy). Equal strings from other
 * worker threads are the same atom. The cache lets go of strings whose
 * atom nothing else holds when it trims (gc(), or by itself once it holds
 * twice what its last trim kept, 1,024 at least); it cannot see JS's own
 * references, so a value JS still holds may then get a second string
 * object (equal by value: only memory sees it; at most two at once).
 * @throws TypeError if `s` is not a string, or has a lone surrogate.
 */
export function intern(s: string): string;

/** The canonical string equal to `s` if it is interned, else undefined. */
export function lookup(s: string): string | undefined;

/** The process table's counts, and this isolate's cache. */
export function stats(): Stats;

/**
 * Trims this isolate's cache (strings no one else holds), then frees the
 * atoms no one holds. @returns the atoms freed.
 */
export function gc(): number;

/**
 * The table's memory report: a text tree, or about:memory JSON.
 * @throws TypeError for an option of the wrong type (code
 *   ERR_INVALID_ARG_TYPE), an unknown kind or units, or a string with a NUL (code
 *   ERR_INVALID_ARG_VALUE); RangeError (code ERR_INVALID_ARG_VALUE) for a
 *   prefix or extra entries the library refuses (the rules above).
 */
export function report(options?: ReportOptions): string;

/** The library's version, "MAJOR.MINOR.PATCH". */
export const version: string;
