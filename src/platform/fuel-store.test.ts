// The fuel cache decides what tools run, so it is attacked here as an attacker with write access to it would.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sha256 } from "../canonical/sha256.ts";
import { clearMeteredModuleCache, getMeteredModule } from "../sandbox/fuel/mod.ts";
import type { MeteredModuleStore } from "../sandbox/fuel/mod.ts";
import { wat } from "../sandbox/wasi/_test-support.ts";
import { diskFuelStore } from "./fuel-store.ts";

let base: string;
let dir: string;
const warnings: string[] = [];

// The store an environment hands the engine (`EngineEnvironment.meteredModules`), as each call below is given it.
let current: MeteredModuleStore | null = null;
const setMeteredModuleStore = (s: MeteredModuleStore | null): void => void (current = s);

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "reach-fuel-"));
  chmodSync(base, 0o700);
  dir = join(base, "fuel");
  warnings.length = 0;
  clearMeteredModuleCache();
});
afterEach(() => {
  setMeteredModuleStore(null);
  clearMeteredModuleCache();
  rmSync(base, { recursive: true, force: true });
});

const honest = () => wat(`(module (func (export "f") (result i32) (i32.const 1)))`);
const evil = () => wat(`(module (func (export "f") (result i32) (i32.const 666)))`);

async function runF(bytes: Uint8Array): Promise<{ value: number; meteredDigest: string }> {
  const m = await getMeteredModule(bytes, {}, current);
  const inst = new WebAssembly.Instance(m.module, { reach_fuel: { refill: () => 1_000_000n } });
  return { value: (inst.exports["f"] as () => number)(), meteredDigest: m.meteredDigest };
}

describe("the fuel cache on disk", () => {
  it("keeps instrumented modules between processes, and an honest entry is used", async () => {
    setMeteredModuleStore(diskFuelStore(dir, (w) => warnings.push(w)));
    const first = await runF(await honest());
    clearMeteredModuleCache();
    const second = await runF(await honest());
    expect(second).toEqual(first);
    expect(readdirSync(dir).length).toBe(1);
    expect(warnings).toEqual([]);
  });

  it("an entry substituted with its own digest (the old format) or with a forged MAC is never executed", async () => {
    setMeteredModuleStore(diskFuelStore(dir));
    const good = await runF(await honest());
    const [entry] = readdirSync(dir);
    const path = join(dir, entry!);
    // Instrument the evil module in memory only, then plant it under the honest module's name.
    setMeteredModuleStore(null);
    clearMeteredModuleCache();
    const evilBytes = new Uint8Array(await (await import("../sandbox/fuel/mod.ts")).instrumentFuel(await evil()));
    for (const planted of [
      new Uint8Array([...sha256(evilBytes), ...evilBytes]),
      new Uint8Array([...new TextEncoder().encode("reachfv2"), ...new Uint8Array(32), ...evilBytes]),
      new Uint8Array([...readFileSync(path).subarray(0, 40), ...evilBytes]),
    ]) {
      writeFileSync(path, planted);
      setMeteredModuleStore(diskFuelStore(dir));
      clearMeteredModuleCache();
      const got = await runF(await honest());
      expect(got.value).toBe(1);
      expect(got.meteredDigest).toBe(good.meteredDigest);
    }
  });

  it("a directory writable by others, a foreign key or a linked directory is not used at all", async () => {
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o777);
    setMeteredModuleStore(diskFuelStore(dir, (w) => warnings.push(w)));
    expect((await runF(await honest())).value).toBe(1);
    expect(warnings.join("")).toMatch(/writable by its group or others/);
    expect(readdirSync(dir)).toEqual([]);

    const other = join(base, "other");
    mkdirSync(other, { mode: 0o700 });
    const linked = join(base, "linked");
    symlinkSync(other, linked);
    warnings.length = 0;
    clearMeteredModuleCache();
    setMeteredModuleStore(diskFuelStore(linked, (w) => warnings.push(w)));
    expect((await runF(await honest())).value).toBe(1);
    expect(warnings.join("")).toMatch(/symbolic link/);
  });
});
