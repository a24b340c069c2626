// Once per vitest run (vitest.config.ts `globalSetup`): a folder for the CLI bundle every test file that spawns the
// built CLI shares (tests/support/service.ts `cliBundle`). The first file that needs the bundle builds it there, the
// others wait for it and reuse it: the sources do not change during a run, so one bundle is the same as one per file,
// and each file's own took ~3.5 s of esbuild on the 2-core CI machine (18 files). Removed when the run ends.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";

/** Create the shared folder and name it to the test processes (they inherit this environment). */
export default function setup(): () => void {
  const parent = new URL("../node_modules/.cache/", import.meta.url).pathname;
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, "reach-wasm-test-bundle-")); // under node_modules: its external packages resolve
  process.env["REACH_WASM_TEST_CLI_BUNDLE"] = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
