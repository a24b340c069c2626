import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../canonical/sha256.ts";
import { FUEL_EXPORT, instrumentFuel, loadFuelInstrumenter, REFILL_FIELD, REFILL_MODULE } from "./mod.ts";

// QuickJS's engine (quickjs-emscripten's release-sync variant), the largest module fuel metering must handle.
const QUICKJS_WASM = fileURLToPath(
  new URL("../../../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm", import.meta.url),
);

function sorted<T>(items: T[]): string[] {
  return items.map((item) => JSON.stringify(item)).sort();
}

describe("(g) instrumenting QuickJS's engine", () => {
  beforeAll(async () => {
    await loadFuelInstrumenter();
  }, 60_000);

  it("gives a module that compiles, keeps the interface, and is byte-deterministic", async () => {
    const wasm = new Uint8Array(readFileSync(QUICKJS_WASM));
    const t0 = performance.now();
    const out = await instrumentFuel(wasm);
    const ms = performance.now() - t0;
    const again = await instrumentFuel(wasm.slice());
    expect(sha256Hex(again)).toBe(sha256Hex(out));

    const original = new WebAssembly.Module(wasm);
    const t1 = performance.now();
    const metered = new WebAssembly.Module(out);
    const compileMs = performance.now() - t1;
    // binaryen writes the memory import first; the host must supply the same imports plus the refill function.
    expect(sorted(WebAssembly.Module.imports(metered))).toEqual(sorted([...WebAssembly.Module.imports(original), { module: REFILL_MODULE, name: REFILL_FIELD, kind: "function" }]));
    expect(sorted(WebAssembly.Module.exports(metered))).toEqual(
      sorted([...WebAssembly.Module.exports(original), { name: FUEL_EXPORT, kind: "global" }]),
    );
    const growth = out.length / wasm.length - 1;
    expect(growth).toBeGreaterThan(0.01); // every function and loop got a check
    expect(growth).toBeLessThan(0.2);
    console.log(
      `QuickJS fuel instrumentation: ${ms.toFixed(0)} ms, ${wasm.length} → ${out.length} bytes ` +
        `(+${(growth * 100).toFixed(1)}%), compile ${compileMs.toFixed(0)} ms, sha256 ${sha256Hex(out)}`,
    );
  }, 60_000);
});
