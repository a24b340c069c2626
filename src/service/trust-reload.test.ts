// A running service picks up trust-store changes without a restart (the README's flow: `reach-wasm trust add` while
// `serve`/`worker` run): the store is read again when the file changes, before each run. A pack signed by a key runs
// restricted (packs/notes then FAILS: it writes files) until the key is trusted, unrestricted after `trust add`, and
// restricted again after `trust remove`; a store that became malformed trusts no key and says so.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeArchive } from "../capsule/archive.ts";
import { main } from "../cli/cli.ts";
import { readPackFiles, watchTrustStore } from "../../tests/support/platform.ts";
import { root, startTestService } from "../../tests/support/service.ts";
import type { TestService } from "../../tests/support/service.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-trust-reload-"));
const store = join(scratch, "trust.json");
const key = join(scratch, "me.key");
const logged: string[] = [];
let t: TestService;

async function cli(...args: string[]): Promise<number> {
  return await main(args, { stdout: () => {}, stderr: () => {} });
}

beforeAll(async () => {
  writeFileSync(store, JSON.stringify({ version: 1, keys: [] }));
  expect(await cli("keygen", "--out", key)).toBe(0);
  t = await startTestService({ trust: await watchTrustStore(store, (line) => logged.push(line)) });
}, 120_000);
afterAll(async () => {
  await t?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function runSignedNotes(): Promise<string> {
  const dir = join(scratch, "notes");
  cpSync(join(root, "packs/notes"), dir, { recursive: true, force: true });
  expect(await cli("pack", "sign", dir, "--key", key)).toBe(0);
  const files = await readPackFiles(dir);
  const archive = writeArchive([...files].map(([path, bytes]) => ({ path, bytes })));
  const up = await fetch(`${t.url}/packs`, { method: "POST", body: archive as Uint8Array<ArrayBuffer>, headers: { "content-type": "application/gzip" } });
  expect(up.status).toBeLessThan(300);
  const { digest } = (await up.json()) as { digest: string };
  const sub = await fetch(`${t.url}/runs`, { method: "POST", body: JSON.stringify({ pack: digest }), headers: { "content-type": "application/json" } });
  const { runId } = (await sub.json()) as { runId: string };
  for (;;) {
    const r = (await (await fetch(`${t.url}/runs/${runId}?wait=30`)).json()) as { status: string };
    if (r.status !== "PENDING" && r.status !== "EXECUTING") return r.status;
  }
}

describe("a service's trust store", () => {
  it("is read again when it changes: trust add and remove reach the next run without a restart", async () => {
    expect(await runSignedNotes()).toBe("FAILED"); // restricted: its writes are refused
    expect(await cli("trust", "add", `${key}.pub`, "--name", "me", "--trust", store)).toBe(0);
    expect(await runSignedNotes()).toBe("COMPLETED");
    expect(await cli("trust", "remove", "me", "--trust", store)).toBe(0);
    expect(await runSignedNotes()).toBe("FAILED");
    expect(logged).toEqual([]);
  }, 120_000);

  it("a store that became malformed trusts no key and says so once; fixed, it counts again", async () => {
    const trust = await watchTrustStore(store, (line) => logged.push(line));
    expect(await cli("trust", "add", `${key}.pub`, "--name", "me", "--trust", store)).toBe(0);
    expect((await trust())?.keys).toHaveLength(1);
    writeFileSync(store, "{ not json");
    expect(await trust()).toBeNull();
    expect(await trust()).toBeNull();
    expect(logged).toEqual([expect.stringMatching(/trust store .* can no longer be read .* no key is trusted until it is fixed/)]);
    writeFileSync(store, JSON.stringify({ version: 1, keys: [] }));
    expect((await trust())?.keys).toEqual([]);
  });
});
