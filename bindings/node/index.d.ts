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

export interface ReportOptions {
  /** true: about:memory's JSON (Firefox loads it); false: a text tree. */
  json?: boolean;
  /** The JSON reports' "process" field. Default "". */
  process?: string;
}

/**
 * The canonical string equal to `s`: the same string object for every
 * equal string interned in this isolate, sharing the atom's characters
 * (no copy). Equal strings from other worker threads are the same atom.
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

/** The table's memory report: a text tree, or about:memory JSON. */
export function report(options?: ReportOptions): string;

/** The library's version, "MAJOR.MINOR.PATCH". */
export const version: string;
