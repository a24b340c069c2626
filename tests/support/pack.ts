/**
 * Test helpers: in-memory packs for engine tests (not part of the build).
 * @module
 */
import { wat } from "../../src/sandbox/wasi/_test-support.ts";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { readQuickJsEngineWasm } from "../../src/platform/quickjs-engine.ts";
import { readPythonWasm } from "../../src/platform/python-engine.ts";
import type { JsonValue } from "../../src/protocol/json.ts";
import { runPack } from "../../src/engine/coordinator.ts";
import { loadPack } from "../../src/engine/pack.ts";
import type { RunRecord, RunRequest } from "../../src/engine/types.ts";

const enc = new TextEncoder();

/**
 * A pack whose one JavaScript tool `t` counts to `turns` (computing for a while, host calls none), then answers
 * `{count}`: one step, a static plan.
 */
export function busyPack(turns: number): Map<string, Uint8Array> {
  const plan = { contract_version: "S2-B-05.v1", plan_id: "p", goal_id: "g", created_at: "1970-01-01T00:00:00.000Z", planner: "t", status: "APPROVED", risk: { level: 0 }, scope: { allowed: ["t"] }, steps: [{ id: "s", tool: "t", arguments: {}, return_spec: { type: "object" } }], success_criteria: [] };
  return new Map([
    ["reach.json", enc.encode(JSON.stringify({ specVersion: "1.0.0", id: "busy", version: "1.0.0", entrypoint: "plan.json", manifest: { manifestVersion: "1.0.0", capabilities: { tools: [{ name: "t" }] } }, tools: { t: { kind: "js", module: "tools/t.js" } } }))],
    ["plan.json", enc.encode(JSON.stringify(plan))],
    ["tools/t.js", enc.encode(`export default () => { let c = 0; for (let i = 0; i < ${turns}; i++) c = (c + i) % 1000003; return { count: c }; }\n`)],
  ]);
}

/** A pack's files from the repository's `packs/` folder. */
export function packFromDisk(name: string): Map<string, Uint8Array> {
  const base = new URL(`../../packs/${name}/`, import.meta.url).pathname;
  const out = new Map<string, Uint8Array>();
  const walk = (dir: string, rel: string): void => {
    for (const n of readdirSync(dir).sort()) {
      const p = join(dir, n);
      const r = rel === "" ? n : `${rel}/${n}`;
      if (statSync(p).isDirectory()) walk(p, r);
      else out.set(r, new Uint8Array(readFileSync(p)));
    }
  };
  walk(base, "");
  return out;
}

/** A JS-tools pack: `tools` maps tool name → module source; `plan` is the static plan or a planner source. */
export function jsPack(options: {
  tools: Record<string, string>;
  plan: object | string;
  manifest?: Record<string, unknown>;
  run?: Record<string, unknown>;
  toolDefs?: Record<string, Record<string, unknown>>;
}): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const tools: Record<string, unknown> = {};
  for (const [name, src] of Object.entries(options.tools)) {
    files.set(`tools/${name}.js`, enc.encode(src));
    tools[name] = { kind: "js", module: `tools/${name}.js`, ...(options.toolDefs?.[name] ?? {}) };
  }
  const entry = typeof options.plan === "string" ? "planner.js" : "plan.json";
  files.set(entry, enc.encode(typeof options.plan === "string" ? options.plan : JSON.stringify(options.plan)));
  const doc = {
    specVersion: "1.0.0",
    id: "test-pack",
    version: "1.0.0",
    manifest: { manifestVersion: "1.0.0", capabilities: { tools: Object.keys(options.tools).map((name) => ({ name })) }, ...(options.manifest ?? {}) },
    entrypoint: entry,
    tools,
    ...(options.run === undefined ? {} : { run: options.run }),
  };
  files.set("reach.json", enc.encode(JSON.stringify(doc)));
  return files;
}

/** A plan with the given steps (`{id, tool, arguments?, return_spec?}`). */
export function planOf(steps: { id: string; tool: string; arguments?: object; return_spec?: object }[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    contract_version: "S2-B-05.v1",
    plan_id: "p1",
    goal_id: "g1",
    created_at: "1970-01-01T00:00:00.000Z",
    planner: "test",
    status: "APPROVED",
    risk: { level: 0 },
    scope: { allowed: [...new Set(steps.map((s) => s.tool))] },
    steps: steps.map((s) => ({ arguments: {}, return_spec: { type: "object" }, ...s })),
    success_criteria: [],
    ...extra,
  };
}

/** Load and run pack files. */
export async function runFiles(files: Map<string, Uint8Array>, options: Partial<Omit<RunRequest, "loaded" | "env">> & { input?: JsonValue } = {}): Promise<RunRecord> {
  return runPack({ loaded: await loadPack(files), env: { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm }, ...options });
}

/** A js tool reporting every own name (depth first), its input's JSON text with -0 told apart, and the memory "seen". */
export const SEE_JS = `const names = (v) => v === null || typeof v !== "object" ? [] : Array.isArray(v) ? v.flatMap(names) : Object.getOwnPropertyNames(v).flatMap((k) => [k, ...names(v[k])]);
export default (input, reach) => ({ text: JSON.stringify(input, (k, v) => (Object.is(v, -0) ? "-0" : v)), names: names(input), memory: JSON.stringify(reach.memory.get("seen")) });\n`;
export const SEE_PY = `import json
def names(v):
    out = []
    todo = [v]
    while todo:
        v = todo.pop()
        if isinstance(v, dict):
            for k in v:
                out.append(k)
            todo.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            todo.extend(reversed(v))
    return out
def main(input, reach):
    return {"text": json.dumps(input), "names": names(input), "memory": json.dumps(reach.memory_get("seen"))}
`;

/**
 * A WASI command printing `{"fnv":N}`, the 32-bit FNV-1a of every byte it reads on stdin: a wasm tool that observes its
 * arguments' exact text (key order, number spelling), as a tool may.
 */
export const FNV_WAT = `(module
  (import "wasi_snapshot_preview1" "fd_read" (func $read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 64) "{\\"fnv\\":")
  (data (i32.const 80) "}")
  (func (export "_start")
    (local $h i32) (local $n i32) (local $i i32) (local $p i32)
    (local.set $h (i32.const 0x811c9dc5))
    (block $eof (loop $more
      (i32.store (i32.const 0) (i32.const 1024))
      (i32.store (i32.const 4) (i32.const 4096))
      (drop (call $read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
      (local.set $n (i32.load (i32.const 8)))
      (br_if $eof (i32.eqz (local.get $n)))
      (local.set $i (i32.const 0))
      (block $done (loop $byte
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $h (i32.mul (i32.xor (local.get $h) (i32.load8_u offset=1024 (local.get $i))) (i32.const 0x01000193)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $byte)))
      (br $more)))
    (local.set $p (i32.const 200))
    (loop $digit
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $h) (i32.const 10))))
      (local.set $h (i32.div_u (local.get $h) (i32.const 10)))
      (br_if $digit (i32.ne (local.get $h) (i32.const 0))))
    (i32.store (i32.const 16) (i32.const 64))
    (i32.store (i32.const 20) (i32.const 7))
    (i32.store (i32.const 24) (local.get $p))
    (i32.store (i32.const 28) (i32.sub (i32.const 200) (local.get $p)))
    (i32.store (i32.const 32) (i32.const 80))
    (i32.store (i32.const 36) (i32.const 1))
    (drop (call $write (i32.const 1) (i32.const 16) (i32.const 3) (i32.const 8)))))`;

/**
 * A pack whose every kind of tool reports exactly what it was handed (conformance/HASHING.md "What a tool sees"): the
 * input goes to memory, to a js tool (in its arguments and as its whole arguments), a python tool, a wasm tool
 * (`fnv`: the FNV-1a of its stdin's bytes, {@link FNV_WAT}), exec_python, and a js tool that takes two steps' outputs by
 * `$step`.
 */
export async function observerPack(): Promise<Map<string, Uint8Array>> {
  const plan = planOf([
    { id: "mem", tool: "write_memory", arguments: { key: "seen", value: { $input: "" } } },
    { id: "js", tool: "see", arguments: { x: { $input: "" }, literal: { zeta: 1, alpha: 2 } } },
    { id: "whole", tool: "see", arguments: { $input: "" } },
    { id: "py", tool: "seepy", arguments: { x: { $input: "" } } },
    { id: "wasm", tool: "fnv", arguments: { x: { $input: "" } } },
    { id: "exec", tool: "exec_python", arguments: { code: "import json\nresult = json.dumps(input)", input: { $input: "" } } },
    { id: "ref", tool: "see", arguments: { prev: { $step: "js" }, py: { $step: "py", pointer: "/names" } } },
  ]);
  (plan["scope"] as { allowed: string[] }).allowed.push("seepy", "fnv", "write_memory", "exec_python");
  const files = jsPack({ tools: { see: SEE_JS }, plan, manifest: { policies: { maxToolCalls: 20 } } });
  const doc = JSON.parse(new TextDecoder().decode(files.get("reach.json")!));
  doc.tools.seepy = { kind: "python", module: "tools/seepy.py" };
  doc.tools.fnv = { kind: "wasm", module: "tools/fnv.wasm" };
  doc.manifest.capabilities.tools.push({ name: "seepy" }, { name: "fnv" });
  files.set("reach.json", enc.encode(JSON.stringify(doc)));
  files.set("tools/seepy.py", enc.encode(SEE_PY));
  files.set("tools/fnv.wasm", await wat(FNV_WAT));
  return files;
}
