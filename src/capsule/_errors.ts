/**
 * The errors of the capsule archive layer (internal). Every refusal is a `ReachError` whose `details.reason` is a
 * stable slug (listed in {@link RefusalReason}), so callers and tests can tell refusals apart without parsing
 * messages:
 * - writing: bad paths, duplicates and file/directory clashes are `PROTO_INVALID_ARGUMENT`;
 * - reading: anything malformed, malicious or damaged is `REPLAY_CAPSULE_INVALID`;
 * - both: a limit exceeded (entry count, entry size, inflated or compressed size) is `REPLAY_CAPSULE_TOO_LARGE`.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import type { ErrorCode, ErrorDetailsData } from "../protocol/mod.ts";
import type { InflationBudget } from "./limits.ts";

/** Why an archive was refused (`details.reason` of the error). */
export type RefusalReason =
  // paths (write and read)
  | "path"
  | "duplicate"
  | "conflict"
  | "order" // not raised since entries are read in any order (returned sorted); kept for callers
  // gzip layer (read)
  | "empty"
  | "not-gzip"
  | "gzip-header"
  | "truncated"
  | "trailing-data"
  | "multiple-members" // not raised since several gzip members are read (RFC 1952 §2.2); kept for callers
  | "deflate-corrupt"
  | "crc-mismatch"
  | "size-mismatch"
  // tar layer (read)
  | "header-checksum"
  | "not-ustar"
  | "link"
  | "device"
  | "fifo"
  | "directory"
  | "extension-header"
  | "unknown-type"
  | "bad-number"
  | "non-canonical" // not raised since other tars' headers are read; archiveIsCanonical tells instead
  | "padding"
  | "end-marker"
  | "missing-end"
  // limits (write and read)
  | "too-many-entries"
  | "entry-too-large"
  | "total-too-large"
  | "inflation-ratio"
  | "compressed-too-large";

/** Build a capsule error with `details.reason` set. */
export function refusal(code: ErrorCode, reason: RefusalReason, message: string, details: ErrorDetailsData = {}, cause?: unknown): ReachError {
  return new ReachError(code, message, { details: { ...details, reason }, ...(cause === undefined ? {} : { cause }) });
}

/** A damaged or malicious capsule (`REPLAY_CAPSULE_INVALID`). */
export function invalid(reason: RefusalReason, message: string, details: ErrorDetailsData = {}, cause?: unknown): ReachError {
  return refusal("REPLAY_CAPSULE_INVALID", reason, message, details, cause);
}

/** A capsule over one of its limits (`REPLAY_CAPSULE_TOO_LARGE`). */
export function tooLarge(reason: RefusalReason, message: string, details: ErrorDetailsData = {}): ReachError {
  return refusal("REPLAY_CAPSULE_TOO_LARGE", reason, message, details);
}

/**
 * A capsule that inflates (or would, by what its headers declare) past its budget (`limits.ts`): reason
 * `inflation-ratio` when the ratio to its compressed size set the bound, else `total-too-large`.
 * @param budget the bound that was passed
 * @param what the start of the message, e.g. "the capsule inflates to"
 * @param details extra details
 * @returns the error
 */
export function overBudget(budget: InflationBudget, what: string, details: ErrorDetailsData = {}): ReachError {
  if (!budget.byRatio) {
    return tooLarge("total-too-large", `${what} more than limits.maxTotalBytes (${budget.bytes}); raise the limit only for ` +
      "capsules you trust", details);
  }
  return tooLarge("inflation-ratio", `${what} more than ${budget.ratio} times the capsule's ${budget.compressed} compressed ` +
    `bytes (${budget.bytes}, limits.maxInflationRatio): a gzip bomb, or a capsule that compresses unusually well — ` +
    "raise limits.maxInflationRatio only for capsules you trust", { ...details, compressed: budget.compressed, ratio: budget.ratio });
}

/**
 * Make a name from an archive safe to print: printable ASCII is kept, everything else becomes `\xNN` (or `\uNNNN`),
 * and it is clipped to 120 characters, then quoted.
 * @param name a path as given or as decoded (one char per byte) from a header
 * @returns the quoted, printable name
 * @example showName("a\u0000b") // "\"a\\x00b\""
 */
export function showName(name: string): string {
  const clipped = name.length > 120 ? name.slice(0, 120) : name;
  let out = "";
  for (let i = 0; i < clipped.length; i++) {
    const c = clipped.charCodeAt(i);
    if (c === 0x22 || c === 0x5c) out += "\\" + clipped[i];
    else if (c >= 0x20 && c <= 0x7e) out += clipped[i];
    else out += c <= 0xff ? "\\x" + c.toString(16).padStart(2, "0") : "\\u" + c.toString(16).padStart(4, "0");
  }
  return `"${out}${name.length > 120 ? "…" : ""}"`;
}
