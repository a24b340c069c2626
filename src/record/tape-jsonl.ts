/**
 * Reading a tape back from JSONL (the capsule's tape file): strict, bounded, every record's shape and hashes
 * checked, so one changed byte of a tape record makes verify or replay exit 1 with the line of the damage (seed 003
 * §3.4 "Replay MUST validate recorded outputs match expected hashes").
 * @module
 */
import { isSha256Hex } from "../canonical/mod.ts";
import { canonicalize } from "../canonical/mod.ts";
import { sha256Hex, utf8 } from "../canonical/mod.ts";
import { ReachError, isErrorCode } from "../protocol/mod.ts";
import type { TapeRecord } from "./tape.ts";
import { tapeValuePath, uncommitTapeLine } from "./tape-commits.ts";

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const RECORD_KEYS = new Set(["seq", "invocationId", "op", "request", "response", "error", "requestHash", "responseHash"]);

function bad(index: number, reason: string): ReachError {
  return new ReachError("REPLAY_CAPSULE_INVALID", `tape line ${index}: ${reason}; the capsule is damaged`,
    { details: { line: index, reason } });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Parse and check a JSONL tape.
 * @param input UTF-8 bytes or text, one canonical record per line, each line ending in `\n`
 * @param maxLines refuse more lines than this (default 1,000,000)
 * @param values a committed tape's value entries (`tape/<seq>.json`, `tape-commits.ts`): a tape whose lines hold
 *   commitments is read with them, each value checked against its commitment, an absent one giving a `redacted` record
 * @returns the records, in order
 * @throws ReachError `REPLAY_CAPSULE_INVALID` naming the first bad line: not UTF-8, not canonical JSON, unknown or
 *   missing fields, seq out of order, neither or both of response / error, a hash that does not match
 * @example readTapeJsonl(recorder.toJsonl()).length === recorder.records.length
 */
export function readTapeJsonl(input: Uint8Array | string, maxLines = 1_000_000, values: ReadonlyMap<string, Uint8Array> = new Map()): TapeRecord[] {
  const bytes = typeof input === "string" ? utf8(input) : input;
  const out: TapeRecord[] = [];
  let start = 0;
  let committedForm = false;
  while (start < bytes.length) {
    const index = out.length;
    if (index >= maxLines) throw bad(index, `more than ${maxLines} lines`);
    const nl = bytes.indexOf(0x0a, start);
    if (nl === -1) throw bad(index, "the last line does not end with a newline (truncated?)");
    let value: unknown;
    let line: string;
    try {
      line = decoder.decode(bytes.subarray(start, nl));
      value = JSON.parse(line);
    } catch {
      throw bad(index, "the line is not UTF-8 JSON");
    }
    if (!isObject(value)) throw bad(index, "the line is not a JSON object");
    if (canonicalize(value) !== line) throw bad(index, "the line is not in RFC 8785 canonical form");
    const committed = "requestCommit" in value;
    if (index === 0) committedForm = committed;
    else if (committed !== committedForm) throw bad(index, "the tape mixes committed and inline lines");
    if (committed) {
      if (value["seq"] !== index) throw bad(index, `seq ${String(value["seq"])} where ${index} was expected`);
      out.push(uncommitTapeLine(value, values.get(tapeValuePath(index))));
      start = nl + 1;
      continue;
    }
    for (const k of Object.keys(value)) if (!RECORD_KEYS.has(k)) throw bad(index, `unknown field ${JSON.stringify(k)}`);
    const r = value;
    if (r["seq"] !== index) throw bad(index, `seq ${String(r["seq"])} where ${index} was expected`);
    if (typeof r["invocationId"] !== "string" || typeof r["op"] !== "string") throw bad(index, "invocationId and op must be strings");
    if (!isObject(r["request"])) throw bad(index, "request must be an object");
    if (!isSha256Hex(r["requestHash"]) || !isSha256Hex(r["responseHash"])) throw bad(index, "hashes must be 64 hex digits");
    const hasResponse = r["response"] !== undefined;
    const hasError = r["error"] !== undefined;
    if (hasResponse === hasError) throw bad(index, "a record holds exactly one of response and error");
    if (hasResponse && !isObject(r["response"])) throw bad(index, "response must be an object");
    if (hasError) {
      const e = r["error"];
      if (!isObject(e) || !isErrorCode(e["code"]) || typeof e["message"] !== "string") throw bad(index, "error must be ErrorDetails");
    }
    if (sha256Hex(canonicalize(r["request"])) !== r["requestHash"]) throw bad(index, "requestHash does not match the request");
    if (sha256Hex(canonicalize(hasResponse ? r["response"] : r["error"])) !== r["responseHash"]) {
      throw bad(index, "responseHash does not match the response or error");
    }
    out.push(r as unknown as TapeRecord);
    start = nl + 1;
  }
  return out;
}
