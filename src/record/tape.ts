/**
 * The tape: every host call of every tool, with its exact request and response (ARCHITECTURE "Determinism";
 * seed 003 §3.4 "All external state access is captured").
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
import { canonicalize } from "../canonical/mod.ts";
import { sha256Hex } from "../canonical/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import type { ErrorDetails } from "../protocol/mod.ts";
import { clipOp, flatCanonical, MAX_INLINE_REFUSED_BYTES, NO_BLOBS, outcomeText, oversize, storedRequest, stripData, textHash } from "./_stored-form.ts";
import type { Blob, TapeJson, TapeOutcome, TapeRecord } from "./_stored-form.ts";
import { committedTapeJsonl } from "./tape-commits.ts";

export { BLOB_THRESHOLD, MAX_INLINE_REFUSED_BYTES, storedRequest, stripBlobs } from "./_stored-form.ts";
export type { TapeJson, TapeOutcome, TapeRecord } from "./_stored-form.ts";

/** Default cap on the total bytes of all blobs of one tape: 256 MiB, the default workspace limit (what a tool writes is held once in the workspace and once on the tape). */
export const DEFAULT_MAX_BLOB_BYTES = 256 * 1024 * 1024;
/** Default cap on the number of records of one tape. */
export const DEFAULT_MAX_RECORDS = 1_000_000;

/** Options of a {@link TapeRecorder}. */
export type TapeRecorderOptions = {
  /** Total blob bytes allowed (default 256 MiB); more is `EXEC_RESOURCE_EXHAUSTED`. */
  maxBlobBytes?: number;
  /** Records allowed (default 1,000,000). */
  maxRecords?: number;
};

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
  /** Each invocation's recorded seqs (so a step's digest costs its own calls, not the whole tape's). */
  readonly #byInvocation = new Map<string, number[]>();
  readonly #blobs = new Map<string, Uint8Array>();
  #blobBytes = 0;
  readonly #maxBlobBytes: number;
  readonly #maxRecords: number;
  #commitKey: Uint8Array | null = null;

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
    this.#checkSeq(seq);
    const req = storedRequest(request, "error" in outcome);
    const out = outcomeText(outcome);
    this.#addBlobs(req.blobs, out.blob);
    const isResponse = "response" in outcome;
    return this.#store(seq, invocationId, op, JSON.parse(req.text) as TapeJson, req.text, isResponse, JSON.parse(out.text) as TapeJson, out.text);
  }

  /**
   * The host's path to {@link record} (src/sandbox/host): the same record, tape bytes and errors as
   * `record(seq, invocationId, op, request, outcome)`, without canonicalising and parsing the request a second time.
   * The caller vouches that `requestText === canonicalize(request)` and that `request` is its own copy (for example
   * `JSON.parse(requestText)`), which nobody changes afterwards: the record keeps it as its `request`. The response
   * is copied, as in `record`. A request that is not a JSON object goes through `record`.
   * @param seq from {@link reserve}
   * @param invocationId the invocation that made the call
   * @param op the op name as the tool gave it
   * @param request the caller's own copy of the request
   * @param requestText `canonicalize(request)`
   * @param outcome the response or the error
   * @returns the stored record
   * @throws RangeError | ReachError as {@link record}
   * @example tape.recordOwned(seq, invocationId, "clock.now", {}, "{}", { response: { ms: 0, iso: "1970-01-01T00:00:00.000Z" } })
   */
  recordOwned(seq: number, invocationId: string, op: unknown, request: TapeJson, requestText: string, outcome: TapeOutcome): TapeRecord {
    if (typeof request !== "object" || request === null || Array.isArray(request)) {
      return this.record(seq, invocationId, op, request, outcome);
    }
    this.#checkSeq(seq);
    // storedRequest(request, refused), with the text already known.
    let reqValue = request;
    let reqText = requestText;
    let reqBlobs: readonly Blob[] = NO_BLOBS;
    if ("error" in outcome) {
      if (reqText.length > MAX_INLINE_REFUSED_BYTES) {
        reqValue = oversize(reqText);
        reqText = canonicalize(reqValue);
      }
    } else {
      const s = stripData(request);
      if (s !== null) {
        reqValue = s.value;
        reqText = canonicalize(reqValue);
        reqBlobs = [s.blob];
      }
    }
    // The outcome as outcomeText() stores it; most responses are small flat objects, printed and copied in one go.
    const isResponse = "response" in outcome;
    let outText: string;
    let outCopy: TapeJson;
    let outBlob: Blob | null = null;
    const s = isResponse ? stripData(outcome.response) : null;
    const flat = isResponse && s === null ? flatCanonical(outcome.response) : null;
    if (flat !== null) {
      outText = flat.text;
      outCopy = flat.copy;
    } else {
      if (s !== null) outBlob = s.blob;
      outText = canonicalize(s !== null ? s.value : isResponse ? outcome.response : outcome.error);
      outCopy = JSON.parse(outText) as TapeJson;
    }
    this.#addBlobs(reqBlobs, outBlob);
    return this.#store(seq, invocationId, op, reqValue, reqText, isResponse, outCopy, outText);
  }

  #checkSeq(seq: number): void {
    if (!Number.isSafeInteger(seq) || seq < 0 || seq >= this.#records.length || this.#records[seq] !== undefined) {
      throw new RangeError(`"seq" expected a reserved, unrecorded sequence number, got ${seq}`);
    }
  }

  /** Keep new blobs, or throw (storing nothing) when they would pass the limit. */
  #addBlobs(requestBlobs: readonly Blob[], responseBlob: Blob | null): void {
    if (requestBlobs.length === 0 && responseBlob === null) return;
    const pending = new Map<string, Uint8Array>();
    for (const [h, b] of requestBlobs) if (!this.#blobs.has(h)) pending.set(h, b);
    if (responseBlob !== null && !this.#blobs.has(responseBlob[0])) pending.set(responseBlob[0], responseBlob[1]);
    let added = 0;
    for (const b of pending.values()) added += b.length;
    if (this.#blobBytes + added > this.#maxBlobBytes) {
      throw new ReachError("EXEC_RESOURCE_EXHAUSTED", `the tape's blobs would reach ${this.#blobBytes + added} bytes, ` +
        `over the limit of ${this.#maxBlobBytes}; move less data through the host API`,
        { details: { limit: "blobBytes", max: this.#maxBlobBytes } });
    }
    for (const [h, b] of pending) this.#blobs.set(h, b.slice());
    this.#blobBytes += added;
  }

  #store(seq: number, invocationId: string, op: unknown, request: TapeJson, requestText: string, isResponse: boolean,
    out: TapeJson, outText: string): TapeRecord {
    const rec: TapeRecord = {
      seq,
      invocationId,
      op: clipOp(op),
      request,
      requestHash: textHash(requestText),
      responseHash: textHash(outText),
    };
    if (isResponse) rec.response = out;
    else rec.error = out as unknown as ErrorDetails;
    this.#records[seq] = rec;
    this.#index(rec);
    return rec;
  }

  /** Remember a stored record under its invocation. */
  #index(rec: TapeRecord): void {
    const seqs = this.#byInvocation.get(rec.invocationId);
    if (seqs === undefined) this.#byInvocation.set(rec.invocationId, [rec.seq]);
    else seqs.push(rec.seq);
  }

  /**
   * Append another recorder's records (one invocation's segment, recorded apart: a step on another thread) in their
   * order, each given the next seq here, with the blobs they name. The segment was bounded when it was recorded, so
   * no limit is checked again.
   * @param records the segment's records, in their seq order
   * @param blobs the segment's blobs (sha256 → bytes)
   * @returns the records as stored here
   * @example run.append(segment.records, segment.blobs)
   */
  append(records: readonly TapeRecord[], blobs: ReadonlyMap<string, Uint8Array> | Iterable<readonly [string, Uint8Array]>): TapeRecord[] {
    for (const [h, b] of blobs) {
      if (this.#blobs.has(h)) continue;
      this.#blobs.set(h, b);
      this.#blobBytes += b.length;
    }
    return records.map((r) => {
      const rec: TapeRecord = { ...r, seq: this.#records.length };
      this.#records.push(rec);
      this.#index(rec);
      return rec;
    });
  }

  /**
   * Commit each call separately (`tape-commits.ts`): from now on {@link invocationDigest} hashes the calls' committed
   * lines, as a run with salted commitments stores them.
   * @param key the run's commit key
   */
  commitWith(key: Uint8Array): void {
    this.#commitKey = key;
  }

  /**
   * The host calls one invocation made, as the run's events commit them: how many, and the SHA-256 of their tape
   * lines (each record's canonical JSON + "\n", in seq order), blob references included; with {@link commitWith},
   * of their committed lines.
   * @param invocationId the invocation
   * @returns `{count, hash}` (the hash of the empty string when it made none)
   * @example tape.invocationDigest(invocationId) // { count: 2, hash: "…" }
   */
  invocationDigest(invocationId: string): { count: number; hash: string } {
    const mine = [...(this.#byInvocation.get(invocationId) ?? [])].sort((a, b) => a - b).map((seq) => this.#records[seq]!);
    return { count: mine.length, hash: sha256Hex(this.#commitKey === null ? tapeToJsonl(mine) : committedTapeJsonl(this.#commitKey, mine)) };
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
