// Deprecation warnings (seed 003 §9.2): every deprecated feature is in the CHANGELOG, still accepted, and warned about
// when used — on stderr and in the run record (result.json, hashed; absent when nothing deprecated was used).
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import { main } from "../cli/cli.ts";
import { jsPack, planOf, runFiles } from "../../tests/support/pack.ts";
import { DEPRECATIONS, planDeprecations, upgradePackDocument } from "./deprecations.ts";

const UNSIGNED = { approved_by: "ops", approved_at: "2026-01-01T00:00:00.000Z", method: "record" };
const scratch = mkdtempSync(join(tmpdir(), "reach-deprecations-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("deprecations (seed 003 §9.2)", () => {
  it("every deprecated feature is documented in the CHANGELOG's Deprecated section", () => {
    const changelog = readFileSync(new URL("../../CHANGELOG.md", import.meta.url), "utf8");
    const section = changelog.slice(changelog.indexOf("### Deprecated"));
    expect(changelog).toContain("### Deprecated");
    for (const id of Object.keys(DEPRECATIONS)) expect(section, id).toContain(`\`${id}\``);
  });

  it("a plan with an unsigned approval still runs, warns on progress, and records the use in result.json", async () => {
    const warnings: string[] = [];
    const files = jsPack({ tools: { echo: "export default (i) => i" }, plan: planOf([{ id: "s1", tool: "echo" }], { approval: UNSIGNED }) });
    const r = await runFiles(files, { onProgress: (p) => void (p.kind === "warning" && warnings.push(p.message)) });
    expect(r.status).toBe("COMPLETED");
    expect(r.deprecations?.map((d) => d.id)).toEqual(["plan.approval.unsigned"]);
    expect(warnings).toEqual([r.deprecations![0]!.message]);
    expect(r.warnings).toContain(r.deprecations![0]!.message);
    expect(JSON.parse(new TextDecoder().decode(r.body.get("result.json")))["deprecations"]).toEqual(r.deprecations);
    const plain = await runFiles(jsPack({ tools: { echo: "export default (i) => i" }, plan: planOf([{ id: "s1", tool: "echo" }]) }));
    expect(plain.deprecations).toBeUndefined();
    expect(Object.hasOwn(JSON.parse(new TextDecoder().decode(plain.body.get("result.json"))) as object, "deprecations")).toBe(false);
  });

  it("a risk-3 plan refused for its unsigned approval is warned about too", async () => {
    const files = jsPack({ tools: { echo: "export default (i) => i" }, plan: planOf([{ id: "s1", tool: "echo" }], { risk: { level: 3 }, approval: UNSIGNED }) });
    const r = await runFiles(files);
    expect(r.error?.code).toBe("PLAN_APPROVAL_REQUIRED");
    expect(r.deprecations?.map((d) => d.id)).toEqual(["plan.approval.unsigned"]);
  });

  it("reach-wasm run prints the warning on stderr and the capsule's result.json records it", async () => {
    const dir = join(scratch, "pack");
    const files = jsPack({ tools: { echo: "export default (i) => i" }, plan: planOf([{ id: "s1", tool: "echo" }], { approval: UNSIGNED }) });
    for (const [p, b] of files) {
      mkdirSync(join(dir, p, ".."), { recursive: true });
      writeFileSync(join(dir, p), b);
    }
    let stdout = "";
    let stderr = "";
    const code = await main(["run", dir, "--out", join(scratch, "out"), "--json"], { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
    expect(code).toBe(0);
    expect(stderr).toContain("deprecated (plan.approval.unsigned");
    const capsule = readRunCapsule(new Uint8Array(readFileSync(JSON.parse(stdout).capsule as string)));
    expect(JSON.parse(new TextDecoder().decode(capsule.entries.get("result.json")))["deprecations"]).toEqual([expect.objectContaining({ id: "plan.approval.unsigned" })]);
  });

  it("a signed approval record is not deprecated; nothing else in a plan is", () => {
    expect(planDeprecations({ plan_id: "p", approval: { type: "reach-wasm/plan-approval", version: 1, planHash: "x", publicKey: "y", signature: "z" } })).toEqual([]);
    expect(planDeprecations({ plan_id: "p" })).toEqual([]);
    expect(planDeprecations(null)).toEqual([]);
    expect(planDeprecations({ plan_id: "p", approval: UNSIGNED })[0]?.message).toMatch(/^deprecated \(plan\.approval\.unsigned, since 0\.1\.0; may be removed in 0\.3\.0\): plan "p" uses .*reach-wasm approve/);
  });

  it("a pack declaring a tool by a plain name (seed 003 §4.1 short form) runs, warns once on stderr, records it, replays and shows it", async () => {
    const pack = new URL("../../conformance/packs/deprecated_tool_names", import.meta.url).pathname;
    const io = () => {
      const o = { stdout: "", stderr: "" };
      return { o, io: { stdout: (t: string) => void (o.stdout += t), stderr: (t: string) => void (o.stderr += t) } };
    };
    const run = io();
    expect(await main(["run", pack, "--out", join(scratch, "legacy"), "--json"], run.io)).toBe(0);
    expect(run.o.stderr.match(/deprecated \(manifest\.capabilities\.tools\.names, since 0\.1\.0; may be removed in 0\.3\.0\)/g)).toHaveLength(1);
    const capsulePath = JSON.parse(run.o.stdout).capsule as string;
    const result = JSON.parse(new TextDecoder().decode(readRunCapsule(new Uint8Array(readFileSync(capsulePath))).entries.get("result.json")));
    expect(result["status"]).toBe("COMPLETED");
    expect(result["deprecations"].map((d: { id: string }) => d.id)).toEqual(["manifest.capabilities.tools.names"]);
    const replay = io();
    expect(await main(["replay", capsulePath, "--json"], replay.io)).toBe(0);
    expect(JSON.parse(replay.o.stdout).matches).toBe(true);
    const show = io();
    expect(await main(["show", capsulePath, "--json"], show.io)).toBe(0);
    expect(JSON.parse(show.o.stdout).deprecations).toEqual(result["deprecations"]);
    const validate = io();
    expect(await main(["pack", "validate", pack, "--json"], validate.io)).toBe(0);
    expect(validate.o.stderr).toContain("warning: deprecated (manifest.capabilities.tools.names");
  });

  it("only plain tool names are read as deprecated forms; the document given is never changed", () => {
    const raw = { id: "x", manifest: { manifestVersion: "1.0.0", capabilities: { tools: ["a", { name: "b" }], permissions: ["network"] } } };
    const copy = structuredClone(raw);
    const up = upgradePackDocument(raw, "reach.json");
    expect(raw).toEqual(copy);
    expect(up.document).toEqual({ ...raw, manifest: { ...raw.manifest, capabilities: { tools: [{ name: "a" }, { name: "b" }], permissions: ["network"] } } });
    expect(up.deprecations.map((d) => d.id)).toEqual(["manifest.capabilities.tools.names"]);
    for (const doc of [null, 7, [], { manifest: null }, { manifest: { capabilities: { tools: [{ name: "a" }] } } }, { manifest: { capabilities: { tools: "a" } } }]) {
      expect(upgradePackDocument(doc, "reach.json")).toEqual({ document: doc, deprecations: [] });
    }
  });
});
