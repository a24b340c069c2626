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
  /**
   * Most inflated bytes per compressed byte, for a capsule that inflates to more than {@link RATIO_EXEMPT_BYTES}
   * (8 MiB). Default {@link DEFAULT_INFLATION_RATIO} (100): the committed capsules inflate 2.8-5.9 times, while a
   * gzip bomb inflates up to ~1032 times, so a small hostile capsule is refused after a few megabytes, at the
   * first tar header that declares more than its budget. Optional so that the default limits keep their shape.
   */
  maxInflationRatio?: number;
};

const MiB = 1024 * 1024;

/** The default limits. */
export const DEFAULT_ARCHIVE_LIMITS: Readonly<ArchiveLimits> = Object.freeze({
  maxEntries: 100_000,
  maxEntryBytes: 512 * MiB,
  maxTotalBytes: 1024 * MiB,
  maxCompressedBytes: 1025 * MiB,
});

/** The default `maxInflationRatio`: 100 inflated bytes per compressed byte. */
export const DEFAULT_INFLATION_RATIO = 100;
/** Inflated sizes up to this (8 MiB) are read whatever their ratio: a small capsule may compress very well. */
export const RATIO_EXEMPT_BYTES = 8 * MiB;

const KEYS = ["maxEntries", "maxEntryBytes", "maxTotalBytes", "maxCompressedBytes", "maxInflationRatio"] as const;

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

/** How far a capsule may inflate: the bound in bytes, and whether the ratio (not `maxTotalBytes`) sets it. */
export type InflationBudget = { readonly bytes: number; readonly byRatio: boolean; readonly compressed: number; readonly ratio: number };

/**
 * The most bytes a capsule of `compressed` bytes may inflate to (tar headers, data, padding and end blocks):
 * `min(maxTotalBytes, max(RATIO_EXEMPT_BYTES, maxInflationRatio × compressed))`.
 * @param compressed the size of the `.tar.gz`
 * @param limits the resolved limits
 * @returns the bound, and whether the ratio set it
 * @example inflationBudget(1_000_000, resolveLimits()).bytes // 100000000
 */
export function inflationBudget(compressed: number, limits: ArchiveLimits): InflationBudget {
  const ratio = limits.maxInflationRatio ?? DEFAULT_INFLATION_RATIO;
  const byRatio = Math.max(RATIO_EXEMPT_BYTES, ratio * compressed);
  return byRatio < limits.maxTotalBytes ? { bytes: byRatio, byRatio: true, compressed, ratio } : { bytes: limits.maxTotalBytes, byRatio: false, compressed, ratio };
}
