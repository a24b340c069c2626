// The run service's client facing a server that is not the run service: every answer it cannot read is a ReachError
// saying so, never a crash reported as a bug of reach-wasm.
import { describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { ServiceClient } from "./client.ts";

const answering = (status: number, body: string, type: string): typeof fetch => (async () => new Response(body, { status, headers: { "content-type": type } })) as typeof fetch;

/** A server that takes the connection and never answers: the fetch ends only when its signal aborts. */
const silent = (async (_input: unknown, init?: RequestInit) =>
  await new Promise<Response>((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true }))) as typeof fetch;

describe("ServiceClient", () => {
  it("gives up on a server that never answers after answerTimeoutMs, saying so (it waited minutes)", async () => {
    const client = new ServiceClient({ server: "http://127.0.0.1:9", fetch: silent, answerTimeoutMs: 50 });
    for (const call of [client.list(), client.run("00000000-0000-4000-8000-000000000000")]) {
      const err = await call.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ReachError);
      expect((err as ReachError).code).toBe("EXEC_RESOURCE_UNAVAILABLE");
      expect((err as ReachError).message).toMatch(/took the connection but did not answer GET \/runs\S* within 0 s; is --server a reach-wasm service.*REACH_WASM_ANSWER_TIMEOUT/);
    }
    // the caller's own stop is still the caller's: no timeout message for it
    const stop = new AbortController();
    const events = new ServiceClient({ server: "http://127.0.0.1:9", fetch: silent, answerTimeoutMs: 60_000 }).events("00000000-0000-4000-8000-000000000000", stop.signal);
    const first = events.next();
    stop.abort();
    const err = await first.catch((e: unknown) => e);
    expect(String((err as Error)?.message)).not.toMatch(/did not answer/);
  });

  it("refuses a success answer that is not JSON (a proxy's page, another program on the port) with a ReachError naming it", async () => {
    for (const [status, body] of [[200, "<html>sign in</html>"], [202, '{"runId":"x"']] as const) {
      const client = new ServiceClient({ server: "http://127.0.0.1:9", fetch: answering(status, body, "text/html") });
      const calls = [client.list(), client.run("00000000-0000-4000-8000-000000000000"), client.submit("a".repeat(64), new Uint8Array(1), {})];
      for (const call of calls) {
        const err = await call.catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ReachError);
        expect((err as ReachError).code).toBe("EXEC_RESOURCE_UNAVAILABLE");
        expect((err as ReachError).message).toMatch(/no JSON.*is --server a reach-wasm service/);
      }
    }
  });
});
