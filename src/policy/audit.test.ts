// The post-execution capability audit (seed 003 §4.2): used, unused and attempted-undeclared capabilities, from real
// runs; it is in the capsule's result.json (hashed), replays to the same bytes, and a capsule made before the audit
// existed still replays to its own run hash.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readRunCapsule } from "../capsule/run-capsule.ts";
import { buildRunCapsule, capsuleRequest } from "../engine/capsule.ts";
import { replayCapsule } from "../engine/replay.ts";
import { jsPack, packFromDisk, planOf, runFiles } from "../../tests/support/pack.ts";
import { loadPack } from "../engine/pack.ts";
import { readQuickJsEngineWasm, readPythonWasm } from "../../tests/support/platform.ts";
import { auditCapabilities, changedPaths } from "./audit.ts";

const env = { quickjsEngine: readQuickJsEngineWasm, pythonEngine: readPythonWasm };
const resultOf = (body: Map<string, Uint8Array>): Record<string, unknown> => JSON.parse(new TextDecoder().decode(body.get("result.json")!)) as Record<string, unknown>;

describe("auditCapabilities", () => {
  it("packs/notes: every declared tool, resource and permission used", async () => {
    const r = await runFiles(packFromDisk("notes"));
    expect(r.capabilityAudit).toEqual({
      tools: { declared: ["checksum", "index-notes", "save-note", "slugify", "stats"], used: ["checksum", "index-notes", "save-note", "slugify", "stats"], unused: [] },
      permissions: { declared: ["filesystem"], used: ["filesystem"], unused: [] },
      resources: { declared: ["memory://notes/", "workspace:///data/", "workspace:///out/"], used: ["memory://notes/", "workspace:///data/", "workspace:///out/"], unused: [] },
      hosts: { allowed: [], contacted: [] },
      undeclared: [],
    });
    expect(resultOf(r.body)["capabilityAudit"]).toEqual(r.capabilityAudit); // hashed with the run
  });

  it("declared but unused tools, permissions and resources are listed; a refused host call is an undeclared attempt", async () => {
    const files = jsPack({
      tools: { a: "export default (i, reach) => { reach.fs.write('out/x.txt', 'x'); return {}; }", b: "export default () => ({})" },
      plan: planOf([{ id: "s1", tool: "a" }]),
      manifest: { capabilities: { tools: [{ name: "a" }, { name: "b" }], permissions: ["filesystem", "network"], resources: [{ uri: "workspace:///out/", access: "write" }, { uri: "workspace:///in/", access: "read" }] } },
    });
    const r = await runFiles(files);
    expect(r.status, r.error?.message).toBe("COMPLETED");
    expect(r.capabilityAudit).toMatchObject({
      tools: { used: ["a"], unused: ["b"] },
      permissions: { declared: ["filesystem", "network"], used: ["filesystem"], unused: ["network"] },
      resources: { used: ["workspace:///out/"], unused: ["workspace:///in/"] },
      undeclared: [],
    });
    const escape = await runFiles(packFromDisk("path_escape_fail"));
    expect(escape.capabilityAudit?.undeclared).toEqual([expect.objectContaining({ violationType: "RESOURCE_ACCESS" })]);
  });

  it("an undeclared tool refused by the plan gate is an undeclared attempt; nothing was used", async () => {
    const files = jsPack({ tools: { echo: "export default (i) => i" }, plan: planOf([{ id: "s1", tool: "echo" }, { id: "s2", tool: "shell.exec" }]) });
    const r = await runFiles(files);
    expect(r.error?.code).toBe("POLICY_VIOLATION");
    expect(r.capabilityAudit).toMatchObject({ tools: { used: [], unused: ["echo"] }, undeclared: [{ violationType: "UNDEFINED_TOOL", attemptedCapability: "shell.exec" }] });
  });

  it("is a pure function of the run: pure inputs give the same audit", () => {
    const manifest = { capabilities: { tools: [{ name: "t" }], resources: [{ uri: "memory://k/", access: "read" }], permissions: [] }, policies: { allowedHosts: ["*.example.com"] } } as never;
    const events = [{ type: "tool.invoked", payload: { toolName: "t" } }];
    const calls = [{ op: "memory.get", request: { key: "k/1" } }, { op: "http.fetch", request: { url: "https://api.example.com/x" } }, { op: "http.fetch", request: { url: "https://evil.test/" }, error: {} }];
    const a = auditCapabilities(manifest, events, calls, []);
    expect(a).toEqual(auditCapabilities(manifest, events, calls, []));
    expect(a.resources.used).toEqual(["memory://k/"]);
    expect(a.hosts).toEqual({ allowed: ["*.example.com"], contacted: ["api.example.com"] });
    expect(changedPaths([{ path: "a", sha256: "1" }, { path: "b", sha256: "2" }], [{ path: "a", sha256: "3" }, { path: "c", sha256: "4" }])).toEqual(["a", "b", "c"]);
  });

  it("replays: a new capsule to the same audit and run hash; the committed capsule holds the audit and replays to its run hash", async () => {
    const loaded = await loadPack(packFromDisk("hello"));
    const record = await runFiles(packFromDisk("hello"));
    const capsule = buildRunCapsule(record, loaded, capsuleRequest(record, {}));
    const again = await replayCapsule(readRunCapsule(capsule.bytes), env);
    expect([again.matches, again.runHash]).toEqual([true, record.runHash]);
    // The committed capsules were regenerated for seed 004's run model (run.json, TASK_<id>.json, per-step clocks), so
    // none predates the audit any more; replay still leaves the audit out when result.json has none (replay.ts).
    const dir = new URL("../../conformance/capsules/hello/", import.meta.url);
    const committed = readRunCapsule(new Uint8Array(readFileSync(new URL(readdirSync(dir)[0]!, dir))));
    expect(Object.hasOwn(JSON.parse(new TextDecoder().decode(committed.entries.get("result.json"))) as object, "capabilityAudit")).toBe(true);
    const replayed = await replayCapsule(committed, env);
    expect([replayed.matches, replayed.runHash]).toEqual([true, committed.index.runHash]);
  });
});
