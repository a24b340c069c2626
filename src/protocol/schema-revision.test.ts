import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url).pathname;

describe("SCHEMA_REVISION", () => {
  it("is the digest of this checkout's schema sources (else the validated-document cache could serve another schema's verdict)", () => {
    const r = spawnSync(process.execPath, ["scripts/gen-schema-revision.mjs", "--check"], { cwd: root, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});
