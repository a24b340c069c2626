// Bearer tokens and tenant isolation: no token, a bad token and a malformed header are refused (401); a tenant never
// sees, cancels, streams or downloads another tenant's run, nor runs another tenant's registered pack.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packArchive, startTestService } from "../../tests/support/service.ts";
import type { TestService } from "../../tests/support/service.ts";
import { tokensRequired } from "./service.ts";
import { createToken } from "./tokens.ts";

let t: TestService;
let alice: string;
let bob: string;
beforeAll(async () => {
  t = await startTestService({ requireToken: true });
  alice = await createToken(t.db, "alice");
  bob = await createToken(t.db, "bob");
}, 120_000);
afterAll(async () => {
  await t?.close();
});

type Json = Record<string, unknown>;
async function call(token: string | null, method: string, path: string, body?: BodyInit, type?: string): Promise<{ status: number; json: Json; res: Response }> {
  const headers: Record<string, string> = {};
  if (token !== null) headers["authorization"] = token.startsWith("rwt_") ? `Bearer ${token}` : token;
  if (type !== undefined) headers["content-type"] = type;
  const res = await fetch(`${t.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  return { status: res.status, json: text.startsWith("{") ? (JSON.parse(text) as Json) : {}, res };
}
const code = (r: { json: Json }) => (r.json["error"] as Json | undefined)?.["code"];

describe("bearer tokens", () => {
  it("refuses requests without a valid token with 401 and a ReachError", async () => {
    for (const token of [null, "rwt_" + "A".repeat(43), "Bearer nonsense", "Basic YWxpY2U6eA==", `Bearer ${alice}x`]) {
      const r = await call(token, "GET", "/runs");
      expect(r.status, String(token)).toBe(401);
      expect(code(r)).toBe("POLICY_PERMISSION_DENIED");
      expect(r.res.headers.get("www-authenticate")).toContain("Bearer");
    }
    expect((await call(null, "GET", "/openapi.json")).status).toBe(200); // the document needs no token
    expect((await call(alice, "GET", "/runs")).status).toBe(200);
  });

  it("keeps tenants apart: runs, events, capsules, cancels, lists and packs", async () => {
    const reg = await call(alice, "POST", "/packs", (await packArchive("hello")) as Uint8Array<ArrayBuffer>, "application/gzip");
    expect(reg.status).toBe(201);
    const digest = reg.json["digest"] as string;
    const sub = await call(alice, "POST", "/runs", JSON.stringify({ pack: digest }), "application/json");
    expect(sub.status).toBe(202);
    const id = sub.json["runId"] as string;
    expect((await call(alice, "GET", `/runs/${id}?wait=30`)).json["status"]).toBe("COMPLETED");
    expect((await call(alice, "GET", `/runs/${id}/capsule`)).status).toBe(200);
    for (const [method, path] of [["GET", `/runs/${id}`], ["GET", `/runs/${id}/events`], ["GET", `/runs/${id}/capsule`], ["POST", `/runs/${id}/cancel`]] as const) {
      const r = await call(bob, method, path);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(JSON.stringify(r.json)).not.toContain("alice");
    }
    expect((await call(bob, "GET", "/runs")).json["runs"]).toEqual([]);
    expect(((await call(alice, "GET", "/runs")).json["runs"] as Json[]).map((r) => r["tenant"])).toEqual(["alice"]);
    const theft = await call(bob, "POST", "/runs", JSON.stringify({ pack: digest }), "application/json");
    expect([theft.status, code(theft)]).toEqual([404, "PACK_NOT_FOUND"]);
  });
});

describe("when tokens are required", () => {
  it("only a loopback embedded service without --auth lets requests without a token in", () => {
    expect(tokensRequired("127.0.0.1", true, false)).toBe(false);
    expect(tokensRequired("::1", true, false)).toBe(false);
    expect(tokensRequired("[::1]", true, false)).toBe(false);
    expect(tokensRequired("localhost", true, false)).toBe(false);
    expect(tokensRequired("127.0.0.1", true, true)).toBe(true);
    expect(tokensRequired("127.0.0.1", false, false)).toBe(true);
    expect(tokensRequired("0.0.0.0", true, false)).toBe(true);
    expect(tokensRequired("192.168.1.5", true, false)).toBe(true);
    expect(tokensRequired("::", true, false)).toBe(true);
  });

  it("refuses a bad tenant name", async () => {
    await expect(createToken(t.db, "Not OK")).rejects.toThrow(/tenant name/);
    // a long one is shown clipped, not whole
    const long = "X".repeat(500);
    const err = await createToken(t.db, long).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/got "X{80}…"$/);
  });
});
