// The run service end to end on the embedded store (PGlite in memory): submit, wait, record, events, capsule.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readArchive } from "../capsule/archive.ts";
import { localRunHash, packArchive, startTestService } from "./_test-service.ts";
import type { TestService } from "./_test-service.ts";

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
}, 120_000);
afterAll(async () => {
  await t?.close();
});

async function upload(name: string): Promise<{ digest: string }> {
  const res = await fetch(`${t.url}/packs`, { method: "POST", headers: { "content-type": "application/gzip" }, body: (await packArchive(name)) as Uint8Array<ArrayBuffer> });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { digest: string };
}

describe("run service on PGlite", () => {
  it("runs a registered pack and keeps its capsule, with the run hash of a local run", async () => {
    const { digest } = await upload("hello");
    const sub = await fetch(`${t.url}/runs`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ pack: digest, seed: "7" }) });
    expect(sub.status).toBe(202);
    const { runId, status } = (await sub.json()) as { runId: string; status: string };
    expect(status).toBe("PENDING");
    const record = (await (await fetch(`${t.url}/runs/${runId}?wait=30`)).json()) as Record<string, unknown>;
    expect(record["status"]).toBe("COMPLETED");
    expect(record["runHash"]).toBe(await localRunHash("hello", { seed: "7" }));
    const capsule = await fetch(`${t.url}/runs/${runId}/capsule`);
    expect(capsule.status).toBe(200);
    const entries = readArchive(new Uint8Array(await capsule.arrayBuffer()));
    expect(entries.has("capsule.json")).toBe(true);
    const events = await (await fetch(`${t.url}/runs/${runId}/events`)).text();
    expect(events).toMatch(/event: run_started/);
    expect(events.match(/event: run_completed/g)?.length).toBe(1);
  });
});
