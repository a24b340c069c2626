// Node runner of the runtime-neutral conformance cases (conformance/lib/). The Deno runner is
// conformance/deno/conformance_test.ts; both compare every case's fingerprint with conformance/fingerprints.json,
// so the two runtimes agree byte for byte. Regenerate that file with UPDATE_FINGERPRINTS=1 after a deliberate change.
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildSync } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { allSuites, FINGERPRINTS_FILE } from "../lib/all.ts";
import type { ConformanceIO } from "../lib/types.ts";
import { setSha256Backend } from "../../src/canonical/sha256.ts";
import { nativeSha256Backend } from "../../src/platform/native-sha256.ts";
import { StepThreadPool } from "../../src/host/step-thread.ts";

setSha256Backend(nativeSha256Backend); // the cases hash as an engine call on Node does (the same digests either way)
const root = new URL("../", import.meta.url);
let stepWorker: string | null = null;
const io: ConformanceIO = {
  readBytes: (p) => new Uint8Array(readFileSync(new URL(p, root))),
  readText: (p) => readFileSync(new URL(p, root), "utf8"),
  list: (p) => readdirSync(new URL(p, root)).sort(),
  // Node cannot start a worker from TypeScript: the step thread runs a bundle of src/host/step-worker.ts.
  stepThreads: (size) => {
    if (stepWorker === null) {
      stepWorker = fileURLToPath(new URL(`../node_modules/.cache/reach-wasm-step-worker-${process.pid}/step-worker.js`, root));
      buildSync({ entryPoints: [fileURLToPath(new URL("../src/host/step-worker.ts", root))], bundle: true, format: "esm", platform: "node", target: "node20", outfile: stepWorker, logLevel: "error", external: ["binaryen", "ajv", "ajv/*", "ajv-formats", "@jitl/*", "quickjs-emscripten-core", "@bytecodealliance/*"] });
    }
    return new StepThreadPool(size, { workerUrl: pathToFileURL(stepWorker) });
  },
};
afterAll(() => {
  if (stepWorker !== null) rmSync(dirname(stepWorker), { recursive: true, force: true });
});
const update = process.env.UPDATE_FINGERPRINTS === "1";
const expected: Record<string, string> = update ? {} : JSON.parse(io.readText(FINGERPRINTS_FILE));
const seen: Record<string, string> = {};

for (const { suite, cases } of allSuites(io)) {
  describe(`conformance/${suite}`, () => {
    for (const c of cases) {
      it(c.name, async () => {
        const fingerprint = String((await c.run()) ?? "ok");
        seen[c.name] = fingerprint;
        if (!update) expect(fingerprint, `fingerprint of "${c.name}" (UPDATE_FINGERPRINTS=1 to regenerate)`).toBe(expected[c.name]);
      });
    }
  });
}

describe("conformance/fingerprints", () => {
  it("every committed fingerprint belongs to a case that still exists", () => {
    if (update) {
      const sorted = Object.fromEntries(Object.entries(seen).sort(([a], [b]) => (a < b ? -1 : 1)));
      writeFileSync(new URL(FINGERPRINTS_FILE, root), JSON.stringify(sorted, null, 2) + "\n");
      return;
    }
    expect(Object.keys(seen).sort()).toEqual(Object.keys(expected).sort());
  });
});
