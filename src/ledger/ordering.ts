/**
 * Event ordering rules of seed 003 §3.2, as a small state machine:
 *
 * 1. `run.started` comes first, once.
 * 2. A step opens with `run.step.started` and closes with `run.step.completed` | `run.step.failed` for the same
 *    `stepId`; steps never interleave (no step opens while another is open) and a `stepId` is used once.
 * 3. Tool events nest inside their step: `tool.invoked` needs an open step (and names it in `stepId` when it
 *    carries one) and no open tool; `tool.completed` | `tool.failed` closes the open invocation (same
 *    `invocationId`); a step cannot close while its tool is open.
 * 4. `policy.violation` may come anywhere before termination (inside a step it must name that step, if it
 *    names one); `federation.delegation` and `capsule.sync` only between steps.
 * 5. `run.completed` | `run.failed` | `run.aborted` come last, after every step event (no open step), once.
 * 6. Payloads that name the run (`runId`) name this run.
 * A violation throws `ReachError("PROTO_SEQUENCE_ERROR")`.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import type { EventType } from "../protocol/mod.ts";
import { isEventType } from "../protocol/mod.ts";

/** Tracks where a run's event sequence is, and refuses events that break seed 003 §3.2. */
export class OrderingState {
  #started = false;
  #terminated = false;
  #openStep: string | null = null;
  #openTool: string | null = null;
  readonly #stepIds = new Set<string>();
  readonly #invocationIds = new Set<string>();
  readonly #runId: string;

  /** @param runId the run's id; payloads carrying `runId` must match it */
  constructor(runId: string) {
    this.#runId = runId;
  }

  /** True once a terminal event was accepted. */
  get terminated(): boolean {
    return this.#terminated;
  }

  /** The open step's id, or null. */
  get openStep(): string | null {
    return this.#openStep;
  }

  /** The open tool invocation's id, or null. */
  get openInvocation(): string | null {
    return this.#openTool;
  }

  /**
   * Accept the next event or throw.
   * @param type the event type
   * @param payload the event payload (a plain object)
   * @throws ReachError PROTO_SEQUENCE_ERROR when the event may not come here
   */
  accept(type: EventType, payload: Record<string, unknown>): void {
    if (!isEventType(type)) fail(`unknown event type ${JSON.stringify(type)}`);
    if (this.#terminated) fail(`"${type}" after the run terminated: termination must be the last event`);
    if (!this.#started && type !== "run.started") fail(`"${type}" before "run.started": a run starts with run.started`);
    if (typeof payload.runId === "string" && payload.runId !== this.#runId) {
      fail(`"${type}" names run ${payload.runId}, but this log belongs to run ${this.#runId}`);
    }
    switch (type) {
      case "run.started":
        if (this.#started) fail(`a second "run.started": a run starts once`);
        this.#started = true;
        return;
      case "run.step.started": {
        const stepId = idOf(payload, "stepId", type);
        if (this.#openStep !== null) {
          fail(`step "${stepId}" started while step "${this.#openStep}" is open: steps must not interleave`);
        }
        if (!addNew(this.#stepIds, stepId)) fail(`step "${stepId}" started twice: step ids are unique within a run`);
        this.#openStep = stepId;
        return;
      }
      case "tool.invoked": {
        const invocationId = idOf(payload, "invocationId", type);
        if (this.#openStep === null) fail(`tool invocation "${invocationId}" outside a step: tool events nest in steps`);
        if (payload.stepId !== undefined && payload.stepId !== this.#openStep) {
          fail(`tool invocation "${invocationId}" names step ${JSON.stringify(payload.stepId)}, but step "${this.#openStep}" is open`);
        }
        if (this.#openTool !== null) fail(`tool invocation "${invocationId}" while "${this.#openTool}" is still open`);
        if (!addNew(this.#invocationIds, invocationId)) fail(`invocation id "${invocationId}" used twice`);
        this.#openTool = invocationId;
        return;
      }
      case "tool.completed":
      case "tool.failed": {
        const invocationId = idOf(payload, "invocationId", type);
        if (this.#openTool !== invocationId) {
          fail(`"${type}" for invocation "${invocationId}", but the open invocation is ${JSON.stringify(this.#openTool)}`);
        }
        this.#openTool = null;
        return;
      }
      case "run.step.completed":
      case "run.step.failed": {
        const stepId = idOf(payload, "stepId", type);
        if (this.#openStep !== stepId) fail(`"${type}" for step "${stepId}", but the open step is ${JSON.stringify(this.#openStep)}`);
        if (this.#openTool !== null) fail(`step "${stepId}" closed while tool invocation "${this.#openTool}" is open`);
        this.#openStep = null;
        return;
      }
      case "policy.violation":
        if (payload.stepId !== undefined && payload.stepId !== this.#openStep) {
          fail(`policy violation names step ${JSON.stringify(payload.stepId)}, but the open step is ${JSON.stringify(this.#openStep)}`);
        }
        return;
      case "federation.delegation":
      case "capsule.sync":
        if (this.#openStep !== null) fail(`"${type}" inside step "${this.#openStep}": it belongs between steps`);
        return;
      case "run.completed":
      case "run.failed":
      case "run.aborted":
        if (this.#openStep !== null) fail(`"${type}" while step "${this.#openStep}" is open: termination follows all step events`);
        this.#terminated = true;
        return;
    }
  }
}

/** Add `id` to `seen`; false (and nothing changes) when it was already there. One hash lookup instead of two. */
function addNew(seen: Set<string>, id: string): boolean {
  const size = seen.size;
  return seen.add(id).size !== size;
}

function idOf(payload: Record<string, unknown>, key: string, type: string): string {
  const v = payload[key];
  if (typeof v !== "string" || v.length === 0) fail(`"${type}" payload needs a non-empty string "${key}"`);
  return v;
}

function fail(message: string): never {
  throw new ReachError("PROTO_SEQUENCE_ERROR", `event order (seed 003 §3.2): ${message}`);
}
