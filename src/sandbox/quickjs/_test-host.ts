/**
 * Test support (not exported from mod.ts): a stub `HostApi` with an in-memory file map, the invocation's virtual
 * clock and seeded random stream, a memory map, and a policy that denies paths under `secret/`.
 * @module
 */
import { base64ToBytes, bytesToBase64 } from "../../canonical/hex.ts";
import { deriveStream, VirtualClock } from "../../determinism/mod.ts";
import { policyViolation, ReachError } from "../../protocol/errors.ts";
import type { HostApi, HostOp, ToolInvocation } from "../types.ts";
import type { JsonObject, JsonValue } from "../../protocol/json.ts";
import { DEFAULT_FUEL } from "../types.ts";
import { FuelMeter } from "../fuel/mod.ts";
import { invocationStops } from "../stops.ts";

/** One recorded host call. */
export type Call = { op: HostOp; request: JsonObject };

/** A stub host and what it saw. */
export type TestHost = HostApi & { calls: Call[]; files: Map<string, Uint8Array>; memory: Map<string, JsonValue> };

/**
 * Make a stub host for one invocation.
 * @param seed the run's seed
 * @param invocationId the invocation's id (names its random stream)
 * @param overrides replace single ops (e.g. make one throw)
 * @returns the host
 */
export function testHost(
  seed = "7",
  invocationId = "inv-1",
  overrides: Partial<Record<HostOp, (request: JsonObject) => JsonObject | Promise<JsonObject>>> = {},
): TestHost {
  const clock = new VirtualClock("2026-01-01T00:00:00.000Z");
  const random = deriveStream(seed, `invocation:${invocationId}`);
  const files = new Map<string, Uint8Array>([["data/hello.txt", new TextEncoder().encode("héllo wörld\n")]]);
  const memory = new Map<string, JsonValue>();
  const calls: Call[] = [];
  const guard = (path: unknown): string => {
    if (typeof path !== "string") throw new ReachError("PROTO_INVALID_ARGUMENT", "path must be a string");
    if (path.startsWith("secret/")) throw policyViolation("RESOURCE_ACCESS", `fs:${path}`, `access to ${path} is denied`);
    return path;
  };
  const sync = (op: HostOp, req: JsonObject): JsonObject => {
    calls.push({ op, request: req });
    const o = overrides[op];
    if (o !== undefined) {
      const r = o(req);
      if (r instanceof Promise) throw new Error("async override used synchronously");
      return r;
    }
    switch (op) {
      case "fs.read": {
        const data = files.get(guard(req["path"]));
        if (data === undefined) throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", `no file ${String(req["path"])}`);
        return { data: bytesToBase64(data) };
      }
      case "fs.write": {
        const path = guard(req["path"]);
        const data = typeof req["text"] === "string" ? new TextEncoder().encode(req["text"]) : base64ToBytes(String(req["data"]));
        files.set(path, data);
        return { size: data.length };
      }
      case "memory.get": {
        const key = String(req["key"]);
        return memory.has(key) ? { found: true, value: memory.get(key) ?? null } : { found: false, value: null };
      }
      case "memory.set":
        memory.set(String(req["key"]), req["value"] ?? null);
        return {};
      case "log":
        return {};
      case "clock.now": {
        const ms = clock.read();
        return { ms, iso: clock.iso(ms) };
      }
      case "random.bytes":
        return { data: bytesToBase64(random.bytes(Number(req["n"]))) };
      case "http.fetch":
        throw new ReachError("EXEC_SANDBOX_VIOLATION", "http.fetch is asynchronous");
      default:
        throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", `${op} is not stubbed`);
    }
  };
  return {
    calls,
    files,
    memory,
    invokeSync: sync,
    invoke: async (op: HostOp, req: JsonObject): Promise<JsonObject> => {
      await Promise.resolve();
      if (op !== "http.fetch") return sync(op, req);
      calls.push({ op, request: req });
      const o = overrides[op];
      if (o !== undefined) return o(req);
      const url = String(req["url"]);
      if (!url.startsWith("https://api.example.com/")) throw policyViolation("PERMISSION_DENIED", `http:${url}`, `host not allowed: ${url}`);
      return { status: 200, url, headers: { "content-type": "application/json" }, data: bytesToBase64(new TextEncoder().encode(JSON.stringify({ got: url }))) };
    },
  };
}

/**
 * An invocation of `source` with the stub host and test-sized limits.
 * @param source the tool module's source
 * @param input the input
 * @param extra overrides
 * @returns the invocation
 */
export function invocation(source: string, input: JsonValue = null, extra: Partial<ToolInvocation> = {}): ToolInvocation {
  const inv: ToolInvocation = {
    toolName: "t",
    invocationId: "inv-1",
    code: new TextEncoder().encode(source),
    input,
    host: testHost(),
    timeoutMs: 2000,
    fuel: DEFAULT_FUEL,
    memoryLimitBytes: 32 * 1024 * 1024,
    ...extra,
  };
  if (extra.meter !== undefined) return inv;
  // As the executor does: the watchdog stops the tool at its timeout, at a refill or while it waits for the host.
  const stops = invocationStops({ limitMs: Math.max(1, inv.timeoutMs) });
  return { ...inv, host: haltOnStop(inv.host, stops.signal), meter: new FuelMeter({ budget: inv.fuel, ...stops.meter }) };
}

/**
 * A host whose asynchronous calls fail with the stop signal's halting error once it aborts (what the real host does
 * with its `signal`, `src/sandbox/host/host.ts`).
 * @param host the host
 * @param signal the invocation's stop signal (`invocationStops`)
 * @returns the wrapped host
 */
export function haltOnStop<H extends HostApi>(host: H, signal: AbortSignal): H {
  const stopped = new Promise<never>((_, reject) => {
    signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true });
  });
  stopped.catch(() => undefined);
  return Object.assign(Object.create(host) as H, {
    invokeSync: host.invokeSync,
    invoke: (op: HostOp, req: JsonObject) => Promise.race([host.invoke(op, req), stopped]),
  });
}
