import binaryen from "binaryen";
import { beforeAll, describe, expect, it } from "vitest";
import { ReachError } from "../../protocol/errors.ts";
import {
  clearMeteredModuleCache,
  FUEL_EXPORT,
  fuelError,
  fuelUsed,
  getMeteredModule,
  instrumentFuel,
  isFuelExhausted,
  loadFuelInstrumenter,
  METERED_CACHE_SIZE,
  meteredModuleCacheSize,
  noRefillImports,
  REFILL_FIELD,
  REFILL_MODULE,
  remainingFuel,
  setFuel,
} from "./mod.ts";

const b = binaryen;
const { i32, i64, none } = b;
const FEATURES = b.Features.MutableGlobals | b.Features.SignExt | b.Features.BulkMemory | b.Features.ReferenceTypes;

/**
 * Test module "compute", built with binaryen's builder API:
 * - `spin()`: `loop { count += 1; br loop }` — never ends; `count` is an exported mutable i32 global;
 * - `sum(n: i32) -> i64`: 1 + 2 + … + n with one loop iteration per term;
 * - `rec(n: i32) -> i32`: n + 1 nested calls, no loop;
 * - `boom()`: `unreachable`; `div(a, b) -> i32`: `i32.div_s`.
 * `salt` (an exported i32 constant) makes distinct modules for the cache tests.
 */
function computeModule(salt = 0): Uint8Array<ArrayBuffer> {
  const m = new b.Module();
  m.setFeatures(FEATURES);
  try {
    m.addGlobal("count", i32, true, m.i32.const(0));
    m.addGlobalExport("count", "count");
    m.addGlobal("salt", i32, false, m.i32.const(salt));
    m.addGlobalExport("salt", "salt");
    m.addFunction(
      "spin",
      none,
      none,
      [],
      m.loop("l", m.block(null, [m.global.set("count", m.i32.add(m.global.get("count", i32), m.i32.const(1))), m.br("l")])),
    );
    // locals: 0 = n, 1 = i, 2 = acc
    m.addFunction(
      "sum",
      i32,
      i64,
      [i32, i64],
      m.block(
        null,
        [
          m.local.set(1, m.i32.const(1)),
          m.local.set(2, m.i64.const(0n)),
          m.loop(
            "l",
            m.block(null, [
              m.local.set(2, m.i64.add(m.local.get(2, i64), m.i64.extend_u(m.local.get(1, i32)))),
              m.local.set(1, m.i32.add(m.local.get(1, i32), m.i32.const(1))),
              m.br("l", m.i32.le_s(m.local.get(1, i32), m.local.get(0, i32))),
            ]),
          ),
          m.local.get(2, i64),
        ],
        i64,
      ),
    );
    m.addFunction(
      "rec",
      i32,
      i32,
      [],
      m.if(
        m.i32.eqz(m.local.get(0, i32)),
        m.i32.const(0),
        m.i32.add(m.i32.const(1), m.call("rec", [m.i32.sub(m.local.get(0, i32), m.i32.const(1))], i32)),
      ),
    );
    // nest(n, k): for i in 1..n { for j in 1..k {} } inside an if, so loops nested in other constructs are reached.
    // locals: 0 = n, 1 = k, 2 = i, 3 = j
    const countUp = (label: string, local: number, limit: number, inner: number[]) =>
      m.block(null, [
        m.local.set(local, m.i32.const(0)),
        m.loop(
          label,
          m.block(null, [
            ...inner,
            m.local.set(local, m.i32.add(m.local.get(local, i32), m.i32.const(1))),
            m.br(label, m.i32.lt_s(m.local.get(local, i32), m.local.get(limit, i32))),
          ]),
        ),
      ]);
    m.addFunction(
      "nest",
      b.createType([i32, i32]),
      none,
      [i32, i32],
      m.if(m.i32.gt_s(m.local.get(0, i32), m.i32.const(0)), countUp("outer", 2, 0, [countUp("inner", 3, 1, [])])),
    );
    m.addFunction("boom", none, none, [], m.unreachable());
    m.addFunction("div", b.createType([i32, i32]), i32, [], m.i32.div_s(m.local.get(0, i32), m.local.get(1, i32)));
    for (const name of ["spin", "sum", "rec", "nest", "boom", "div"]) m.addFunctionExport(name, name);
    if (!m.validate()) throw new Error("test module 'compute' is invalid");
    return m.emitBinary() as Uint8Array<ArrayBuffer>;
  } finally {
    m.dispose();
  }
}

/**
 * Test module "system": an imported function, an exported memory with a data segment, a table with
 * `call_indirect`, and a start function that calls the import and writes memory.
 */
function systemModule(startLoops = false): Uint8Array<ArrayBuffer> {
  const m = new b.Module();
  m.setFeatures(FEATURES);
  try {
    m.addFunctionImport("log", "env", "log", i32, none);
    m.setMemory(1, 2, "mem", [{ data: new TextEncoder().encode("hi"), offset: m.i32.const(0), passive: false }]);
    m.addFunction("dbl", i32, i32, [], m.i32.mul(m.local.get(0, i32), m.i32.const(2)));
    m.addFunction("inc", i32, i32, [], m.i32.add(m.local.get(0, i32), m.i32.const(1)));
    m.addTable("t", 2, 2);
    m.addActiveElementSegment("t", "e0", ["dbl", "inc"], m.i32.const(0));
    m.addFunction(
      "apply",
      b.createType([i32, i32]),
      i32,
      [],
      m.call_indirect("t", m.local.get(0, i32), [m.local.get(1, i32)], i32, i32),
    );
    m.addFunctionExport("apply", "apply");
    const init = m.block(null, [
      m.call("log", [m.i32.const(42)], none),
      m.i32.store(8, 4, m.i32.const(0), m.i32.const(7)),
      ...(startLoops ? [m.loop("forever", m.br("forever"))] : []),
    ]);
    const start = m.addFunction("init", none, none, [], init);
    m.setStart(start);
    if (!m.validate()) throw new Error("test module 'system' is invalid");
    return m.emitBinary() as Uint8Array<ArrayBuffer>;
  } finally {
    m.dispose();
  }
}

type Compute = {
  spin(): void;
  sum(n: number): bigint;
  nest(n: number, k: number): void;
  rec(n: number): number;
  boom(): void;
  div(a: number, b: number): number;
  count: WebAssembly.Global;
};

async function instantiate(bytes: Uint8Array<ArrayBuffer>, imports: WebAssembly.Imports = {}): Promise<WebAssembly.Instance> {
  const module = await WebAssembly.compile(bytes);
  const metered = WebAssembly.Module.imports(module).some((i) => i.module === REFILL_MODULE);
  return new WebAssembly.Instance(module, metered ? { ...imports, ...noRefillImports() } : imports);
}

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected a throw");
}

async function rejected(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

let computeBytes: Uint8Array<ArrayBuffer>;
let metered: Uint8Array<ArrayBuffer>;

beforeAll(async () => {
  await loadFuelInstrumenter();
  computeBytes = computeModule();
  metered = await instrumentFuel(computeBytes);
});

describe("(a) an endless loop", () => {
  it("traps as fuel exhaustion after exactly the same number of units, every run and every instance", async () => {
    const counts: number[] = [];
    const remaining: bigint[] = [];
    const instance = await instantiate(metered);
    for (let run = 0; run < 3; run++) {
      // fresh instances from separately compiled modules, and one instance reused for the baseline check
      const inst = run === 0 ? instance : await instantiate(metered);
      const exports = inst.exports as unknown as Compute;
      setFuel(inst, 1000n);
      const err = caught(() => exports.spin());
      expect(err).toBeInstanceOf(WebAssembly.RuntimeError);
      expect(isFuelExhausted(err, inst)).toBe(true);
      counts.push(exports.count.value as number);
      remaining.push(remainingFuel(inst));
      expect(fuelUsed(inst, 1000n)).toBe(1000n);
    }
    // 1 unit for the entry of spin, then 1 per iteration: the 1000th iteration traps before its increment.
    expect(counts).toEqual([999, 999, 999]);
    expect(remaining).toEqual([-1n, -1n, -1n]);
  });

  it("scales with the budget", async () => {
    const inst = await instantiate(metered);
    setFuel(inst, 5n);
    expect(() => (inst.exports as unknown as Compute).spin()).toThrow(WebAssembly.RuntimeError);
    expect((inst.exports as unknown as Compute).count.value).toBe(4);
  });
});

describe("(b) a bounded loop", () => {
  it("gives the uninstrumented result and uses 1 + n units for sum(1..n)", async () => {
    const plain = (await instantiate(computeBytes)).exports as unknown as Compute;
    for (const n of [1, 2, 10, 100, 12345]) {
      const inst = await instantiate(metered);
      setFuel(inst, 1_000_000n);
      const result = (inst.exports as unknown as Compute).sum(n);
      expect(result).toBe(plain.sum(n));
      expect(result).toBe(BigInt((n * (n + 1)) / 2));
      expect(fuelUsed(inst, 1_000_000n)).toBe(BigInt(1 + n));
      expect(remainingFuel(inst)).toBe(1_000_000n - BigInt(1 + n));
    }
  });

  it("completes with exactly enough fuel and traps with one unit less", async () => {
    const inst = await instantiate(metered);
    setFuel(inst, 101n);
    expect((inst.exports as unknown as Compute).sum(100)).toBe(5050n);
    expect(remainingFuel(inst)).toBe(0n);
    const short = await instantiate(metered);
    setFuel(short, 100n);
    const err = caught(() => (short.exports as unknown as Compute).sum(100));
    expect(isFuelExhausted(err, short)).toBe(true);
  });
});

describe("nested loops", () => {
  it("meter every iteration of every loop: 1 + n + n·k units", async () => {
    for (const [n, k] of [[1, 1], [3, 7], [10, 100]] as const) {
      const inst = await instantiate(metered);
      setFuel(inst, 100_000n);
      (inst.exports as unknown as Compute).nest(n, k);
      expect(fuelUsed(inst, 100_000n)).toBe(BigInt(1 + n + n * k));
    }
  });
});

describe("(c) recursion without loops", () => {
  it("is metered per call", async () => {
    const inst = await instantiate(metered);
    const exports = inst.exports as unknown as Compute;
    setFuel(inst, 10_000n);
    expect(exports.rec(500)).toBe(500);
    expect(fuelUsed(inst, 10_000n)).toBe(501n);
    const deep = await instantiate(metered);
    setFuel(deep, 1000n);
    const err = caught(() => (deep.exports as unknown as Compute).rec(1_000_000));
    expect(err).toBeInstanceOf(WebAssembly.RuntimeError); // not a RangeError stack overflow
    expect(isFuelExhausted(err, deep)).toBe(true);
  });
});

describe("(d) ordinary traps", () => {
  it("are not reported as fuel exhaustion", async () => {
    const inst = await instantiate(metered);
    const exports = inst.exports as unknown as Compute;
    setFuel(inst, 1000n);
    const boom = caught(() => exports.boom());
    expect(boom).toBeInstanceOf(WebAssembly.RuntimeError);
    expect(isFuelExhausted(boom, inst)).toBe(false);
    const div = caught(() => exports.div(1, 0));
    expect(div).toBeInstanceOf(WebAssembly.RuntimeError);
    expect(isFuelExhausted(div, inst)).toBe(false);
    expect(remainingFuel(inst)).toBe(998n);
    expect(isFuelExhausted(new Error("unreachable"), inst)).toBe(false);
  });

  it("a non-trap error while the counter is negative is not the fuel trap either", async () => {
    const inst = await instantiate(metered);
    setFuel(inst, 0n);
    const err = caught(() => (inst.exports as unknown as Compute).boom());
    expect(isFuelExhausted(err, inst)).toBe(true); // the entry tick fires before boom's own unreachable
    expect(isFuelExhausted(new TypeError("x"), inst)).toBe(false);
  });
});

describe("(e) determinism and the cache", () => {
  it("instrumenting the same bytes twice gives the same bytes", async () => {
    const again = await instrumentFuel(computeBytes.slice());
    expect(again).toEqual(metered);
    expect(await instrumentFuel(computeModule())).toEqual(metered);
    expect(await instrumentFuel(computeModule(1))).not.toEqual(metered);
  });

  it("returns the same compiled module for the same bytes, a new one for other bytes", async () => {
    clearMeteredModuleCache();
    const first = await getMeteredModule(computeBytes);
    const second = await getMeteredModule(computeBytes.slice());
    expect(second.module).toBe(first.module);
    expect(first.digest).toMatch(/^[0-9a-f]{64}$/);
    const [c1, c2] = await Promise.all([getMeteredModule(computeModule(7)), getMeteredModule(computeModule(7))]);
    expect(c2.module).toBe(c1.module);
    const other = await getMeteredModule(computeModule(1));
    expect(other.module).not.toBe(first.module);
    expect(other.digest).not.toBe(first.digest);
    expect(WebAssembly.Module.exports(first.module).map((e) => e.name)).toContain(FUEL_EXPORT);
  });

  it("is a bounded LRU", async () => {
    clearMeteredModuleCache();
    const keep = await getMeteredModule(computeModule(1000));
    const evicted = await getMeteredModule(computeModule(1001));
    for (let i = 0; i < METERED_CACHE_SIZE - 1; i++) {
      await getMeteredModule(computeModule(i + 1));
      await getMeteredModule(computeModule(1000)); // keeps 1000 recently used
    }
    expect(meteredModuleCacheSize()).toBe(METERED_CACHE_SIZE);
    expect((await getMeteredModule(computeModule(1000))).module).toBe(keep.module);
    expect((await getMeteredModule(computeModule(1001))).module).not.toBe(evicted.module);
  });
});

describe("(f) refused input", () => {
  const cases: [string, Uint8Array, string][] = [
    ["empty_fail", new Uint8Array(0), "not-wasm"],
    ["text_fail", new TextEncoder().encode("(module)"), "not-wasm"],
    ["component_fail", new Uint8Array([0, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00]), "component"],
    ["truncated_fail", new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 5, 1, 0x60]), "invalid-wasm"],
  ];
  for (const [name, bytes, reason] of cases) {
    it(`${name}: PACK_MALFORMED (${reason})`, async () => {
      const err = await rejected(instrumentFuel(bytes));
      expect(err).toBeInstanceOf(ReachError);
      expect((err as ReachError).code).toBe("PACK_MALFORMED");
      expect((err as ReachError).details["reason"]).toBe(reason);
    });
  }

  it("already_instrumented_fail: a module that exports reach_fuel is refused", async () => {
    const err = await rejected(instrumentFuel(metered));
    expect((err as ReachError).code).toBe("PACK_MALFORMED");
    expect((err as ReachError).message).toContain("reach_fuel");
  });

  it("unsupported_instruction_fail: table.fill cannot be walked and is refused, not left unmetered", async () => {
    // (module (table 1 funcref) (func (table.fill 0 (i32.const 0) (ref.null func) (i32.const 1))))
    const bytes = new Uint8Array([
      0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0, 3, 2, 1, 0, 4, 4, 1, 0x70, 0, 1, 10, 13, 1, 11, 0, 0x41, 0,
      0xd0, 0x70, 0x41, 1, 0xfc, 17, 0, 0x0b,
    ]);
    expect(WebAssembly.validate(bytes)).toBe(true);
    const err = await rejected(instrumentFuel(bytes));
    expect((err as ReachError).code).toBe("PACK_MALFORMED");
    expect((err as ReachError).details["reason"]).toBe("unsupported-instruction");
  });

  it("bad arguments are TypeError / RangeError", async () => {
    await expect(instrumentFuel("x" as unknown as Uint8Array)).rejects.toThrow(TypeError);
    await expect(instrumentFuel(computeBytes, { initialFuel: -1n })).rejects.toThrow(RangeError);
    const inst = await instantiate(metered);
    expect(() => setFuel(inst, -1n)).toThrow(RangeError);
    expect(() => setFuel(inst, 5 as unknown as bigint)).toThrow(TypeError);
    const plain = await instantiate(computeBytes);
    expect(() => remainingFuel(plain)).toThrow(TypeError);
  });
});

describe("semantics are preserved", () => {
  it("imports, memory, data, tables and the start function behave as before", async () => {
    const bytes = systemModule();
    const out = await instrumentFuel(bytes, { initialFuel: 10n });
    const run = async (wasm: Uint8Array<ArrayBuffer>) => {
      const log: number[] = [];
      const inst = await instantiate(wasm, { env: { log: (x: number) => void log.push(x) } });
      const e = inst.exports as unknown as { apply(i: number, x: number): number; mem: WebAssembly.Memory };
      return { inst, log, apply: [e.apply(0, 5), e.apply(1, 5)], mem: [...new Uint8Array(e.mem.buffer, 0, 12)] };
    };
    const before = await run(bytes);
    const after = await run(out);
    expect(after.log).toEqual(before.log);
    expect(after.log).toEqual([42]);
    expect(after.apply).toEqual(before.apply);
    expect(after.apply).toEqual([10, 6]);
    expect(after.mem).toEqual(before.mem);
    const mod = (w: Uint8Array<ArrayBuffer>) => new WebAssembly.Module(w);
    expect(WebAssembly.Module.imports(mod(out))).toEqual([...WebAssembly.Module.imports(mod(bytes)), { module: REFILL_MODULE, name: REFILL_FIELD, kind: "function" }]);
    expect(WebAssembly.Module.exports(mod(out))).toEqual([
      ...WebAssembly.Module.exports(mod(bytes)),
      { name: FUEL_EXPORT, kind: "global" },
    ]);
    // The start function ran on the baked-in initial fuel: 1 entry (init) + 2 entries (apply, dbl/inc) × 2 calls.
    expect(remainingFuel(after.inst)).toBe(10n - 1n - 4n);
  });

  it("keeps a name section when there is one and adds none otherwise", async () => {
    const names = (w: Uint8Array<ArrayBuffer>) => WebAssembly.Module.customSections(new WebAssembly.Module(w), "name").length;
    const saved = b.getDebugInfo();
    b.setDebugInfo(true);
    let named: Uint8Array<ArrayBuffer>;
    try {
      named = computeModule();
    } finally {
      b.setDebugInfo(saved);
    }
    expect(names(named)).toBe(1);
    expect(names(await instrumentFuel(named))).toBe(1);
    expect(names(computeBytes)).toBe(0);
    expect(names(metered)).toBe(0);
    expect(b.getDebugInfo()).toBe(saved); // the instrumenter restores binaryen's global flag
  });

  it("a start function that never ends is stopped by the initial fuel", async () => {
    const out = await instrumentFuel(systemModule(true), { initialFuel: 50n });
    const err = await rejected(instantiate(out, { env: { log: () => {} } }));
    expect(err).toBeInstanceOf(WebAssembly.RuntimeError);
  });
});

describe("fuelError", () => {
  it("is EXEC_RESOURCE_EXHAUSTED with reason fuel and JSON-safe amounts", () => {
    const err = fuelError(1000n, { toolName: "spin" });
    expect(err.code).toBe("EXEC_RESOURCE_EXHAUSTED");
    expect(err.details).toEqual({ reason: "fuel", fuelLimit: 1000, fuelUsed: 1000, toolName: "spin" });
    expect(err.message).toContain('tool "spin" ran out of fuel after 1000 units');
    expect(fuelError(1n << 60n).details["fuelLimit"]).toBe("1152921504606846976");
    expect(() => fuelError(-1n)).toThrow(RangeError);
  });
});
