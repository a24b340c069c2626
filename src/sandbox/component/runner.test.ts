import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bytesToBase64 } from "../../canonical/hex.ts";
import { sha256Hex } from "../../canonical/sha256.ts";
import { formatIsoMillis } from "../../determinism/clock.ts";
import { deriveStream } from "../../determinism/prng.ts";
import { ReachError } from "../../protocol/errors.ts";
import type { HostApi, HostOp, ToolInvocation, ToolOutcome } from "../types.ts";
import type { JsonObject } from "../../protocol/json.ts";
import { DEFAULT_FUEL } from "../types.ts";
import { TEXT_STATS, TEXT_STATS_CODE, TEXT_STATS_GLUE } from "./_test-components.ts";
import { parseGlueDocument } from "./glue.ts";
import { ComponentRunner } from "./runner.ts";
import { HOST_INTERFACE } from "./transpiled.ts";
import type { TranspiledComponent } from "./transpiled.ts";
import { WASI_P2_INTERFACES } from "./wasi-p2.ts";

const buildDir = new URL("../../../wasm-tools/component/build/", import.meta.url);
const COMPONENT = TEXT_STATS_CODE;
const GLUE = parseGlueDocument(TEXT_STATS_GLUE).source;
/** The glue without its full-line comments (which talk about "import (host ...)"). */
const GLUE_CODE = GLUE.replace(/^\s*\/\/.*$/gm, "");
const EPOCH = 1_767_225_600_000; // 2026-01-01T00:00:00.000Z

/** A deterministic fake host: virtual clock (+1 ms per read), seeded random stream, every call recorded. */
function fakeHost(seed = "7", deny: Partial<Record<HostOp, ReachError>> = {}) {
  const calls: [string, string, string][] = [];
  let ms = EPOCH;
  const random = deriveStream(seed, "component-test");
  const invokeSync = (op: HostOp, request: JsonObject): JsonObject => {
    const denied = deny[op];
    if (denied !== undefined) {
      calls.push([op, JSON.stringify(request), "denied"]);
      throw denied;
    }
    let response: JsonObject;
    if (op === "clock.now") {
      response = { ms, iso: formatIsoMillis(ms) };
      ms += 1;
    } else if (op === "random.bytes") {
      response = { data: bytesToBase64(random.bytes(request["n"] as number)) };
    } else if (op === "log") {
      response = {};
    } else {
      throw new ReachError("POLICY_VIOLATION", `op ${op} not allowed in this test`, {
        details: { violationType: "PERMISSION_DENIED", attemptedCapability: op },
      });
    }
    calls.push([op, JSON.stringify(request), JSON.stringify(response)]);
    return response;
  };
  const host: HostApi = { invokeSync, invoke: (op, request) => Promise.resolve(invokeSync(op, request)) };
  return { host, calls };
}

function invocation(host: HostApi, input: unknown, extra: Partial<ToolInvocation> = {}): ToolInvocation {
  return {
    toolName: "text-stats",
    invocationId: "inv-1",
    code: COMPONENT,
    input: input as ToolInvocation["input"],
    host,
    timeoutMs: 30_000,
    fuel: DEFAULT_FUEL,
    memoryLimitBytes: 256 * 1024 * 1024,
    ...extra,
  };
}

const runner = new ComponentRunner({ components: [TEXT_STATS], meterFuel: false });
const INPUT = { text: "the cat and the hat\nthe end", top: 2 };

function expectError(outcome: ToolOutcome): ReachError {
  if (outcome.status !== "error") throw new Error(`expected an error, got ${JSON.stringify(outcome)}`);
  return outcome.error;
}

describe("committed component", () => {
  it("matches build/SHA256SUMS and the glue it was transpiled from", () => {
    const line = readFileSync(new URL("SHA256SUMS", buildDir), "utf8").trim();
    const digest = sha256Hex(COMPONENT);
    expect(line).toBe(`${digest}  tool.component.wasm`);
    expect(TEXT_STATS.componentSha256).toBe(digest);
  });

  it("glue imports nothing: no preview2-shim, no node: modules, no environment reads", () => {
    expect(GLUE).not.toMatch(/preview2-shim/);
    expect(GLUE_CODE).not.toMatch(/^\s*import\s/m); // no static imports at all
    expect(GLUE_CODE).not.toMatch(/\bimport\s*\(/); // no dynamic imports
    expect(GLUE_CODE).not.toMatch(/\brequire\s*\(/);
    expect(GLUE).not.toMatch(/node:/);
    expect(GLUE_CODE).not.toMatch(/\bprocess\b/);
    expect(GLUE_CODE).not.toMatch(/\bDeno\b/);
  });

  it("declares exactly the imports the glue looks up, all of which we supply", () => {
    const looked = [...new Set([...GLUE.matchAll(/= imports\['([^']+)'\];/g)].map((m) => m[1]!))].sort();
    expect([...TEXT_STATS.importNames]).toEqual(looked);
    expect(looked).toContain(HOST_INTERFACE);
    const supplied = new Set<string>([HOST_INTERFACE, ...WASI_P2_INTERFACES]);
    expect(looked.filter((n) => !supplied.has(n))).toEqual([]);
  });
});

describe("ComponentRunner", () => {
  it("runs the example tool with the virtual clock and random stream", async () => {
    const { host, calls } = fakeHost();
    const outcome = await runner.run(invocation(host, INPUT));
    if (outcome.status !== "success") throw outcome.error;
    const out = outcome.output as Record<string, unknown>;
    expect(out).toMatchObject({
      chars: 27,
      words: 7,
      lines: 2,
      unique: 5,
      top: [
        { word: "the", count: 3 },
        { word: "and", count: 1 },
      ],
    });
    // Every clock and random value the guest saw came from the host (recorded), none from the real world.
    const clockReads = calls.filter(([op]) => op === "clock.now").map(([, , res]) => JSON.parse(res) as { ms: number; iso: string });
    const randomReads = calls.filter(([op]) => op === "random.bytes");
    expect(clockReads.map((c) => c.iso)).toContain(out["at"]);
    const sample = out["sample"] as { dateNow: number; random: number };
    expect(clockReads.map((c) => c.ms)).toContain(sample.dateNow); // Date.now() = wasi:clocks/wall-clock = host clock
    expect(sample.dateNow).toBeGreaterThanOrEqual(EPOCH);
    expect(sample.dateNow).toBeLessThan(EPOCH + 100);
    expect(randomReads.length).toBeGreaterThanOrEqual(2); // Math.random seed (wasi:random) + the tool's nonce
    expect(out["nonce"]).toMatch(/^[0-9a-f]{8}$/);
    expect(calls.some(([op, req]) => op === "log" && req.includes("text-stats: 7 words, 5 unique"))).toBe(true);
    expect(outcome.log).toBe("text-stats: top word the\n"); // console.log via wasi:cli/stdout, captured
    expect(outcome.fuelUsed).toBeLessThan(100_000n); // unmetered: only the flat charges of its host and WASI calls
  });

  it("gives byte-identical output, log and host calls twice", async () => {
    const a = fakeHost();
    const b = fakeHost();
    const first = await runner.run(invocation(a.host, INPUT));
    const second = await runner.run(invocation(b.host, INPUT));
    expect(first.status).toBe("success");
    expect(JSON.stringify(second.status === "success" && second.output)).toBe(
      JSON.stringify(first.status === "success" && first.output),
    );
    expect(second.log).toBe(first.log);
    expect(b.calls).toEqual(a.calls);
    expect(a.calls.length).toBeGreaterThan(0);
  });

  it("sees another seed's randomness (nothing is baked into the component)", async () => {
    const a = await runner.run(invocation(fakeHost("1").host, INPUT));
    const b = await runner.run(invocation(fakeHost("2").host, INPUT));
    if (a.status !== "success" || b.status !== "success") throw new Error("expected success");
    const [oa, ob] = [a.output as Record<string, unknown>, b.output as Record<string, unknown>];
    expect(oa["nonce"]).not.toBe(ob["nonce"]);
    expect((oa["sample"] as { random: number }).random).not.toBe((ob["sample"] as { random: number }).random);
  });

  it("reports err(...) as EXEC_TOOL_FAILED with the tool's message", async () => {
    const err = expectError(await runner.run(invocation(fakeHost().host, { text: "x", mode: "fail" })));
    expect(err.code).toBe("EXEC_TOOL_FAILED");
    expect(err.details["toolError"]).toEqual({ message: "asked to fail: x" });
    const bad = expectError(await runner.run(invocation(fakeHost().host, { text: 5 })));
    expect(bad.code).toBe("EXEC_TOOL_FAILED");
    // A guest claiming "out of memory" without filling its memory is still just a failure.
    const fake = expectError(await runner.run(invocation(fakeHost().host, { text: "out of memory", mode: "fail" })));
    expect(fake.code).toBe("EXEC_TOOL_FAILED");
  });

  it("halts on a policy violation from the host, even though the guest could catch it", async () => {
    const denial = new ReachError("POLICY_VIOLATION", "no randomness for you", {
      details: { violationType: "PERMISSION_DENIED", attemptedCapability: "random.bytes" },
    });
    const { host, calls } = fakeHost("7", { "random.bytes": denial });
    const err = expectError(await runner.run(invocation(host, INPUT)));
    expect(err).toBe(denial);
    expect(calls.filter(([, , res]) => res === "denied")).toHaveLength(1); // stopped at the first denial
  });

  it("hands other host errors back to the guest as err({code, message})", async () => {
    const unavailable = new ReachError("EXEC_RESOURCE_UNAVAILABLE", "log sink full");
    const err = expectError(await runner.run(invocation(fakeHost("7", { log: unavailable }).host, INPUT)));
    // The example tool does not catch it, so its invoke fails with the host's error as the message.
    expect(err.code).toBe("EXEC_TOOL_FAILED");
    expect(err.message).toContain("log sink full");
  });

  it("reports a component whose glue cannot be made as the invocation's error", async () => {
    const notComponent = new TextEncoder().encode("not a component");
    const err = expectError(await runner.run(invocation(fakeHost().host, INPUT, { code: notComponent })));
    expect(err.code).toBe("PACK_MALFORMED");
    expect(err.message).toContain("not a WebAssembly component");
  });

  it("refuses glue that belongs to another component", async () => {
    const other = COMPONENT.slice();
    other[other.length - 1] = other[other.length - 1]! ^ 1;
    const wrong = new ComponentRunner({ meterFuel: false, load: () => Promise.resolve(TEXT_STATS) });
    const err = expectError(await wrong.run(invocation(fakeHost().host, INPUT, { code: other })));
    expect(err.code).toBe("EXEC_RESOURCE_UNAVAILABLE");
    expect(err.details["componentSha256"]).toBe(sha256Hex(other));
  });

  it("fails loudly, before running anything, when an import is not supplied", async () => {
    const needy: TranspiledComponent = { ...TEXT_STATS, importNames: [...TEXT_STATS.importNames, "wasi:sockets/tcp"] };
    const { host, calls } = fakeHost();
    const err = expectError(await new ComponentRunner({ components: [needy], meterFuel: false }).run(invocation(host, INPUT)));
    expect(err.code).toBe("EXEC_SANDBOX_VIOLATION");
    expect(err.details["missingImports"]).toEqual(["wasi:sockets/tcp"]);
    expect(calls).toEqual([]);
  });

  it("supplies every member the glue reads (a strict import object instantiates)", async () => {
    const read: string[] = [];
    const strict: TranspiledComponent = {
      ...TEXT_STATS,
      instantiate: (getCoreModule, imports) => {
        const guarded = Object.fromEntries(
          Object.entries(imports).map(([name, iface]) => [
            name,
            new Proxy(iface, {
              get(target, key) {
                if (typeof key === "string" && !(key in target)) throw new Error(`glue read missing ${name}#${key}`);
                if (typeof key === "string") read.push(`${name}#${key}`);
                return Reflect.get(target, key);
              },
            }),
          ]),
        );
        return TEXT_STATS.instantiate(getCoreModule, guarded);
      },
    };
    const outcome = await new ComponentRunner({ components: [strict], meterFuel: false }).run(invocation(fakeHost().host, INPUT));
    expect(outcome.status).toBe("success");
    expect(read).toContain("reach:tool/host#call");
    expect(read).toContain("wasi:random/random#getRandomU64");
    expect(read).toContain("wasi:filesystem/preopens#getDirectories");
  });

  it("caps the component's memory: an allocation bomb ends with an error and the next run works", async () => {
    const err = expectError(
      await runner.run(invocation(fakeHost().host, { text: "", mode: "grow" }, { memoryLimitBytes: 32 * 1024 * 1024 })),
    );
    expect(err.code).toBe("EXEC_RESOURCE_EXHAUSTED");
    expect(err.details["reason"]).toBe("memory");
    expect(err.details["memoryBytes"]).toBeLessThanOrEqual(32 * 1024 * 1024);
    const again = await runner.run(invocation(fakeHost().host, INPUT));
    expect(again.status).toBe("success");
  });

  it("refuses a memory limit below the component's initial memory", async () => {
    const err = expectError(await runner.run(invocation(fakeHost().host, INPUT, { memoryLimitBytes: 4 * 1024 * 1024 })));
    expect(err.code).toBe("EXEC_RESOURCE_EXHAUSTED");
    expect(err.details["reason"]).toBe("memory");
  });
});
