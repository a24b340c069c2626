// Deno runner of the runtime-neutral conformance cases (conformance/lib/): the same cases as the Node runner,
// and the same committed fingerprints (conformance/fingerprints.json), so the runtimes agree byte for byte.
import { allSuites, FINGERPRINTS_FILE } from "../lib/all.ts";
import type { ConformanceIO } from "../lib/types.ts";
import { setSha256Backend } from "../../src/canonical/sha256.ts";
import { nativeSha256Backend } from "../../src/platform/native-sha256.ts";
import { StepThreadPool } from "../../src/host/step-thread.ts";

setSha256Backend(nativeSha256Backend); // the cases hash as an engine call on Deno does (the same digests either way)
const root = new URL("../", import.meta.url);
const io: ConformanceIO = {
  stepThreads: (size) => new StepThreadPool(size),
  readBytes: (p) => Deno.readFileSync(new URL(p, root)),
  readText: (p) => Deno.readTextFileSync(new URL(p, root)),
  list: (p) => [...Deno.readDirSync(new URL(p, root))].map((e) => e.name).sort(),
};
const expected: Record<string, string> = JSON.parse(io.readText(FINGERPRINTS_FILE));
const seen = new Set<string>();

for (const { suite, cases } of allSuites(io)) {
  for (const c of cases) {
    Deno.test(`conformance/${suite}: ${c.name}`, async () => {
      const fingerprint = String((await c.run()) ?? "ok");
      seen.add(c.name);
      if (fingerprint !== expected[c.name]) {
        throw new Error(`fingerprint of "${c.name}" is ${fingerprint}, expected ${expected[c.name]}`);
      }
    });
  }
}

Deno.test("conformance/fingerprints: every committed fingerprint belongs to a case that still exists", () => {
  const missing = Object.keys(expected).filter((k) => !seen.has(k));
  if (missing.length > 0) throw new Error(`fingerprints without a case: ${missing.join(", ")}`);
});
