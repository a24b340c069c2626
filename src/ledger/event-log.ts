/**
 * The append-only run event log: each append is checked against the ordering rules (seed 003 §3.2), stamped by the
 * virtual clock, hashed and chained (seed 003 §3.3). Real durations and host details go in the unhashed `metrics`.
 * @module
 */
import { uuidFromHex } from "../canonical/mod.ts";
import type { VirtualClock } from "../determinism/mod.ts";
import { formatIsoMillis } from "../determinism/mod.ts";
import { EVENT_SPEC_VERSION } from "../protocol/mod.ts";
import type { EventType } from "../protocol/mod.ts";
import { eventHash, eventPayloadHash, GENESIS_HASH, runHash } from "./hash-chain.ts";
import { OrderingState } from "./ordering.ts";


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
  /** Told of each event once it is appended (the live event stream; it must not throw). */
  onAppend?: (event: RecordedEvent) => void;
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
  readonly #onAppend: ((event: RecordedEvent) => void) | undefined;
  #head = GENESIS_HASH;

  constructor(options: EventLogOptions) {
    this.runId = options.runId;
    this.#clock = options.clock;
    this.#onAppend = options.onAppend;
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
    const pHash = eventPayloadHash(type, payload as Record<string, unknown>); // throws before any state changes
    this.#order.accept(type, payload);
    const timestamp = formatIsoMillis(this.#clock.tick()); // consecutive stamps reuse the formatted second
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
    this.#onAppend?.(event);
    return event;
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
