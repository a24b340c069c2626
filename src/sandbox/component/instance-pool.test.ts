// Instance reuse (`_instance-pool.ts`): an invocation never sees state left by the one before, at the core-wasm
// level (a hand-assembled module with an internal global and memory) and with the real componentize-js component.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bytesToBase64 } from "../../canonical/hex.ts";
import { sha256Hex } from "../../canonical/sha256.ts";
import { formatIsoMillis } from "../../determinism/clock.ts";
import { deriveStream } from "../../determinism/prng.ts";
import type { HostApi, HostOp, ToolInvocation, ToolOutcome } from "../types.ts";
import type { JsonObject } from "../../protocol/json.ts";
import { DEFAULT_FUEL } from "../types.ts";
import { exportState } from "./_state-exports.ts";
import { TEXT_STATS } from "./_test-components.ts";
import { ComponentRunner } from "./runner.ts";
import type { TranspiledComponent } from "./transpiled.ts";

const leb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
};
const section = (id: number, body: number[]): number[] => [id, ...leb(body.length), ...body];
const str = (s: string): number[] => [...leb(s.length), ...new TextEncoder().encode(s)];

/**
 * A core module whose state is all internal: `(memory 1)` and `(global $g (mut i32))`, neither exported.
 * `bump(mode)`: g += 1; mem[0] += 1; mode 1 grows the memory by a page, mode 2 traps; then calls the import
 * `host.note(g)` and returns (g * 1000 + mem[0]) * 10 + memory.size — 10011 on a fresh instance.
 */
const CORE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [0x02, 0x60, 0x01, 0x7f, 0x00, 0x60, 0x01, 0x7f, 0x01, 0x7f]), // types: (i32)->(), (i32)->i32
  ...section(2, [0x01, ...str("host"), ...str("note"), 0x00, 0x00]), // import host.note: type 0
  ...section(3, [0x01, 0x01]), // one function of type 1
  ...section(5, [0x01, 0x00, 0x01]), // memory, min 1 page
  ...section(6, [0x01, 0x7f, 0x01, 0x41, 0x00, 0x0b]), // global $g (mut i32) (i32.const 0)
  ...section(7, [0x01, ...str("bump"), 0x00, 0x01]), // export "bump" = func 1
  ...section(10, [0x01, ...(() => {
    const body = [
      0x00, // no locals
      0x23, 0x00, 0x41, 0x01, 0x6a, 0x24, 0x00, // g += 1
      0x41, 0x00, 0x41, 0x00, 0x2d, 0x00, 0x00, 0x41, 0x01, 0x6a, 0x3a, 0x00, 0x00, // mem[0] += 1
      0x20, 0x00, 0x41, 0x01, 0x46, 0x04, 0x40, 0x41, 0x01, 0x40, 0x00, 0x1a, 0x0b, // if mode == 1: grow 1
      0x20, 0x00, 0x41, 0x02, 0x46, 0x04, 0x40, 0x00, 0x0b, // if mode == 2: unreachable
      0x23, 0x00, 0x10, 0x00, // note(g)
      0x23, 0x00, 0x41, 0xe8, 0x07, 0x6c, 0x41, 0x00, 0x2d, 0x00, 0x00, 0x6a, 0x41, 0x0a, 0x6c, 0x3f, 0x00, 0x6a,
      0x0b,
    ];
    return [...leb(body.length), ...body];
  })()]),
]);
/** A component holding just that core module (the runner reads core modules from top-level sections). */
const CODE = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00, ...section(1, [...CORE])]);

/** Every core instance the glue was handed, in order (to see whether the runner reused one). */
const handed: WebAssembly.Instance[] = [];

/** Glue in the shape of jco's: its state (`notes`, `calls`) lives in the closure of `instantiate`. */
const COUNTER: TranspiledComponent = {
  componentSha256: sha256Hex(CODE),
  glueSha256: sha256Hex(new TextEncoder().encode("counter glue")),
  coreModules: { "counter.wasm": { embedded: 0 } },
  importNames: [],
  instantiate: async (getCoreModule, _imports, instantiateCore = WebAssembly.instantiate) => {
    const notes: number[] = [];
    let calls = 0;
    const instance = await instantiateCore(getCoreModule("counter.wasm"), { host: { note: (g: number) => void notes.push(g) } });
    handed.push(instance);
    const bump = instance.exports["bump"] as (mode: number) => number;
    return {
      invoke(input: string): string {
        calls++;
        const r = bump((JSON.parse(input) as { mode: number }).mode);
        return JSON.stringify({ r, notes, calls });
      },
    };
  },
};

const noHost: HostApi = {
  invokeSync: () => ({}),
  invoke: () => Promise.resolve({}),
};

function counterInvocation(mode: number): ToolInvocation {
  return {
    toolName: "counter",
    invocationId: "inv",
    code: CODE,
    input: { mode },
    host: noHost,
    timeoutMs: 30_000,
    fuel: DEFAULT_FUEL,
    memoryLimitBytes: 16 * 1024 * 1024,
  };
}

function output(outcome: ToolOutcome): unknown {
  if (outcome.status !== "success") throw outcome.error;
  return outcome.output;
}

const FRESH = { r: 10011, notes: [1], calls: 1 };

describe("exportState", () => {
  it("exports the internal memory and mutable global, and nothing changes otherwise", () => {
    const state = exportState(CORE);
    expect(state?.names).toEqual(["reach_state_memory_0", "reach_state_global_0"]);
    const exports = WebAssembly.Module.exports(new WebAssembly.Module(state!.bytes as Uint8Array<ArrayBuffer>));
    expect(exports.map((e) => `${e.name}:${e.kind}`)).toEqual(["bump:function", "reach_state_memory_0:memory", "reach_state_global_0:global"]);
  });

  it("gives up on modules whose state exports cannot capture (start function, passive data)", () => {
    // (Out of section order, which only the compiler would mind: exportState gives up as soon as it sees them.)
    expect(exportState(new Uint8Array([...CORE, ...section(8, [0x01])]))).toBeNull();
    const passive = new Uint8Array([...CORE, ...section(11, [0x01, 0x01, 0x01, 0x2a])]);
    expect(exportState(passive)).toBeNull();
  });
});

describe("ComponentRunner instance reuse (core level)", () => {
  it("reuses the core instance and resets its internal global and memory before each invocation", async () => {
    const runner = new ComponentRunner({ components: [COUNTER], meterFuel: false });
    handed.length = 0;
    for (let i = 0; i < 4; i++) expect(output(await runner.run(counterInvocation(0)))).toEqual(FRESH);
    // One instance served all four, so the equalities above are due to the reset, not to fresh instances.
    expect(new Set(handed).size).toBe(1);
    // Between invocations the instance is detached from the finished glue: a call into it changes its state
    // (g and mem[0]) and then fails at the import …
    const bump = handed[0]!.exports["bump"] as (mode: number) => number;
    expect(() => bump(0)).toThrow(/no invocation was running/);
    expect(() => bump(0)).toThrow(/no invocation was running/);
    // … and the next invocation still starts from the initial state, on the same instance.
    expect(output(await runner.run(counterInvocation(0)))).toEqual(FRESH);
    expect(new Set(handed).size).toBe(1);
  });

  it("drops an instance whose memory grew, and one that trapped", async () => {
    const runner = new ComponentRunner({ components: [COUNTER], meterFuel: false });
    handed.length = 0;
    expect(output(await runner.run(counterInvocation(0)))).toEqual(FRESH);
    expect(output(await runner.run(counterInvocation(1)))).toEqual({ ...FRESH, r: 10012 }); // grew: 2 pages
    expect(output(await runner.run(counterInvocation(0)))).toEqual(FRESH); // a fresh instance, 1 page again
    const trapped = await runner.run(counterInvocation(2));
    expect(trapped.status === "error" && trapped.error.code).toBe("EXEC_TOOL_FAILED");
    expect(output(await runner.run(counterInvocation(0)))).toEqual(FRESH);
    expect(output(await runner.run(counterInvocation(0)))).toEqual(FRESH);
    // Instance A served runs 1-2 (dropped: grew), B runs 3-4 (dropped: trapped), C runs 5-6.
    expect(handed.map((h) => handed.indexOf(h))).toEqual([0, 0, 2, 2, 4, 4]);
  });

  it("without reuse, instantiates every time (and the same results)", async () => {
    const runner = new ComponentRunner({ components: [COUNTER], meterFuel: false, reuseInstances: false });
    handed.length = 0;
    for (let i = 0; i < 3; i++) expect(output(await runner.run(counterInvocation(0)))).toEqual(FRESH);
    expect(new Set(handed).size).toBe(3);
  });
});

// ---- the real component ----

const COMPONENT = new Uint8Array(readFileSync(new URL("../../../wasm-tools/component/build/tool.component.wasm", import.meta.url)));

function recordingHost(seed: string) {
  const calls: string[] = [];
  let ms = 1_767_225_600_000;
  const random = deriveStream(seed, "reuse-test");
  const invokeSync = (op: HostOp, request: JsonObject): JsonObject => {
    let response: JsonObject = {};
    if (op === "clock.now") response = { ms, iso: formatIsoMillis(ms++) };
    else if (op === "random.bytes") response = { data: bytesToBase64(random.bytes(request["n"] as number)) };
    calls.push(`${op} ${JSON.stringify(request)} ${JSON.stringify(response)}`);
    return response;
  };
  const host: HostApi = { invokeSync, invoke: (op, request) => Promise.resolve(invokeSync(op, request)) };
  return { host, calls };
}

async function textStats(runner: ComponentRunner, input: unknown, seed: string) {
  const { host, calls } = recordingHost(seed);
  const outcome = await runner.run({
    toolName: "text-stats",
    invocationId: "inv",
    code: COMPONENT,
    input: input as ToolInvocation["input"],
    host,
    timeoutMs: 30_000,
    fuel: DEFAULT_FUEL,
    memoryLimitBytes: 64 * 1024 * 1024,
  });
  const result = outcome.status === "success" ? JSON.stringify(outcome.output) : `${outcome.error.code} ${outcome.error.message}`;
  return { result, log: outcome.log, calls };
}

describe("ComponentRunner instance reuse (componentize-js component)", () => {
  it("gives what fresh instances give, call for call, across successes, errors and traps", async () => {
    const reused = new ComponentRunner({ components: [TEXT_STATS], meterFuel: false });
    const fresh = new ComponentRunner({ components: [TEXT_STATS], meterFuel: false, reuseInstances: false });
    const inputs: [unknown, string][] = [
      [{ text: "the cat and the hat\nthe end", top: 2 }, "1"],
      [{ text: "a b b c c c", top: 3 }, "2"], // Math.random is seeded again (a wasi:random read on the tape)
      [{ text: "x", mode: "fail" }, "3"], // err(...): a clean return, the instance is kept
      [{ text: "Straße straße", top: 1 }, "4"],
      [{ text: "", mode: "grow" }, "5"], // out of memory: dropped
      [{ text: "the cat and the hat\nthe end", top: 2 }, "1"],
      [{ text: "the cat and the hat\nthe end", top: 2 }, "1"],
    ];
    const first: string[] = [];
    for (const [input, seed] of inputs) {
      const a = await textStats(reused, input, seed);
      const b = await textStats(fresh, input, seed);
      expect(a).toEqual(b);
      first.push(a.result);
    }
    expect(first[5]).toBe(first[0]);
    expect(first[6]).toBe(first[0]);
    expect(first[0]).toContain('"words":7');
  }, 60_000);
});
