// Vitest hooks over the CLI bundle (service.ts's `cliBundle`): for test files only.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { cliBundle } from "./service.ts";

/**
 * For a test file that spawns the bundled CLI: a scratch folder, and the bundle built in `beforeAll`; both removed in
 * `afterAll`. Call at the file's top level.
 * @param prefix the scratch folder's name prefix
 * @returns the scratch folder and the bundle's bin (valid once `beforeAll` ran)
 */
export function withCliBundle(prefix: string): { scratch: string; main: () => string } {
  const scratch = mkdtempSync(join(tmpdir(), prefix));
  let bundle: { main: string; remove(): void } | undefined;
  beforeAll(async () => {
    bundle = await cliBundle();
  }, 120_000);
  afterAll(() => {
    bundle?.remove();
    rmSync(scratch, { recursive: true, force: true });
  });
  return { scratch, main: () => bundle!.main };
}
