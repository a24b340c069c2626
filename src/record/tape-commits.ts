/**
 * A tape whose host calls are each committed separately (conformance/HASHING.md "Value commitments"), the form a run
 * with salted commitments stores: `tape.jsonl` holds one line per call with only its commitments,
 * ```
 * {"invocationId", "op", "requestCommit", "responseCommit", "seq"}
 * ```
 * and the call's values are the body entry `tape/<seq>.json` = JCS `{"request", "requestSalt", "response" | "error",
 * "responseSalt"}` + "\n", where `requestCommit = valueCommit(requestSalt, request)` and `responseCommit =
 * valueCommit(responseSalt, response ?? error)` (the stored forms: blob references as on the tape), salts from the
 * run's commit key and the paths `tape/<seq>/request`, `tape/<seq>/response`. A redacted call lacks its value entry;
 * `tape.jsonl`, and with it `contents` and each invocation's `hostCalls.hash` (the SHA-256 of its committed lines),
 * stay as they were.
 * @module
 */
import { canonicalize, isSha256Hex, sha256Hex, utf8, valueCommit, valueSalt } from "../canonical/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import type { ErrorDetails } from "../protocol/mod.ts";
import type { TapeJson, TapeRecord } from "./_stored-form.ts";

/** Where a call's values are stored: `tape/<seq>.json`. */
export const TAPE_VALUE_PREFIX = "tape/";

/** The path of a call's value entry. */
export function tapeValuePath(seq: number): string {
  return `${TAPE_VALUE_PREFIX}${seq}.json`;
}

/** A line of a committed tape. */
export type CommittedTapeLine = { invocationId: string; op: string; requestCommit: string; responseCommit: string; seq: number };

/** The value entry of one call. */
export type TapeValues = { request: TapeJson; requestSalt: string; response?: TapeJson; error?: ErrorDetails; responseSalt: string };

/**
 * One call in committed form: its line and its value entry.
 * @param key the run's commit key
 * @param rec the record (stored forms)
 * @returns the line and the values
 */
export function commitTapeRecord(key: Uint8Array, rec: TapeRecord): { line: CommittedTapeLine; values: TapeValues } {
  const requestSalt = valueSalt(key, `tape/${rec.seq}/request`);
  const responseSalt = valueSalt(key, `tape/${rec.seq}/response`);
  const outcome = rec.error !== undefined ? rec.error : rec.response;
  const values: TapeValues = { request: rec.request, requestSalt, ...(rec.error !== undefined ? { error: rec.error } : { response: rec.response! }), responseSalt };
  return { line: { invocationId: rec.invocationId, op: rec.op, requestCommit: valueCommit(requestSalt, rec.request), responseCommit: valueCommit(responseSalt, outcome), seq: rec.seq }, values };
}

/**
 * The committed lines of records as JSONL (what `hostCalls.hash` and `tape.jsonl` hold).
 * @param key the run's commit key
 * @param records the records, in the order given
 * @returns the text
 */
export function committedTapeJsonl(key: Uint8Array, records: readonly TapeRecord[]): string {
  let out = "";
  for (const r of records) out += canonicalize(commitTapeRecord(key, r).line) + "\n";
  return out;
}

/**
 * A whole tape in committed form: `tape.jsonl` and its value entries.
 * @param key the run's commit key
 * @param records the records in seq order
 * @returns the tape bytes and `[tape/<seq>.json, bytes]` pairs
 */
export function committedTape(key: Uint8Array, records: readonly TapeRecord[]): { tape: Uint8Array; values: [string, Uint8Array][] } {
  let tape = "";
  const values: [string, Uint8Array][] = [];
  for (const r of records) {
    const c = commitTapeRecord(key, r);
    tape += canonicalize(c.line) + "\n";
    values.push([tapeValuePath(r.seq), utf8(canonicalize(c.values) + "\n")]);
  }
  return { tape: utf8(tape), values };
}

/** Whether tape bytes are in committed form (the first line has `requestCommit`). */
export function isCommittedTape(bytes: Uint8Array): boolean {
  const nl = bytes.indexOf(0x0a);
  const head = new TextDecoder().decode(bytes.subarray(0, nl < 0 ? Math.min(bytes.length, 4096) : nl));
  return head.includes('"requestCommit"');
}

function bad(seq: number, reason: string): ReachError {
  return new ReachError("REPLAY_CAPSULE_INVALID", `tape call ${seq}: ${reason}; the capsule is damaged`, { details: { seq, entry: tapeValuePath(seq), reason } });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * One committed line and its value entry back as a tape record, each value checked against its commitment; a call
 * whose value entry is absent comes back `redacted` (empty request and response, its commitments as hashes: a player
 * refuses to play it).
 * @param line the parsed line (already canonical and in seq order)
 * @param raw the value entry's bytes, or undefined when it is absent
 * @returns the record
 * @throws ReachError `REPLAY_CAPSULE_INVALID` when the line or the entry is malformed or a value does not give its commitment
 */
export function uncommitTapeLine(line: Record<string, unknown>, raw: Uint8Array | undefined): TapeRecord {
  const seq = Number(line["seq"]);
  const keys = Object.keys(line).sort().join(",");
  if (keys !== "invocationId,op,requestCommit,responseCommit,seq" || typeof line["invocationId"] !== "string" || typeof line["op"] !== "string" || !isSha256Hex(line["requestCommit"]) || !isSha256Hex(line["responseCommit"])) {
    throw bad(seq, "a committed tape line holds exactly invocationId, op, requestCommit, responseCommit and seq");
  }
  const base = { seq, invocationId: line["invocationId"], op: line["op"], requestHash: line["requestCommit"], responseHash: line["responseCommit"] };
  if (raw === undefined) return { ...base, request: {}, response: {}, redacted: true };
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
  } catch {
    throw bad(seq, "its value entry is not UTF-8 JSON");
  }
  if (!isObject(v) || !isObject(v["request"]) || typeof v["requestSalt"] !== "string" || typeof v["responseSalt"] !== "string" || (v["response"] === undefined) === (v["error"] === undefined)) {
    throw bad(seq, "its value entry must hold request, requestSalt, responseSalt and one of response and error");
  }
  if (valueCommit(v["requestSalt"], v["request"]) !== line["requestCommit"]) throw bad(seq, "the request and its salt do not give requestCommit");
  if (valueCommit(v["responseSalt"], v["response"] ?? v["error"]) !== line["responseCommit"]) throw bad(seq, "the response and its salt do not give responseCommit");
  // in memory a record keeps the plain hashes of its stored forms, as a tape in the previous format has them
  const out: TapeRecord = { ...base, request: v["request"] as TapeJson, requestHash: sha256Hex(canonicalize(v["request"])), responseHash: sha256Hex(canonicalize(v["response"] ?? v["error"])) };
  if (v["error"] !== undefined) out.error = v["error"] as ErrorDetails;
  else out.response = v["response"] as TapeJson;
  return out;
}
