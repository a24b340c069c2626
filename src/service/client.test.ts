// The run service's client facing a server that is not the run service: every answer it cannot read is a ReachError
// saying so, never a crash reported as a bug of reach-wasm.
import { describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { ServiceClient } from "./client.ts";

const answering = (status: number, body: string, type: string): typeof fetch => (async () => new Response(body, { status, headers: { "content-type": type } })) as typeof fetch;

describe("ServiceClient", () => {
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
