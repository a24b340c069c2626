/**
 * Limits of the capsule archive (ARCHITECTURE "Capsule": "reading a capsule is bounded"). The same limits bound
 * `writeArchive`, so that reach-wasm never writes a capsule its own reader (with the same limits) refuses.
 * @module
 */

/** The bounds applied when reading (and writing) a capsule archive. */
export type ArchiveLimits = {
  /** Most entries (regular files). Default 100,000. */
  maxEntries: number;
  /** Most bytes in one entry. Default 512 MiB. */
  maxEntryBytes: number;
  /**
   * Most bytes of the inflated tar stream: entry bytes plus their 512-byte headers, their zero padding to a
   * 512-byte boundary and the two 512-byte end-of-archive blocks. Inflating stops as soon as it is exceeded (a
   * gzip bomb never gets further). Default 1 GiB.
   */
  maxTotalBytes: number;
  /**
   * Most bytes of the `.tar.gz` itself, checked before anything is inflated. Default 1 GiB + 1 MiB: deflate
   * expands incompressible data by at most 5 bytes per 64 KiB, so a capsule at `maxTotalBytes` always fits.
   */
  maxCompressedBytes: number;
};

const MiB = 1024 * 1024;

/** The default limits. */
export const DEFAULT_ARCHIVE_LIMITS: Readonly<ArchiveLimits> = Object.freeze({
  maxEntries: 100_000,
  maxEntryBytes: 512 * MiB,
  maxTotalBytes: 1024 * MiB,
  maxCompressedBytes: 1025 * MiB,
});

const KEYS = ["maxEntries", "maxEntryBytes", "maxTotalBytes", "maxCompressedBytes"] as const;

/**
 * Fill in the defaults and check the given limits.
 * @param limits some or all limits; `undefined` fields take their default
 * @returns the complete limits
 * @throws TypeError when `limits` is not an object or has an unknown key
 * @throws RangeError when a limit is not a non-negative safe integer
 * @example resolveLimits({ maxEntries: 10 }).maxEntryBytes // 536870912
 */
export function resolveLimits(limits: Partial<ArchiveLimits> = {}): ArchiveLimits {
  if (typeof limits !== "object" || limits === null || Array.isArray(limits)) {
    throw new TypeError(`"limits" expected an object such as { maxEntries: 1000 }, got ${limits === null ? "null" : typeof limits}`);
  }
  for (const key of Object.keys(limits)) {
    if (!(KEYS as readonly string[]).includes(key)) {
      throw new TypeError(`"limits" has an unknown key "${key}"; the limits are ${KEYS.join(", ")}`);
    }
  }
  const out = { ...DEFAULT_ARCHIVE_LIMITS };
  for (const key of KEYS) {
    const value = limits[key];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(`"limits.${key}" expected a non-negative safe integer, got ${String(value)}`);
    }
    out[key] = value;
  }
  return out;
}
