// Every failure of a handler leaves the API as a ReachError document; only a real internal failure is logged as one.
import { describe, expect, it } from "vitest";
import { errorResponse } from "./http-errors.ts";

describe("errorResponse", () => {
  it("answers a client that went away mid-body (Node: aborted, ECONNRESET; Deno: BadResource) with 400, not as an internal error", async () => {
    for (const err of [Object.assign(new Error("aborted"), { code: "ECONNRESET" }), Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" }), Object.assign(new Error("Cannot read body as underlying resource unavailable"), { name: "BadResource" })]) {
      const logged: unknown[] = [];
      const res = errorResponse(err, (e) => logged.push(e));
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("PROTO_INVALID_MESSAGE");
      expect(logged).toEqual([]);
    }
  });

  it("logs anything else as an internal error and answers 500 without its details", async () => {
    const logged: unknown[] = [];
    const res = errorResponse(new TypeError("x is undefined"), (e) => logged.push(e));
    expect(res.status).toBe(500);
    const body = JSON.stringify(await res.json());
    expect(body).toContain("EXEC_RESOURCE_UNAVAILABLE");
    expect(body).not.toContain("x is undefined");
    expect(logged.length).toBe(1);
  });
});
