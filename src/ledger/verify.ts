/**
 * `verifyChain`: re-derive every hash of a recorded run and report the first event that does not hold.
 * Checks per event i (in this order): exact key set, `specVersion`, `sequence === i`, `runId` (same for all events
 * and equal to `run.started`'s payload), known `type`, strict timestamp (ISO 8601 UTC ms, never decreasing),
 * `payloadHash`, `prevEventHash` (64 zeros for i = 0), `eventHash`, `eventId` (from `eventHash`), and the ordering
 * rules of seed 003 §3.2. `metrics` is deliberately unhashed and only checked to be an object.
 * @module
 */
import { isSha256Hex } from "../canonical/mod.ts";
import { uuidFromHex } from "../canonical/mod.ts";
import { parseIsoMillis } from "../determinism/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { EVENT_SPEC_VERSION } from "../protocol/mod.ts";
import { isEventType } from "../protocol/mod.ts";
import { eventHash, eventPayloadHash, GENESIS_HASH, runHash } from "./hash-chain.ts";
import { OrderingState } from "./ordering.ts";

/** Result of `verifyChain`. */
export type ChainReport =
  | { valid: true; count: number; runHash: string; head: string }
  | { valid: false; count: number; index: number; field: string; reason: string };

const REQUIRED_KEYS = [
  "specVersion",
  "eventId",
  "runId",
  "sequence",
  "type",
  "timestamp",
  "payload",
  "payloadHash",
  "prevEventHash",
  "eventHash",
] as const;
const ALLOWED_KEYS: ReadonlySet<string> = new Set<string>([...REQUIRED_KEYS, "metrics"]);

/**
 * Verify a recorded run's hash chain and ordering.
 * @param events the events, in order (as parsed from `events.jsonl`)
 * @param expectedRunHash when given, the computed runHash must equal it (reported at index = events.length)
 * @returns `{ valid: true, runHash }` or the index, field and reason of the first broken event
 * @example
 * const report = verifyChain(readJsonl(bytes).events);
 * if (!report.valid) console.error(`event ${report.index}: ${report.reason}`);
 */
export function verifyChain(events: readonly unknown[], expectedRunHash?: string): ChainReport {
  const count = events.length;
  const bad = (index: number, field: string, reason: string): ChainReport => ({ valid: false, count, index, field, reason });
  if (count === 0) return bad(0, "type", "the log is empty: a run log starts with run.started");
  let prev = GENESIS_HASH;
  let prevMs = -Infinity;
  let runId: string | null = null;
  let order: OrderingState | null = null;
  const hashes: string[] = [];
  for (let i = 0; i < count; i++) {
    const e = events[i];
    if (e === null || typeof e !== "object" || Array.isArray(e)) return bad(i, "", "not a JSON object");
    const ev = e as Record<string, unknown>;
    for (const k of Object.keys(ev)) if (!ALLOWED_KEYS.has(k)) return bad(i, k, `unknown field "${k}"`);
    for (const k of REQUIRED_KEYS) if (!(k in ev)) return bad(i, k, `missing field "${k}"`);
    if (ev.specVersion !== EVENT_SPEC_VERSION) return bad(i, "specVersion", `specVersion must be "${EVENT_SPEC_VERSION}"`);
    if (ev.sequence !== i) return bad(i, "sequence", `sequence is ${JSON.stringify(ev.sequence)}, expected ${i}`);
    if (typeof ev.runId !== "string") return bad(i, "runId", "runId must be a string");
    if (runId === null) {
      runId = ev.runId;
      order = new OrderingState(runId);
    } else if (ev.runId !== runId) return bad(i, "runId", `runId differs from the first event's (${runId})`);
    if (!isEventType(ev.type)) return bad(i, "type", `unknown event type ${JSON.stringify(ev.type)}`);
    if (typeof ev.timestamp !== "string") return bad(i, "timestamp", "timestamp must be a string");
    let ms: number;
    try {
      ms = parseIsoMillis(ev.timestamp);
    } catch {
      return bad(i, "timestamp", "timestamp is not ISO 8601 UTC with milliseconds (YYYY-MM-DDTHH:mm:ss.sssZ)");
    }
    if (ms < prevMs) return bad(i, "timestamp", "timestamp goes back in time");
    prevMs = ms;
    const payload = ev.payload;
    if (payload === null || typeof payload !== "object" || Array.isArray(payload)) {
      return bad(i, "payload", "payload must be a JSON object");
    }
    let pHash: string;
    try {
      pHash = eventPayloadHash(String(ev.type), payload as Record<string, unknown>);
    } catch (err) {
      return bad(i, "payload", `payload cannot be canonicalised: ${(err as Error).message}`);
    }
    if (ev.payloadHash !== pHash) return bad(i, "payloadHash", `payloadHash does not match the payload (recomputed ${pHash})`);
    if (ev.prevEventHash !== prev) return bad(i, "prevEventHash", `prevEventHash does not link to event ${i - 1}`);
    const eHash = eventHash(ev.type, ev.timestamp, pHash, prev);
    if (ev.eventHash !== eHash) return bad(i, "eventHash", `eventHash does not match (recomputed ${eHash})`);
    if (ev.eventId !== uuidFromHex(eHash)) return bad(i, "eventId", "eventId is not derived from eventHash");
    if (ev.metrics !== undefined && (ev.metrics === null || typeof ev.metrics !== "object" || Array.isArray(ev.metrics))) {
      return bad(i, "metrics", "metrics must be an object");
    }
    if (i === 0 && (payload as Record<string, unknown>).runId !== runId) {
      return bad(i, "runId", "runId differs from run.started's payload.runId");
    }
    try {
      order!.accept(ev.type, payload as Record<string, unknown>);
    } catch (err) {
      if (err instanceof ReachError) return bad(i, "type", err.message);
      throw err;
    }
    prev = eHash;
    hashes.push(eHash);
  }
  const computed = runHash(hashes);
  if (expectedRunHash !== undefined) {
    if (!isSha256Hex(expectedRunHash)) return bad(count, "runHash", "the expected runHash is not 64 lowercase hex digits");
    if (computed !== expectedRunHash) {
      return bad(count, "runHash", `runHash ${computed} does not match the expected ${expectedRunHash}`);
    }
  }
  return { valid: true, count, runHash: computed, head: prev };
}
