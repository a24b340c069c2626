// Per-client limits of the run service's watches: one client (by address) holds at most watchersPerClient event
// streams and long polls (429 with Retry-After beyond), another client is not affected, and a slot comes back when its
// stream ends; an event stream without an event for streamIdleMs ends (the client resumes with Last-Event-ID). The
// runs stay PENDING (no worker), so every stream stays open until a limit ends it; the idle clock is injected.
import type { IncomingMessage } from "node:http";
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spinPackArchive, startTestService } from "../../tests/support/service.ts";
import type { TestService } from "../../tests/support/service.ts";

type Open = { status: number; retryAfter: string | undefined; ended: Promise<void>; close(): void };

/** A GET from `from` (127.0.0.2 is another client than 127.0.0.1), resolved once its status arrives. */
function watch(url: string, from: string): Promise<Open> {
  return new Promise((resolve, reject) => {
    let endedResolve: () => void = () => {};
    const ended = new Promise<void>((r) => (endedResolve = r));
    const req = httpRequest(url, { localAddress: from, agent: false }, (res: IncomingMessage) => {
      const answer = { status: res.statusCode ?? 0, retryAfter: res.headers["retry-after"] as string | undefined, ended, close: () => req.destroy() };
      res.on("end", endedResolve);
      res.on("close", endedResolve);
      res.resume();
      resolve(answer);
    });
    req.on("error", reject);
    req.end();
  });
}

async function submitPending(t: TestService): Promise<string> {
  const f = new FormData();
  f.set("pack", new Blob([spinPackArchive(1, 10, "pending").slice().buffer as ArrayBuffer]), "p.tar.gz");
  const res = await fetch(`${t.url}/runs`, { method: "POST", body: f });
  expect(res.status).toBe(202);
  return ((await res.json()) as { runId: string }).runId;
}

describe("run service: per-client watches", () => {
  let now = 0;
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ workers: 0, limits: { watchersPerClient: 2, streamIdleMs: 60_000, now: () => now } });
  }, 60_000);
  afterAll(async () => await t?.close());

  it("one client holds at most its share of event streams and long polls; others are not affected", async () => {
    const id = await submitPending(t);
    const events = `${t.url}/runs/${id}/events`;
    const a1 = await watch(events, "127.0.0.1");
    expect(a1.status).toBe(200);
    // a long poll answers nothing until the run ends (or 60 s): it is not awaited, only given a moment to be counted
    const polling = httpRequest(`${t.url}/runs/${id}?wait=60`, { localAddress: "127.0.0.1", agent: false });
    polling.on("error", () => {});
    polling.end();
    await new Promise((r) => setTimeout(r, 500));
    const a3 = await watch(events, "127.0.0.1");
    expect(a3.status).toBe(429);
    expect(a3.retryAfter).toBe("1");
    const a4 = await watch(`${t.url}/runs/${id}?wait=30`, "127.0.0.1");
    expect(a4.status).toBe(429);
    const b1 = await watch(events, "127.0.0.2");
    expect(b1.status).toBe(200);
    expect((await fetch(`${t.url}/runs/${id}`)).status).toBe(200); // a plain read is no watch
    a1.close();
    let again: Open | null = null;
    for (let i = 0; i < 100 && again?.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 30));
      again = await watch(events, "127.0.0.1");
      if (again.status !== 200) again.close();
    }
    expect(again?.status).toBe(200);
    polling.destroy();
    for (const o of [b1, again!]) o.close();
  }, 60_000);

  it("ends an event stream that has had no event for the idle time (heartbeats do not count)", async () => {
    const id = await submitPending(t);
    const s = await watch(`${t.url}/runs/${id}/events`, "127.0.0.2");
    expect(s.status).toBe(200);
    let done = false;
    void s.ended.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 1500));
    expect(done).toBe(false); // not idle yet
    now += 60_000;
    for (let i = 0; i < 200 && !done; i++) await new Promise((r) => setTimeout(r, 50));
    expect(done).toBe(true);
    expect(((await (await fetch(`${t.url}/runs/${id}`)).json()) as { status: string }).status).toBe("PENDING");
  }, 60_000);
});
