/**
 * The federation annex of a capsule (seed 003 §6; ARCHITECTURE "Faces"): events that describe how a run travelled
 * between nodes (`federation.delegation`, `capsule.sync`) without being part of the run itself, so that a delegated
 * run keeps the run hash of the same run done locally. They form their own chain in `federation.jsonl`, anchored on
 * the run: the first event's `prevEventHash` is the run hash, every `timestamp` is the run's last timestamp, and
 * `eventHash` follows seed 003 §3.3. The capsule index lists the entry, so a run proof (which signs the index
 * digest) covers it.
 * @module
 */
import { uuidFromHex } from "../canonical/mod.ts";
import { eventHash, payloadHash } from "../ledger/mod.ts";
import type { RecordedEvent } from "../ledger/mod.ts";
import type { EventType } from "../protocol/mod.ts";

/** One annex event as a face supplies it. */
export type AnnexEvent = { type: Extract<EventType, "federation.delegation" | "capsule.sync">; payload: Record<string, unknown> };

/**
 * Chain annex events onto a finished run.
 * @param runId the run
 * @param runHash the run hash (the first event's `prevEventHash`)
 * @param timestamp the run's last event timestamp
 * @param events the events, in order
 * @returns the recorded events, `sequence` from 0
 * @throws TypeError when a payload is not canonical JSON
 * @example chainAnnex(run.runId, run.runHash, "1970-01-01T00:00:00.010Z", [{ type: "capsule.sync", payload: {} }])
 */
export function chainAnnex(runId: string, runHash: string, timestamp: string, events: readonly AnnexEvent[]): RecordedEvent[] {
  let prev = runHash;
  return events.map((e, sequence) => {
    const ph = payloadHash(e.payload);
    const h = eventHash(e.type, timestamp, ph, prev);
    const rec: RecordedEvent = { specVersion: "1.0.0", eventId: uuidFromHex(h), runId, sequence, type: e.type, timestamp, payload: e.payload, payloadHash: ph, prevEventHash: prev, eventHash: h };
    prev = h;
    return rec;
  });
}
