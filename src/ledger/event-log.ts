/**
 * The append-only run event log: each append is checked against the ordering rules (seed 003 §3.2), stamped by the
 * virtual clock, hashed and chained (seed 003 §3.3). Real durations and host details go in the unhashed `metrics`.
 * @module
 */
import { uuidFromHex } from "../canonical/ids.ts";
import type { VirtualClock } from "../determinism/clock.ts";
import { formatIsoMillis } from "../determinism/clock.ts";
import { EVENT_SPEC_VERSION } from "../protocol/event.ts";
import type { EventType } from "../protocol/event-types.ts";
import { eventHash, GENESIS_HASH, payloadHash, runHash } from "./hash-chain.ts";
import { OrderingState } from "./ordering.ts";


/** `"000Z"` … `"999Z"`: the millisecond tail of a timestamp. */
const MILLIS_Z: readonly string[] = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, "0") + "Z");

/** A JSON object payload. */
export type Payload = Record<string, unknown>;

/** One event as recorded: the hashed fields, the chain links, and the unhashed `metrics`. */
export type RecordedEvent = {
  specVersion: "1.0.0";
  /** UUID formed from the first 16 bytes of `eventHash` (version 8); deterministic. */
  eventId: string;
  runId: string;
  /** Index of the event in the run, from 0. */
  sequence: number;
  type: EventType;
  /** ISO 8601 UTC with milliseconds, from the run's virtual clock. */
  timestamp: string;
  payload: Payload;
  payloadHash: string;
  prevEventHash: string;
  eventHash: string;
  /** Unhashed: real durations, host names, anything that differs between two runs of the same input. */
  metrics?: Record<string, unknown>;
};

/** Options for a new log. */
export type EventLogOptions = {
  /** The run's id (a deterministic UUID). */
  runId: string;
  /** The run's virtual clock; each append stamps `clock.tick()`. */
  clock: Pick<VirtualClock, "tick">;
};

/**
 * An append-only, hash-chained event log for one run.
 * @example
 * const log = new EventLog({ runId, clock: new VirtualClock() });
 * log.append("run.started", { runId, packId: "hello", specVersion: "1.0.0", … });
 */
export class EventLog {
  readonly runId: string;
  readonly #clock: Pick<VirtualClock, "tick">;
  readonly #events: RecordedEvent[] = [];
  readonly #order: OrderingState;
  #head = GENESIS_HASH;
  #secondStart = NaN;
  #secondPrefix = "";

  constructor(options: EventLogOptions) {
    this.runId = options.runId;
    this.#clock = options.clock;
    this.#order = new OrderingState(options.runId);
  }

  /**
   * Append one event. The log takes ownership of `payload`: do not mutate it afterwards.
   * @param type the event type
   * @param payload a JSON object (must be representable in RFC 8785 JCS)
   * @param metrics unhashed measurements (durations, host details)
   * @returns the recorded event
   * @throws ReachError PROTO_SEQUENCE_ERROR when the event breaks seed 003 §3.2 ordering (nothing is appended)
   * @throws TypeError when the payload cannot be canonicalised (nothing is appended)
   */
  append(type: EventType, payload: Payload, metrics?: Record<string, unknown>): RecordedEvent {
    if (payload === null || typeof payload !== "object" || Array.isArray(payload)) {
      throw new TypeError(`"payload" expected a JSON object for event "${String(type)}"`);
    }
    const pHash = payloadHash(payload); // throws before any state changes
    this.#order.accept(type, payload);
    const timestamp = this.#timestamp(this.#clock.tick());
    const prev = this.#head;
    const eHash = eventHash(type, timestamp, pHash, prev);
    const event: RecordedEvent = {
      specVersion: EVENT_SPEC_VERSION,
      eventId: uuidFromHex(eHash),
      runId: this.runId,
      sequence: this.#events.length,
      type,
      timestamp,
      payload,
      payloadHash: pHash,
      prevEventHash: prev,
      eventHash: eHash,
    };
    if (metrics !== undefined) event.metrics = metrics;
    this.#events.push(event);
    this.#head = eHash;
    return event;
  }

  /**
   * `formatIsoMillis(ms)`, remembering the formatted second: events are stamped 1 ms apart, so up to 1000 events in a
   * row share the text up to the milliseconds, and only `"sssZ"` changes. The first stamp of each second goes through
   * `formatIsoMillis`, which validates `ms` and throws exactly as before; a stamp inside the remembered second is an
   * integer offset 0–999 from its start, so it is valid and formats to the same text.
   */
  #timestamp(ms: number): string {
    if (typeof ms === "number") {
      const milli = ms - this.#secondStart; // NaN until the first stamp
      if (milli >= 0 && milli < 1000) {
        const tail = MILLIS_Z[milli]; // undefined when `milli` is not an integer (formatIsoMillis then refuses it)
        if (tail !== undefined) return this.#secondPrefix + tail;
      }
    }
    const text = formatIsoMillis(ms);
    this.#secondPrefix = text.slice(0, 20); // "YYYY-MM-DDTHH:mm:ss."
    this.#secondStart = ms - Number(text.slice(20, 23));
    return text;
  }

  /** The events so far, in order (read-only view). */
  get events(): readonly RecordedEvent[] {
    return this.#events;
  }

  /** The last eventHash, or GENESIS_HASH for an empty log. */
  get head(): string {
    return this.#head;
  }

  /** True once a terminal event (run.completed | run.failed | run.aborted) was appended. */
  get terminated(): boolean {
    return this.#order.terminated;
  }

  /** The open step id, or null. */
  get openStep(): string | null {
    return this.#order.openStep;
  }

  /** The open tool invocation id, or null. */
  get openInvocation(): string | null {
    return this.#order.openInvocation;
  }

  /** The run hash over every event so far (seed 003 §3.3). */
  runHash(): string {
    return runHash(this.#events.map((e) => e.eventHash));
  }
}
