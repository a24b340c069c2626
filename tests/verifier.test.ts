// The standalone verifier (conformance/verifier/verify-capsule.mjs: @noble libraries only, no reach-wasm import)
// accepts every committed capsule, checks the signed one's proofs, and rejects a damaged event.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readArchive, writeArchive } from "../src/capsule/archive.ts";

const root = new URL("../", import.meta.url).pathname;
const verifier = join(root, "conformance/verifier/verify-capsule.mjs");
const scratch = mkdtempSync(join(tmpdir(), "reach-verifier-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const run = (file: string) => spawnSync(process.execPath, [verifier, file], { cwd: root, encoding: "utf8" });

describe("standalone verifier", () => {
  it("has no reach-wasm import", () => {
    const src = readFileSync(verifier, "utf8");
    const imports = [...src.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
    expect(imports.every((i) => i!.startsWith("node:") || i!.startsWith("@noble/"))).toBe(true);
  });

  for (const folder of readdirSync(join(root, "conformance/capsules"))) {
    it(`accepts conformance/capsules/${folder}`, () => {
      const dir = join(root, "conformance/capsules", folder);
      const r = run(join(dir, readdirSync(dir)[0]!));
      expect(r.status, r.stdout + r.stderr).toBe(0);
      if (folder === "notes-signed") expect(r.stdout).toMatch(/ok {3}proof\.run/);
    });
  }

  it("rejects a capsule whose event was changed (and whose index was forged to match)", () => {
    const dir = join(root, "conformance/capsules/notes-signed");
    const entries = readArchive(readFileSync(join(dir, readdirSync(dir)[0]!)));
    const text = new TextDecoder().decode(entries.get("events.jsonl")!);
    const changed = new TextEncoder().encode(text.replace('"stepIndex":1', '"stepIndex":9'));
    entries.set("events.jsonl", changed);
    const index = JSON.parse(new TextDecoder().decode(entries.get("capsule.json")!));
    for (const f of index.files) if (f.path === "events.jsonl") Object.assign(f, { sha256: createHash("sha256").update(changed).digest("hex"), size: changed.length });
    entries.set("capsule.json", new TextEncoder().encode(JSON.stringify(index)));
    const file = join(scratch, "bad.capsule.tar.gz");
    writeFileSync(file, writeArchive([...entries].map(([path, bytes]) => ({ path, bytes }))));
    const r = run(file);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/FAIL events\.chain: event 5 is broken/);
  });

  it("rejects a run.json whose field does not follow from the events (index forged to match); verify agrees", async () => {
    const { readRunCapsule } = await import("../src/capsule/run-capsule.ts");
    const { verifyRunCapsule } = await import("../src/engine/verify.ts");
    const dir = join(root, "conformance/capsules/chart");
    const entries = readArchive(readFileSync(join(dir, readdirSync(dir)[0]!)));
    const doc = JSON.parse(new TextDecoder().decode(entries.get("run.json")!));
    const changed = new TextEncoder().encode(JSON.stringify({ ...doc, status: "failed" }));
    entries.set("run.json", changed);
    const index = JSON.parse(new TextDecoder().decode(entries.get("capsule.json")!));
    for (const f of index.files) if (f.path === "run.json") Object.assign(f, { sha256: createHash("sha256").update(changed).digest("hex"), size: changed.length });
    entries.set("capsule.json", new TextEncoder().encode(JSON.stringify(index)));
    const bytes = writeArchive([...entries].map(([path, bytes]) => ({ path, bytes })));
    const file = join(scratch, "bad-run-json.capsule.tar.gz");
    writeFileSync(file, bytes);
    const r = run(file);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/FAIL run\.json: fields status differ/);
    const v = verifyRunCapsule(readRunCapsule(bytes));
    expect(v.checks.find((c) => c.name === "run.json")).toMatchObject({ ok: false });
  });
});
