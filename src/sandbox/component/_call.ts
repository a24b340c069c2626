/**
 * One invocation of a component (`runner.ts`): its fuel meter, the halt that stops the tool for good, WASI, the
 * instance set it runs on, and how its outcome is made, whether it returned, erred, trapped or ran out of something.
 * @module
 */
import { ReachError, toReachError } from "../../protocol/mod.ts";
import type { JsonValue } from "../../protocol/mod.ts";
import type { ModuleIdentity, ToolInvocation, ToolOutcome } from "../types.ts";
import { FuelMeter, meterError } from "../fuel/mod.ts";
import { WASI_CALL_FUEL } from "../wasi/runner.ts";
import { guestError } from "./_guest.ts";
import type { InstanceSet } from "./_instance-pool.ts";
import type { ToolExports } from "./transpiled.ts";
import { createWasiP2 } from "./wasi-p2.ts";
import type { WasiP2 } from "./wasi-p2.ts";

/** A failed guest whose memory reached this share of the limit is reported as out of memory. */
const MEMORY_FULL_RATIO = 0.9;

function largestMemory(instances: readonly WebAssembly.Instance[]): number {
  let max = 0;
  for (const instance of instances) {
    for (const value of Object.values(instance.exports)) {
      if (value instanceof WebAssembly.Memory) max = Math.max(max, value.buffer.byteLength);
    }
  }
  return max;
}

/** The state of one invocation while the runner runs it. */
export class ComponentCall {
  /** The invocation's meter (its own, or a fresh one with its fuel). */
  readonly meter: FuelMeter;
  /** The error that stopped the tool; once set it stands for every later call and for the outcome. */
  halted: ReachError | null = null;
  /** WASI, made only for a component that imports some of it (a C component may import only the host API). */
  wasi: WasiP2 | undefined;
  /** What ran, once the core modules are compiled. */
  identity: ModuleIdentity | undefined;
  /** The core instances, once instantiated (their memories tell an out-of-memory failure apart). */
  instances: WebAssembly.Instance[] = [];
  /** The instance set of this invocation. */
  set: InstanceSet | undefined;
  /** Whether the invocation returned cleanly (only then may its instance set serve another). */
  clean = false;
  /** The compiled key the instance set is pooled under. */
  poolKey = "";

  /**
   * @param invocation the invocation being run
   * @param maxLogBytes most bytes kept of the guest's stdout and stderr each
   */
  constructor(
    readonly invocation: ToolInvocation,
    readonly maxLogBytes: number,
  ) {
    this.meter = invocation.meter ?? new FuelMeter({ budget: invocation.fuel });
  }

  /** Stop the tool with `err` (or the earlier halt). */
  readonly halt = (err: ReachError): never => {
    this.halted ??= err;
    throw this.halted;
  };

  /**
   * Before and after every host or WASI call: an earlier halt stands, and the call costs fuel (time is fuel; the
   * meter's next refill is where a signal or the watchdog stops the tool).
   */
  readonly checkpoint = (): void => {
    if (this.halted !== null) throw this.halted;
    this.meter.charge(WASI_CALL_FUEL);
  };

  /** Make this invocation's WASI. */
  makeWasi(): WasiP2 {
    const host = this.invocation.host;
    this.wasi = createWasiP2({
      host: {
        // WASI's clock and randomness cannot fail in WIT terms: any host error stops the tool.
        invokeSync: (op, request) => {
          try {
            return host.invokeSync(op, request);
          } catch (err) {
            return this.halt(toReachError(err, "EXEC_SANDBOX_VIOLATION"));
          }
        },
        invoke: (op, request) => host.invoke(op, request),
      },
      checkpoint: this.checkpoint,
      maxOutputBytes: this.maxLogBytes,
    });
    return this.wasi;
  }

  /**
   * Call the component's `invoke` with `input` and parse what it returns.
   * @param exports the instantiated component
   * @param input the invocation's input as JSON text
   * @returns the outcome
   */
  invoke(exports: ToolExports, input: string): ToolOutcome {
    const toolName = this.invocation.toolName;
    let text: unknown;
    try {
      this.checkpoint();
      text = exports.invoke(input);
    } catch (err) {
      if (this.halted !== null) return this.fail(this.halted);
      // A guest's err(...) comes back as the glue's ComponentError after a normal return (post-return done).
      this.clean = err instanceof Error && Object.prototype.hasOwnProperty.call(err, "payload") && !this.#exhausted();
      return this.fail(guestError(toolName, err));
    }
    // A guest may have caught the host's exception (e.g. with Wasm exception handling): the halt still stands.
    if (this.halted !== null) return this.fail(this.halted);
    this.clean = !this.#exhausted();
    if (typeof text !== "string") {
      return this.fail(new ReachError("EXEC_OUTPUT_INVALID", `tool "${toolName}" returned no string`));
    }
    let output: JsonValue;
    try {
      output = JSON.parse(text) as JsonValue;
    } catch {
      return this.fail(
        new ReachError("EXEC_OUTPUT_INVALID", `tool "${toolName}" returned text that is not JSON; return JSON.stringify(output)`, {
          details: { outputPrefix: text.slice(0, 200) },
        }),
      );
    }
    return { status: "success", output, log: this.#log(), fuelUsed: this.meter.release(), ...this.#module() };
  }

  /**
   * The error outcome for `error`, or for what the meter or the memory size says it really was.
   * @param error what the invocation failed with
   * @returns the outcome
   */
  fail(error: ReachError): ToolOutcome {
    let err = error;
    const stopped = meterError(this.meter, this.invocation.toolName);
    if (this.halted === null && stopped !== null) {
      // A fuel trap or a stop surfaces as whatever the glue makes of the trap; the meter tells it apart.
      err = stopped;
    } else if (this.halted === null && err.code === "EXEC_TOOL_FAILED") {
      // Running into the memory cap surfaces as the guest's "out of memory" err or a trap; the memory size tells
      // it apart (the guest cannot fake this without really filling its memory).
      const bytes = largestMemory(this.instances);
      const limit = this.invocation.memoryLimitBytes;
      if (bytes >= limit * MEMORY_FULL_RATIO) {
        err = new ReachError(
          "EXEC_RESOURCE_EXHAUSTED",
          `tool "${this.invocation.toolName}" ran out of memory (limit ${limit} bytes); ` +
            "raise the tool's memory limit or give it less data",
          { details: { reason: "memory", memoryLimitBytes: limit, memoryBytes: bytes }, cause: error },
        );
      }
    }
    return { status: "error", error: err, log: this.#log(), fuelUsed: this.meter.release(), ...this.#module() };
  }

  #log(): string {
    return this.wasi === undefined ? "" : new TextDecoder("utf-8", { fatal: false }).decode(this.wasi.output().log);
  }

  #exhausted(): boolean {
    return this.meter.outcome !== null;
  }

  #module(): { module?: ModuleIdentity } {
    return this.identity === undefined ? {} : { module: this.identity };
  }
}
