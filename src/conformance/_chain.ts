/**
 * The hash rules of seed 003 §3.3, recomputed from a capsule's `events.jsonl` with nothing but RFC 8785 canonical
 * JSON and SHA-256 (not through the ledger the implementation may share): `payloadHash = SHA256(JCS(payload))` of the
 * hashed payload — the payload, less a salted value and its salt (conformance/HASHING.md "Value commitments":
 * `arguments` + `argumentsSalt` of `tool.invoked`, `result` + `resultSalt` of `tool.completed`, whose commitments stay
 * in the payload) — `eventHash = SHA256(type + timestamp + payloadHash + prevEventHash)`, the first `prevEventHash`
 * 64 zeros, `runHash = SHA256(eventHash₁ + … + eventHashₙ)`.
 * @module
 */
import { canonicalize } from "../canonical/mod.ts";
import { sha256Hex, utf8 } from "../canonical/mod.ts";
import type { CapsuleEvent } from "./context.ts";

const GENESIS = "0".repeat(64);

/** Per event type, a salted value and its salt, left out of the hashed payload when the salt is there. */
const SALTED: Readonly<Record<string, readonly [string, string]>> = {
  "tool.invoked": ["arguments", "argumentsSalt"],
  "tool.completed": ["result", "resultSalt"],
};

/** The payload the chain hashes (see the module notes). */
function hashed(type: unknown, payload: unknown): unknown {
  const fields = typeof type === "string" ? SALTED[type] : undefined;
  if (fields === undefined || payload === null || typeof payload !== "object" || !(fields[1] in payload)) return payload;
  return Object.fromEntries(Object.entries(payload).filter(([k]) => k !== fields[0] && k !== fields[1]));
}
const ISO_MS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The first event whose payloadHash, prevEventHash or eventHash is not what §3.3 computes, or null.
 * @param events the recorded events
 * @returns a message naming the event and the field, or null when the chain holds
 */
export function chainProblem(events: readonly CapsuleEvent[]): string | null {
  let prev = GENESIS;
  for (const [i, e] of events.entries()) {
    const payloadHash = sha256Hex(utf8(canonicalize(hashed(e.type, e.payload))));
    if (e.payloadHash !== payloadHash) return `event ${i} (${e.type}): payloadHash is ${String(e.payloadHash)}, SHA256(JCS(hashed payload)) is ${payloadHash}`;
    if (e.prevEventHash !== prev) return `event ${i} (${e.type}): prevEventHash is ${String(e.prevEventHash)}, the previous eventHash is ${prev}`;
    const eventHash = sha256Hex(utf8(`${e.type}${e.timestamp}${payloadHash}${prev}`));
    if (e.eventHash !== eventHash) return `event ${i} (${e.type}): eventHash is ${String(e.eventHash)}, SHA256(type + timestamp + payloadHash + prevEventHash) is ${eventHash}`;
    prev = eventHash;
  }
  return null;
}

/**
 * The run hash of the recorded event hashes.
 * @param events the recorded events
 * @returns SHA256 of their concatenated `eventHash` values
 */
export function runHashOf(events: readonly CapsuleEvent[]): string {
  return sha256Hex(utf8(events.map((e) => String(e.eventHash)).join("")));
}

/**
 * The first event whose timestamp is not ISO 8601 UTC with milliseconds (§3.3 rule 1), or null.
 * @param events the recorded events
 * @returns a message, or null
 */
export function timestampProblem(events: readonly CapsuleEvent[]): string | null {
  for (const [i, e] of events.entries()) {
    if (typeof e.timestamp !== "string" || !ISO_MS_UTC.test(e.timestamp) || Number.isNaN(Date.parse(e.timestamp))) {
      return `event ${i} (${e.type}): timestamp ${JSON.stringify(e.timestamp)} is not ISO 8601 UTC with milliseconds`;
    }
  }
  return null;
}
