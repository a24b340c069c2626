import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "./cli.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-fed-cli-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const at = (...p: string[]): string => join(scratch, ...p);

function schemaErrors(schema: string, doc: unknown): unknown {
  const ajv = new Ajv2020Module.default({ allErrors: true, strict: false });
  addFormatsModule.default(ajv);
  const validate = ajv.compile(JSON.parse(readFileSync(new URL(`../../conformance/schemas/${schema}`, import.meta.url), "utf8")));
  return validate(doc) ? null : validate.errors;
}

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string; error?: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  const error = argv.includes("--json") && stdout.trim() !== "" ? (JSON.parse(stdout) as { error?: { code: string } }).error?.code : undefined;
  return { code, stdout, stderr, ...(error === undefined ? {} : { error }) };
}

describe("reach-wasm node / delegate / revoke", () => {
  it("each new command has help", async () => {
    for (const c of ["node", "delegate", "revoke"]) {
      const r = await cli(c, "--help");
      expect(r.code, c).toBe(0);
      expect(r.stdout, c).toContain(`Usage: reach-wasm ${c}`);
    }
    expect((await cli("run", "--help")).stdout).toContain("--on NODE_ID|URL --delegation FILE --dir NODE_DIR");
  });

  it("node init writes node.json and a 0600 key, and refuses a directory that is not empty", async () => {
    const r = await cli("node", "init", "--dir", at("a"), "--endpoint", "https://127.0.0.1:9443", "--json");
    expect(r.code).toBe(0);
    const node = JSON.parse(readFileSync(at("a", "node.json"), "utf8")) as { nodeId: string; publicKey: string; endpoint: string };
    expect(node).toMatchObject({ nodeId: JSON.parse(r.stdout).nodeId, endpoint: "https://127.0.0.1:9443" });
    expect(schemaErrors("node-identity.schema.json", node)).toBeNull();
    expect(statSync(at("a", "node.key")).mode & 0o777).toBe(0o600);
    const again = await cli("node", "init", "--dir", at("a"), "--endpoint", "https://127.0.0.1:9443", "--json");
    expect([again.code, again.error]).toEqual([2, "PROTO_INVALID_ARGUMENT"]);
    expect(JSON.parse(readFileSync(at("a", "node.json"), "utf8"))).toEqual(node);
    expect((await cli("node", "init", "--dir", at("x"), "--endpoint", "http://example.com", "--json")).error).toBe("PROTO_INVALID_ARGUMENT");
  });

  it("node trust / list / forget manage the registry", async () => {
    await cli("node", "init", "--dir", at("b"), "--endpoint", "https://127.0.0.1:9444");
    expect((await cli("node", "trust", "--dir", at("a"), at("b", "node.json"))).code).toBe(0);
    expect((await cli("node", "trust", "--dir", at("a"), at("a", "node.json"), "--json")).error).toBe("PROTO_INVALID_ARGUMENT");
    const b = JSON.parse(readFileSync(at("b", "node.json"), "utf8")) as { nodeId: string; publicKey: string };
    writeFileSync(at("b-rekeyed.json"), JSON.stringify({ ...b, publicKey: JSON.parse(readFileSync(at("a", "node.json"), "utf8")).publicKey }));
    expect((await cli("node", "trust", "--dir", at("a"), at("b-rekeyed.json"), "--json")).error).toBe("FED_TRUST_VIOLATION");
    const list = JSON.parse((await cli("node", "list", "--dir", at("a"), "--json")).stdout) as { peers: { nodeId: string }[] };
    expect(list.peers.map((p) => p.nodeId)).toEqual([b.nodeId]);
    expect((await cli("node", "forget", "--dir", at("a"), b.nodeId)).code).toBe(0);
    expect((await cli("node", "forget", "--dir", at("a"), b.nodeId, "--json")).error).toBe("PROTO_INVALID_ARGUMENT");
    expect((await cli("node", "trust", "--dir", at("a"), at("b", "node.json"))).code).toBe(0);
  });

  it("delegate writes a schema-valid signed delegation; re-delegation may only narrow", async () => {
    const a = JSON.parse(readFileSync(at("a", "node.json"), "utf8")) as { nodeId: string };
    const b = JSON.parse(readFileSync(at("b", "node.json"), "utf8")) as { nodeId: string };
    expect((await cli("delegate", "--dir", at("a"), "--to", "00000000-0000-4000-8000-000000000000", "--scope", "tool:x", "--expires", "1h", "--out", at("no.json"), "--json")).error).toBe("FED_NODE_UNAUTHORIZED");
    expect((await cli("delegate", "--dir", at("a"), "--to", b.nodeId, "--scope", "x", "--expires", "1h", "--out", at("no.json"), "--json")).error).toBe("FED_DELEGATION_INVALID");
    expect((await cli("delegate", "--dir", at("a"), "--to", b.nodeId, "--scope", "tool:x", "--expires", "2000-01-01T00:00:00Z", "--out", at("no.json"), "--json")).error).toBe("PROTO_INVALID_ARGUMENT");
    expect(existsSync(at("no.json"))).toBe(false);
    const r = await cli("delegate", "--dir", at("a"), "--to", b.nodeId, "--scope", "tool:x,resource:workspace:///data/", "--expires", "1h", "--out", at("a-b.json"), "--json");
    expect(r.code).toBe(0);
    const d = JSON.parse(readFileSync(at("a-b.json"), "utf8")) as Record<string, unknown>;
    expect(schemaErrors("delegation.schema.json", d)).toBeNull();
    expect(Object.keys(d).sort()).toEqual(["delegate", "delegationId", "delegator", "expiresAt", "issuedAt", "scope", "signature"]);
    expect(d).toMatchObject({ delegator: a.nodeId, delegate: b.nodeId, scope: ["tool:x", "resource:workspace:///data/"] });
    await cli("node", "trust", "--dir", at("b"), at("a", "node.json"));
    const wide = await cli("delegate", "--dir", at("b"), "--to", a.nodeId, "--scope", "tool:x,tool:y", "--expires", "10m", "--parent", at("a-b.json"), "--out", at("b-a.json"), "--json");
    expect(wide.error).toBe("FED_DELEGATION_INVALID");
    const late = await cli("delegate", "--dir", at("b"), "--to", a.nodeId, "--scope", "tool:x", "--expires", "2d", "--parent", at("a-b.json"), "--out", at("b-a.json"), "--json");
    expect(late.error).toBe("FED_DELEGATION_INVALID");
    const notMine = await cli("delegate", "--dir", at("a"), "--to", b.nodeId, "--scope", "tool:x", "--expires", "10m", "--parent", at("a-b.json"), "--out", at("b-a.json"), "--json");
    expect(notMine.error).toBe("FED_TRUST_VIOLATION");
    const parentBytes = readFileSync(at("a-b.json"));
    const over = await cli("delegate", "--dir", at("b"), "--to", a.nodeId, "--scope", "resource:workspace:///data/in/", "--expires", "10m", "--parent", at("a-b.json"), "--out", at("a-b.json"), "--json");
    expect(over.error).toBe("PROTO_INVALID_ARGUMENT"); // --out over the --parent it reads
    expect(readFileSync(at("a-b.json")).equals(parentBytes)).toBe(true);
    const narrow = await cli("delegate", "--dir", at("b"), "--to", a.nodeId, "--scope", "resource:workspace:///data/in/", "--expires", "10m", "--parent", at("a-b.json"), "--out", at("b-a.json"), "--json");
    expect(narrow.code, narrow.stderr).toBe(0);
    const redelegated = JSON.parse(readFileSync(at("b-a.json"), "utf8")) as Record<string, unknown>;
    expect(redelegated["parent"]).toBe(d["delegationId"]);
    expect(schemaErrors("delegation.schema.json", redelegated)).toBeNull();
  });

  it("revoke records a signed revocation (only the delegator, or the delegator of a link above, may), and reports peers it could not reach", async () => {
    const r = await cli("revoke", "--dir", at("a"), at("a-b.json"), "--json");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { revocation: { delegationId: string }; pushed: { ok: boolean; error?: { code: string } }[] };
    expect(out.pushed).toEqual([expect.objectContaining({ ok: false, error: expect.objectContaining({ code: "FED_NODE_UNREACHABLE" }) })]);
    const list = JSON.parse((await cli("node", "list", "--dir", at("a"), "--json")).stdout) as { revocations: string[] };
    expect(list.revocations).toEqual([out.revocation.delegationId]);
    expect((await cli("revoke", "--dir", at("b"), at("a-b.json"), "--json")).error).toBe("FED_TRUST_VIOLATION");
    // b-a.json was granted by b under a-b.json: a, the delegator of the link above it, may revoke it too, and the two
    // revocations are kept apart (by signer)
    const b = JSON.parse(readFileSync(at("b", "node.json"), "utf8")) as { nodeId: string };
    const a = JSON.parse(readFileSync(at("a", "node.json"), "utf8")) as { nodeId: string };
    const above = await cli("revoke", "--dir", at("a"), at("b-a.json"), "--json");
    expect(above.code, above.stderr).toBe(0);
    expect((JSON.parse(above.stdout) as { revocation: { delegator: string } }).revocation.delegator).toBe(a.nodeId);
    expect((await cli("revoke", "--dir", at("b"), at("b-a.json"), "--json")).code).toBe(0);
    expect(existsSync(at("a", "revocations", a.nodeId, `${(JSON.parse(readFileSync(at("b-a.json"), "utf8")) as { delegationId: string }).delegationId}.json`))).toBe(true);
    // a holds b-a.json, but it is revoked: a may not re-delegate from it
    const again = await cli("delegate", "--dir", at("a"), "--to", b.nodeId, "--scope", "resource:workspace:///data/in/", "--expires", "5m", "--parent", at("b-a.json"), "--out", at("a-b2.json"), "--json");
    expect(again.error).toBe("FED_DELEGATION_REVOKED");
  });

  it("node serve refuses plain HTTP off loopback or without --insecure-loopback, and a pull interval over 30 s", async () => {
    expect((await cli("node", "serve", "--dir", at("a"), "--listen", "127.0.0.1:0", "--json")).error).toBe("PROTO_INVALID_ARGUMENT");
    expect((await cli("node", "serve", "--dir", at("a"), "--listen", "0.0.0.0:0", "--insecure-loopback", "--json")).error).toBe("PROTO_INVALID_ARGUMENT");
    expect((await cli("node", "serve", "--dir", at("a"), "--listen", "127.0.0.1:0", "--insecure-loopback", "--pull-interval", "31", "--json")).error).toBe("PROTO_INVALID_ARGUMENT");
    expect((await cli("node", "serve", "--dir", at("a"), "--tls-cert", at("a", "node.json"), "--json")).error).toBe("PROTO_INVALID_ARGUMENT");
  });

  it("a delegated run needs --on, --delegation and --dir together, and a registered target", async () => {
    expect((await cli("run", "packs/hello", "--on", "x", "--json")).error).toBe("PROTO_INVALID_ARGUMENT");
    const r = await cli("run", "packs/hello", "--on", "https://127.0.0.1:1", "--delegation", at("a-b.json"), "--dir", at("a"), "--out", at("o"), "--json");
    expect([r.code, r.error, existsSync(at("o"))]).toEqual([2, "FED_NODE_UNAUTHORIZED", false]);
  });
});
