/**
 * A run record with some events changed and the whole chain made to match again (payload hashes, event hashes and
 * ids, the run hash), as a forger would: for the tests that show what replay and the report make of such a capsule.
 * @module
 */
import { uuidFromHex } from "../../src/canonical/ids.ts";
import type { RunRecord } from "../../src/engine/types.ts";
import type { RecordedEvent } from "../../src/ledger/event-log.ts";
import { eventHash, eventPayloadHash, GENESIS_HASH, runHash } from "../../src/ledger/hash-chain.ts";

/**
 * Change a record's events and chain them again.
 * @param record the run
 * @param mutate changes the copied events in place
 * @returns the forged record (the original is untouched)
 */
export function forged(record: RunRecord, mutate: (events: RecordedEvent[]) => void): RunRecord {
  const events = record.events.map((e) => ({ ...e, payload: structuredClone(e.payload) }));
  mutate(events);
  let prev = GENESIS_HASH;
  for (const e of events) {
    e.payloadHash = eventPayloadHash(e.type, e.payload);
    e.prevEventHash = prev;
    e.eventHash = eventHash(e.type, e.timestamp, e.payloadHash, prev);
    e.eventId = uuidFromHex(e.eventHash);
    prev = e.eventHash;
  }
  return { ...record, events, runHash: runHash(events.map((e) => e.eventHash)) };
}
