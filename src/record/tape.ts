/**
 * The tape: every host call of every tool, with its exact request and response (ARCHITECTURE "Determinism";
 * seed 003 §3.4 "All external state access is captured"; issue 5 "Tape and replay").
 *
 * Record format (one canonical JSON object per JSONL line, keys in RFC 8785 order):
 * ```
 * {
 *   "seq": 0,                      // 0-based position on the tape, in the order calls were made
 *   "invocationId": "…",           // the tool invocation that made the call
 *   "op": "fs.read",               // the host op (clipped to 64 characters when a tool sent garbage)
 *   "request": {…},                // the request, top-level `data` > 4 KiB replaced by {"blob": sha256}
 *   "response": {…},               // on success, same blob rule … or
 *   "error": {code, message, details, recoverable[, retryAfter]},   // on failure (ErrorDetails)
 *   "requestHash": "<hex>",        // sha256Hex(canonicalize(request)) — of the field as stored
 *   "responseHash": "<hex>"        // sha256Hex(canonicalize(response ?? error)) — of the field as stored
 * }
 * ```
 * Blobs: a top-level `data` field (standard base64) whose decoded size is over {@link BLOB_THRESHOLD} bytes is
 * stored once in a content-addressed map (`sha256Hex(bytes)` → bytes) and replaced by `{"blob": "<sha256>"}`.
 * Only top-level `data` is touched (a memory value with a `data` key stays as it is). A request that cannot be
 * canonicalised (not JSON) is stored as `{"$invalid": "<reason>"}`. A refused call's request is never blobbed; when its
 * canonical form is over {@link MAX_INLINE_REFUSED_BYTES} it is stored as `{"$oversize": {"sha256", "size"}}`, so a
 * hostile tool cannot bloat the tape with requests the host refuses.
 * @module
 */
import { base64ToBytes } from "../canonical/hex.ts";
import { canonicalize } from "../canonical/jcs.ts";
import { sha256Hex } from "../canonical/sha256.ts";
import { ReachError } from "../protocol/errors.ts";
import type { ErrorDetails } from "../protocol/errors.ts";

/** A JSON object on the tape. */
export type TapeJson = { [key: string]: unknown };

/** One recorded host call (see the module notes for the exact fields). */
export type TapeRecord = {
  seq: number;
  invocationId: string;
  op: string;
  request: TapeJson;
  response?: TapeJson;
  error?: ErrorDetails;
  requestHash: string;
  responseHash: string;
};

/** Decoded `data` sizes above this (bytes) go to the blob map: 4 KiB. */
export const BLOB_THRESHOLD = 4096;
/** A refused request whose canonical form is larger than this is stored as a hash and size only: 64 KiB. */
export const MAX_INLINE_REFUSED_BYTES = 65_536;
/** Default cap on the total bytes of all blobs of one tape: 512 MiB. */
export const DEFAULT_MAX_BLOB_BYTES = 512 * 1024 * 1024;
/** Default cap on the number of records of one tape. */
export const DEFAULT_MAX_RECORDS = 1_000_000;

/** Options of a {@link TapeRecorder}. */
export type TapeRecorderOptions = {
  /** Total blob bytes allowed (default 512 MiB); more is `EXEC_RESOURCE_EXHAUSTED`. */
  maxBlobBytes?: number;
  /** Records allowed (default 1,000,000). */
  maxRecords?: number;
};

/** What a call ended with. */
export type TapeOutcome = { response: TapeJson } | { error: ErrorDetails };

const B64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decoded byte length of a base64 string, or -1 when it is not standard padded base64. */
function base64Size(text: string): number {
  if (text.length % 4 !== 0 || !B64_RE.test(text)) return -1;
  const pad = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  return (text.length / 4) * 3 - pad;
}

/**
 * Replace a large top-level `data` field by a blob reference.
 * @param value a request or response object
 * @param store called with (sha256, bytes) for every blob taken out
 * @returns the object to store (the input itself when nothing was replaced)
 * @example stripBlobs({ data: big }, (h, b) => blobs.set(h, b)) // { data: { blob: "…" } }
 */
export function stripBlobs(value: TapeJson, store?: (hash: string, bytes: Uint8Array) => void): TapeJson {
  const data = value["data"];
  if (typeof data !== "string" || data.length <= (BLOB_THRESHOLD * 4) / 3) return value;
  const size = base64Size(data);
  if (size <= BLOB_THRESHOLD) return value;
  let bytes: Uint8Array;
  try {
    bytes = base64ToBytes(data);
  } catch {
    return value; // non-canonical padding: not a body we produced or accept; stored inline
  }
  const hash = sha256Hex(bytes);
  store?.(hash, bytes);
  return { ...value, data: { blob: hash } };
}

/**
 * A request in its stored form, as the recorder and player see it. A successful call's large `data` becomes a blob
 * reference; a refused call's request is stored inline (never blobbed), or as `{"$oversize": …}` when its canonical
 * form is over 64 KiB; a non-JSON request as `{"$invalid": reason}`.
 * @param request what the tool sent
 * @param refused whether the call failed
 * @returns the stored form, its canonical text and the blobs taken out
 * @example storedRequest({ path: "a" }, false).text // '{"path":"a"}'
 */
export function storedRequest(
  request: unknown,
  refused: boolean,
): { value: TapeJson; text: string; blobs: [string, Uint8Array][] } {
  const blobs: [string, Uint8Array][] = [];
  let value: TapeJson;
  let text: string;
  try {
    if (typeof request !== "object" || request === null || Array.isArray(request)) throw new TypeError("not a JSON object");
    value = refused ? (request as TapeJson) : stripBlobs(request as TapeJson, (h, b) => blobs.push([h, b]));
    text = canonicalize(value);
  } catch (err) {
    value = { $invalid: err instanceof Error ? clipOp(err.message, 200) : "not JSON" };
    return { value, text: canonicalize(value), blobs: [] };
  }
  if (refused && text.length > MAX_INLINE_REFUSED_BYTES) {
    value = { $oversize: { sha256: sha256Hex(text), size: text.length } };
    return { value, text: canonicalize(value), blobs: [] };
  }
  return { value, text, blobs };
}

/** Hashes of short request texts: most calls repeat a few requests (`{}` for `clock.now`, `{"n":8}`, …). */
const requestHashes = new Map<string, string>();
const MAX_CACHED_REQUEST_CHARS = 256;
const MAX_CACHED_REQUESTS = 1024;

/** `sha256Hex(text)`, remembered for short texts (the digest of a text never changes, so this is invisible). */
function requestHash(text: string): string {
  if (text.length > MAX_CACHED_REQUEST_CHARS) return sha256Hex(text);
  let hash = requestHashes.get(text);
  if (hash === undefined) {
    if (requestHashes.size >= MAX_CACHED_REQUESTS) requestHashes.clear();
    hash = sha256Hex(text);
    requestHashes.set(text, hash);
  }
  return hash;
}

/** An op name that {@link clipOp} returns unchanged (every real host op is one): no escaping, no clipping. */
const PLAIN_OP = /^[A-Za-z0-9._-]{1,64}$/;

function clipOp(op: unknown, max = 64): string {
  if (typeof op === "string" && op.length <= max && PLAIN_OP.test(op)) return op;
  const s = typeof op === "string" ? op : `<${typeof op}>`;
  // eslint-disable-next-line no-control-regex -- escaping control characters is the point
  const clean = s.replace(/[\u0000-\u001f\u007f]|\p{Surrogate}/gu, "?");
  return clean.length <= max ? clean : clean.slice(0, max) + "…";
}

/**
 * Records host calls in order, with content-addressed blobs.
 * @example
 * const tape = new TapeRecorder();
 * const seq = tape.reserve();
 * tape.record(seq, invocationId, "clock.now", {}, { response: { ms: 0, iso: "1970-01-01T00:00:00.000Z" } });
 * tape.toJsonl();
 */
export class TapeRecorder {
  readonly #records: (TapeRecord | undefined)[] = [];
  readonly #blobs = new Map<string, Uint8Array>();
  #blobBytes = 0;
  readonly #maxBlobBytes: number;
  readonly #maxRecords: number;

  /**
   * @param options limits
   * @throws RangeError when a limit is not a positive safe integer
   */
  constructor(options: TapeRecorderOptions = {}) {
    this.#maxBlobBytes = positive(options.maxBlobBytes, "maxBlobBytes", DEFAULT_MAX_BLOB_BYTES);
    this.#maxRecords = positive(options.maxRecords, "maxRecords", DEFAULT_MAX_RECORDS);
  }

  /**
   * Reserve the next sequence number (at the start of a call, so records keep call order even when an async
   * call ends after a later one).
   * @returns the seq
   * @throws ReachError `EXEC_RESOURCE_EXHAUSTED` when the tape is full
   */
  reserve(): number {
    if (this.#records.length >= this.#maxRecords) {
      throw new ReachError("EXEC_RESOURCE_EXHAUSTED", `the tape holds ${this.#maxRecords} records, its limit; ` +
        `make fewer host calls`, { details: { limit: "records", max: this.#maxRecords } });
    }
    this.#records.push(undefined);
    return this.#records.length - 1;
  }

  /**
   * Record a finished call at a reserved seq.
   * @param seq from {@link reserve}
   * @param invocationId the invocation that made the call
   * @param op the op name as the tool gave it
   * @param request the request as the tool gave it
   * @param outcome the response or the error
   * @returns the stored record
   * @throws RangeError when `seq` was not reserved or is already recorded
   * @throws ReachError `EXEC_RESOURCE_EXHAUSTED` when the blobs would pass `maxBlobBytes` (nothing is stored)
   */
  record(seq: number, invocationId: string, op: unknown, request: unknown, outcome: TapeOutcome): TapeRecord {
    if (!Number.isSafeInteger(seq) || seq < 0 || seq >= this.#records.length || this.#records[seq] !== undefined) {
      throw new RangeError(`"seq" expected a reserved, unrecorded sequence number, got ${seq}`);
    }
    const pending = new Map<string, Uint8Array>();
    const collect = (h: string, b: Uint8Array): void => {
      if (!this.#blobs.has(h)) pending.set(h, b);
    };
    const req = storedRequest(request, "error" in outcome);
    for (const [h, b] of req.blobs) collect(h, b);
    let outValue: TapeJson;
    if ("response" in outcome) {
      outValue = stripBlobs(outcome.response, collect);
    } else {
      outValue = outcome.error as unknown as TapeJson;
    }
    const outText = canonicalize(outValue);
    let added = 0;
    for (const b of pending.values()) added += b.length;
    if (this.#blobBytes + added > this.#maxBlobBytes) {
      throw new ReachError("EXEC_RESOURCE_EXHAUSTED", `the tape's blobs would reach ${this.#blobBytes + added} bytes, ` +
        `over the limit of ${this.#maxBlobBytes}; move less data through the host API`,
        { details: { limit: "blobBytes", max: this.#maxBlobBytes } });
    }
    for (const [h, b] of pending) this.#blobs.set(h, b.slice());
    this.#blobBytes += added;
    const rec: TapeRecord = {
      seq,
      invocationId,
      op: clipOp(op),
      request: JSON.parse(req.text) as TapeJson,
      requestHash: requestHash(req.text),
      responseHash: sha256Hex(outText),
    };
    if ("response" in outcome) rec.response = JSON.parse(outText) as TapeJson;
    else rec.error = JSON.parse(outText) as ErrorDetails;
    this.#records[seq] = rec;
    return rec;
  }

  /** Records made so far, in seq order (reserved but unfinished calls are skipped). */
  get records(): readonly TapeRecord[] {
    return this.#records.filter((r): r is TapeRecord => r !== undefined);
  }

  /** Calls reserved but not yet recorded (an async call in flight). */
  get pending(): number {
    return this.#records.filter((r) => r === undefined).length;
  }

  /** The blob map (sha256 → bytes); do not mutate the bytes. */
  get blobs(): ReadonlyMap<string, Uint8Array> {
    return this.#blobs;
  }

  /**
   * Blobs sorted by hash, for a capsule writer.
   * @returns `[sha256, bytes]` pairs
   */
  blobEntries(): [string, Uint8Array][] {
    return [...this.#blobs.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  /**
   * The tape as JSONL: one canonical record per line, each ending in `\n`.
   * @returns the text
   * @example new TextEncoder().encode(tape.toJsonl())
   */
  toJsonl(): string {
    return tapeToJsonl(this.records);
  }
}

function positive(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`"${name}" expected a positive safe integer, got ${value}`);
  return value;
}

/**
 * Serialise records as JSONL (canonical lines, in the order given).
 * @param records tape records
 * @returns the text
 * @example tapeToJsonl(recorder.records)
 */
export function tapeToJsonl(records: readonly TapeRecord[]): string {
  let out = "";
  for (const r of records) out += canonicalize(r) + "\n";
  return out;
}
