/**
 * Replaying a tape (seed 003 §3.4 "Replay MUST validate recorded outputs match expected hashes"): a tool that asks
 * for something not on the tape is a REPLAY_DIVERGENCE naming the first differing field.
 *
 * A {@link TapePlayer} hands out the recorded calls in seq order. `next()` compares the new call with the next
 * record (invocation, op, then the request in its stored form, byte for byte); `check()` compares what the host
 * produced now with what was recorded. The first difference is a `REPLAY_DIVERGENCE` whose details name the
 * `seq` and the `field` (a JSON path such as `request.path` or `response.data`).
 * @module
 */
import { bytesToBase64, isSha256Hex } from "../canonical/mod.ts";
import { canonicalize } from "../canonical/mod.ts";
import { sha256Hex } from "../canonical/mod.ts";
import { ReachError, isErrorCode } from "../protocol/mod.ts";
import type { ErrorDetails } from "../protocol/mod.ts";
import { storedRequest, stripBlobs } from "./tape.ts";
import type { TapeJson, TapeOutcome, TapeRecord } from "./tape.ts";
import { tapeValuePath } from "./tape-commits.ts";

/** A recorded call handed out by {@link TapePlayer.next}: the record and its outcome with blobs resolved. */
export type PlayedCall = {
  /** The record. */
  record: TapeRecord;
  /** The recorded outcome: the response (blob references replaced by base64 `data`) or the error details. */
  outcome: TapeOutcome;
};

/** Most characters of a value shown in a divergence. */
const SHOWN_CHARS = 200;

/**
 * Characters a terminal would act on (C1 controls, DEL, the bidirectional embeddings, overrides and isolates, the
 * line and paragraph separators) beyond the C0 controls canonical JSON already escapes.
 */
const TERMINAL_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A value as a divergence shows it: canonical JSON, clipped to 200 characters, with every character a terminal would
 * act on written as a `\uXXXX` escape (so the text is still JSON up to the clip, and safe to print).
 * @param value the value (undefined: absent)
 * @returns the text
 * @example showValue("a\u009b2J") // '"a\\u009b2J"'
 */
export function showValue(value: unknown): string {
  let text: string;
  try {
    text = value === undefined ? "(absent)" : canonicalize(value);
  } catch {
    text = "(not JSON)";
  }
  if (text.length > SHOWN_CHARS) {
    const cut = /[\uD800-\uDBFF]/.test(text.charAt(SHOWN_CHARS - 1)) ? SHOWN_CHARS - 1 : SHOWN_CHARS;
    text = text.slice(0, cut) + "…";
  }
  return text.replace(TERMINAL_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

const show = showValue;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function fieldName(path: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** The first place two JSON values differ, as the keys and indices leading there, or null when they are equal. */
function differenceAt(a: unknown, b: unknown): (string | number)[] | null {
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    for (const k of keys) {
      const inA = Object.prototype.hasOwnProperty.call(a, k);
      const inB = Object.prototype.hasOwnProperty.call(b, k);
      if (inA !== inB) return [k];
      const d = differenceAt(a[k], b[k]);
      if (d !== null) return [k, ...d];
    }
    return null;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const d = differenceAt(a[i], b[i]);
      if (d !== null) return [i, ...d];
    }
    return a.length === b.length ? null : [n];
  }
  return show(a) === show(b) ? null : [];
}

/**
 * The first place where two JSON values differ, as a path from `path` (object keys in UTF-16 code-unit order,
 * array indices in order), or null when they are equal in canonical form.
 * @param a one value
 * @param b the other
 * @param path the name of the root (default `"$"`)
 * @returns e.g. `"$.headers.accept"`, `"$.lines[3]"`, or null
 * @example firstDifference({ a: 1, b: 2 }, { a: 1, b: 3 }) // "$.b"
 */
export function firstDifference(a: unknown, b: unknown, path = "$"): string | null {
  const at = differenceAt(a, b);
  return at === null ? null : at.reduce<string>((p, seg) => (typeof seg === "number" ? `${p}[${seg}]` : fieldName(p, seg)), path);
}

/**
 * Where two JSON values first differ, as an RFC 6901 JSON pointer, with the value each holds there.
 * @param a the recorded value
 * @param b the replayed value
 * @returns `{pointer, recorded, replayed}` (values as {@link showValue} shows them), or null when they are equal
 * @example differencePointer({ keys: ["zeta", "alpha"] }, { keys: ["alpha", "zeta"] }) // { pointer: "/keys/0", recorded: '"zeta"', replayed: '"alpha"' }
 */
export function differencePointer(a: unknown, b: unknown): { pointer: string; recorded: string; replayed: string } | null {
  const at = differenceAt(a, b);
  if (at === null) return null;
  const valueAt = (root: unknown): unknown => {
    let v = root;
    for (const seg of at) {
      if (v === null || typeof v !== "object" || !Object.prototype.hasOwnProperty.call(v, seg)) return undefined;
      v = (v as Record<string | number, unknown>)[seg];
    }
    return v;
  };
  const pointer = at.map((seg) => "/" + String(seg).replace(/~/g, "~0").replace(/\//g, "~1")).join("");
  return { pointer, recorded: show(valueAt(a)), replayed: show(valueAt(b)) };
}

/**
 * The `REPLAY_DIVERGENCE` error.
 * @param seq the tape position
 * @param field the first differing field
 * @param expected the recorded value there
 * @param actual the value now
 * @param extra more details (op, invocationId)
 * @returns the error
 */
export function replayDivergence(
  seq: number,
  field: string,
  expected: unknown,
  actual: unknown,
  extra: Record<string, unknown> = {},
): ReachError {
  return new ReachError(
    "REPLAY_DIVERGENCE",
    `replay diverged at tape seq ${seq}, field ${field}: recorded ${show(expected)}, now ${show(actual)}; the tool ` +
      `or its inputs changed since the capsule was made`,
    { details: { ...extra, seq, field, expected: show(expected), actual: show(actual) } },
  );
}

/**
 * A ReachError rebuilt from recorded error details (so a replayed failure is thrown as it was).
 * @param e the recorded ErrorDetails
 * @returns the error
 * @throws ReachError `REPLAY_CAPSULE_INVALID` when the code is not in the closed set
 */
export function errorFromDetails(e: ErrorDetails): ReachError {
  if (!isErrorCode(e.code) || typeof e.message !== "string" || e.message.length === 0) {
    throw new ReachError("REPLAY_CAPSULE_INVALID", `a tape record holds an error with an unknown code; the capsule is damaged`);
  }
  const opts: { details?: Record<string, unknown>; recoverable?: boolean; retryAfter?: number } = {};
  if (isPlainObject(e.details)) opts.details = e.details;
  if (typeof e.recoverable === "boolean") opts.recoverable = e.recoverable;
  if (typeof e.retryAfter === "number") opts.retryAfter = e.retryAfter;
  return new ReachError(e.code, e.message, opts);
}

/**
 * Feeds a recorded tape back to a replayed run.
 * @example
 * const player = new TapePlayer(records, blobs);
 * const played = player.next("http.fetch", request, invocationId); // throws REPLAY_DIVERGENCE on a different request
 */
export class TapePlayer {
  readonly #records: readonly TapeRecord[];
  readonly #blobs: ReadonlyMap<string, Uint8Array>;
  /** An invocation's player reads its parent's blobs (checked there). */
  #blobsFrom: ReadonlyMap<string, Uint8Array> | null = null;
  #at = 0;
  /** Invocations handed to their own players ({@link TapePlayer.forInvocation}); this one skips their records. */
  readonly #taken = new Map<string, TapePlayer>();

  /**
   * @param records the recorded calls, in seq order (seq must be 0, 1, 2, …; with `segment`, increasing)
   * @param blobs the blob map (sha256 → bytes)
   * @param options `segment`: the records are one invocation's part of a tape (another thread's player)
   * @throws ReachError `REPLAY_CAPSULE_INVALID` when the seqs are not consecutive from 0, or a blob is missing or
   *   does not hash to its name
   */
  constructor(records: readonly TapeRecord[], blobs: ReadonlyMap<string, Uint8Array>, options: { segment?: boolean } = {}) {
    records.forEach((r, i) => {
      const ok = options.segment === true ? Number.isSafeInteger(r.seq) && (i === 0 || r.seq > records[i - 1]!.seq) : r.seq === i;
      if (!ok) {
        throw new ReachError("REPLAY_CAPSULE_INVALID", `tape record ${i} has seq ${String(r.seq)}; the tape is damaged`,
          { details: { index: i } });
      }
    });
    for (const [h, b] of blobs) {
      if (!isSha256Hex(h) || sha256Hex(b) !== h) {
        throw new ReachError("REPLAY_CAPSULE_INVALID", `blob ${h.slice(0, 64)} does not hash to its name; the capsule is damaged`,
          { details: { blob: h.slice(0, 64) } });
      }
    }
    this.#records = records;
    this.#blobs = blobs;
  }

  /** Records not yet handed out (those of invocations given their own players included). */
  get remaining(): number {
    let n = 0;
    for (let i = this.#at; i < this.#records.length; i++) if (!this.#taken.has(this.#records[i]!.invocationId)) n++;
    for (const p of this.#taken.values()) n += p.remaining;
    return n;
  }

  /**
   * A player of one invocation's records, matched in their own order whatever other invocations do meanwhile (steps
   * that run at the same time, `src/engine/step-graph.ts`); this player skips them from now on.
   * @param invocationId the invocation
   * @returns its player (the same one when asked again)
   * @example const mine = player.forInvocation(invocationId);
   */
  forInvocation(invocationId: string): TapePlayer {
    let p = this.#taken.get(invocationId);
    if (p === undefined) {
      p = new TapePlayer(this.#records.slice(this.#at).filter((r) => r.invocationId === invocationId), new Map(), { segment: true });
      p.#blobsFrom = this.#blobs;
      this.#taken.set(invocationId, p);
    }
    return p;
  }

  /**
   * What a player of these records needs on another thread: the records not yet handed out and the blobs they name.
   * @returns records and blobs (structured-cloneable)
   * @example new TapePlayer(w.records, new Map(w.blobs), { segment: true })
   */
  wire(): { records: TapeRecord[]; blobs: [string, Uint8Array][] } {
    const records = this.#records.slice(this.#at);
    const named = new Set<string>();
    for (const r of records) for (const v of [r.request, r.response]) {
      const data = (v as { data?: unknown } | undefined)?.data;
      if (isPlainObject(data) && typeof data["blob"] === "string") named.add(data["blob"]);
    }
    const blobs = this.#blobsFrom ?? this.#blobs;
    return { records, blobs: [...named].flatMap((h) => (blobs.has(h) ? [[h, blobs.get(h)!] as [string, Uint8Array]] : [])) };
  }

  /**
   * Count `n` records as handed out (another thread's player of this one's {@link wire} played them).
   * @param n how many
   * @example mine.advance(3)
   */
  advance(n: number): void {
    this.#at = Math.min(this.#records.length, this.#at + Math.max(0, n));
  }

  /** How many records were handed out. */
  get played(): number {
    return this.#at;
  }

  /**
   * The next recorded call, when it matches this one.
   * @param op the op the tool calls now
   * @param request the request it sends now
   * @param invocationId the invocation making the call, when known (compared too)
   * @returns the record and its recorded outcome (blobs resolved)
   * @throws ReachError `REPLAY_DIVERGENCE` (field `invocationId`, `op` or `request.…`, or `seq` when the tape is
   *   exhausted); `REPLAY_CAPSULE_INVALID` when a referenced blob is missing
   */
  next(op: string, request: unknown, invocationId?: string): PlayedCall {
    while (this.#at < this.#records.length && this.#taken.has(this.#records[this.#at]!.invocationId)) this.#at++;
    const rec = this.#records[this.#at];
    const seq = rec?.seq ?? (this.#records.length === 0 ? this.#at : this.#records[this.#records.length - 1]!.seq + 1);
    if (rec === undefined) throw replayDivergence(seq, "seq", "(end of tape)", `${op} call`, { op });
    const extra = { op: rec.op, invocationId: rec.invocationId };
    if (invocationId !== undefined && rec.invocationId !== invocationId) {
      throw replayDivergence(seq, "invocationId", rec.invocationId, invocationId, extra);
    }
    if (rec.op !== op) throw replayDivergence(seq, "op", rec.op, op, extra);
    if (rec.redacted === true) {
      throw new ReachError("REPLAY_REDACTED", `tape call ${seq} (${rec.op}) is redacted: its request and response are not in the capsule, so the step that made it cannot be replayed; \`reach-wasm verify\` still checks it`,
        { details: { ...extra, seq, entry: tapeValuePath(seq) } });
    }
    const now = storedRequest(request, rec.error !== undefined);
    if (now.text !== canonicalize(rec.request)) {
      const field = firstDifference(rec.request, now.value, "request") ?? "request";
      throw replayDivergence(seq, field, pick(rec.request, field), pick(now.value, field), extra);
    }
    this.#at++;
    if (rec.error !== undefined) return { record: rec, outcome: { error: rec.error } };
    return { record: rec, outcome: { response: this.#resolve(rec, rec.response ?? {}) } };
  }

  /**
   * Compare what the host produced now with what the record holds (responses compared in stored form, so blob
   * references compare by hash).
   * @param played from {@link next}
   * @param actual the outcome now
   * @throws ReachError `REPLAY_DIVERGENCE` naming `response.…` or `error.…`
   */
  check(played: PlayedCall, actual: TapeOutcome): void {
    const rec = played.record;
    const expected: Record<string, unknown> = rec.error !== undefined ? { error: rec.error } : { response: rec.response };
    const now: Record<string, unknown> =
      "error" in actual ? { error: JSON.parse(canonicalize(actual.error)) } : { response: stripBlobs(actual.response) };
    const field = firstDifference(expected, now, "");
    if (field !== null) {
      const f = field.startsWith(".") ? field.slice(1) : field;
      throw replayDivergence(rec.seq, f, pick(expected, "." + f), pick(now, "." + f), { op: rec.op, invocationId: rec.invocationId });
    }
  }

  /**
   * Check that every record was replayed.
   * @throws ReachError `REPLAY_DIVERGENCE` (field `seq`) when the replay made fewer calls than recorded
   */
  finish(): void {
    const rec = this.#records[this.#at];
    if (rec !== undefined) {
      throw replayDivergence(rec.seq, "seq", `${rec.op} call`, "(no more calls)", { op: rec.op, invocationId: rec.invocationId });
    }
  }

  #resolve(rec: TapeRecord, response: TapeJson): TapeJson {
    const data = response["data"];
    if (!isPlainObject(data)) return response;
    const hash = data["blob"];
    const bytes = typeof hash === "string" ? (this.#blobsFrom ?? this.#blobs).get(hash) : undefined;
    if (bytes === undefined) {
      throw new ReachError("REPLAY_CAPSULE_INVALID", `tape seq ${rec.seq} refers to a blob the capsule does not hold`,
        { details: { seq: rec.seq, blob: String(hash).slice(0, 64) } });
    }
    return { ...response, data: bytesToBase64(bytes) };
  }
}

/** The value at a path made by `firstDifference` (best effort, for messages). */
function pick(root: unknown, path: string): unknown {
  const re = /\.([A-Za-z_$][A-Za-z0-9_$]*)|\[("(?:[^"\\]|\\.)*"|\d+)\]/gy;
  const start = path.search(/[.[]/);
  if (start < 0) return root;
  re.lastIndex = start;
  let v: unknown = root;
  let m: RegExpExecArray | null;
  while ((m = re.exec(path)) !== null) {
    const key = m[1] ?? (m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : Number(m[2]));
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[key];
  }
  return v;
}
