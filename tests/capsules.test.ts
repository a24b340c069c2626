// Capsules through the CLI (seed 003 §3.4, §8; README "Capsules"): run → capsule → replay → verify for the example
// packs, the same capsule bytes from Node and Deno, single-byte damage to an event, a tape record, a blob or the proof
// located by verify and replay (exit 1), malicious capsules refused with exit 2, and truncation at every offset of a
// real capsule refused without a hang.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { afterAll, describe, expect, it } from "vitest";
import { tarBomb, zeroBomb } from "../src/capsule/_test-tar.ts";
import { readArchive, writeArchive } from "../src/capsule/archive.ts";
import { readRunCapsule } from "../src/capsule/run-capsule.ts";
import { main } from "../src/cli/cli.ts";
import { canonicalize } from "../src/canonical/jcs.ts";
import { valueCommit } from "../src/canonical/commit.ts";
import { ReachError } from "../src/protocol/errors.ts";

const root = new URL("../", import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), "reach-capsules-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const enc = new TextEncoder();
const dec = new TextDecoder();

async function cli(args: string[]): Promise<{ code: number; json: Record<string, unknown> | null; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, json: stdout.trim() === "" ? null : (JSON.parse(stdout) as Record<string, unknown>), stderr };
}
const sha = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");
/**
 * Let the event loop turn: the byte-by-byte loops below run for many seconds, and a worker that holds its thread for
 * a minute (a loaded machine, two test files at a time) misses vitest's RPC deadline ("Timeout calling onTaskUpdate").
 */
const breathe = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

let keyFile = "";
async function signedNotesCapsule(): Promise<string> {
  if (keyFile === "") {
    keyFile = join(scratch, "k");
    expect((await cli(["keygen", "--out", keyFile])).code).toBe(0);
  }
  const r = await cli(["run", "packs/notes", "--unrestricted", "--key", keyFile, "--json", "--out", join(scratch, "signed")]);
  expect(r.code, r.stderr).toBe(0);
  return r.json!["capsule"] as string;
}

/** Rewrite one entry of a capsule (optionally fixing its digest in capsule.json, as a careful forger would). */
function tamper(capsule: string, entry: string, change: (b: Uint8Array) => Uint8Array, fixIndex: boolean): string {
  const entries = readArchive(readFileSync(capsule));
  const changed = change(entries.get(entry)!);
  entries.set(entry, changed);
  if (fixIndex) {
    const index = JSON.parse(dec.decode(entries.get("capsule.json")!));
    for (const f of index.files) if (f.path === entry) Object.assign(f, { sha256: sha(changed), size: changed.length });
    entries.set("capsule.json", enc.encode(JSON.stringify(index)));
  }
  const out = join(scratch, `tampered-${Math.random().toString(36).slice(2)}.capsule.tar.gz`);
  writeFileSync(out, writeArchive([...entries].map(([path, bytes]) => ({ path, bytes }))));
  return out;
}
/** Change one byte inside the payload of event `line` (a digit or letter of its first string value). */
function flipByteOfLine(b: Uint8Array, line: number): Uint8Array {
  const lines = dec.decode(b).split("\n");
  const at = lines[line]!.indexOf('"payload":{') + 12;
  const m = /[a-z0-9]/.exec(lines[line]!.slice(at + 5))!;
  const i = at + 5 + m.index;
  const ch = lines[line]![i]!;
  lines[line] = lines[line]!.slice(0, i) + (ch === "a" ? "b" : "a") + lines[line]!.slice(i + 1);
  return enc.encode(lines.join("\n"));
}

describe("run → capsule → replay → verify", () => {
  for (const pack of ["hello", "notes"]) {
    it(`packs/${pack}: replay matches (exit 0) and verify passes (exit 0)`, async () => {
      const r = await cli(["run", `packs/${pack}`, "--unrestricted", "--json", "--out", join(scratch, pack)]);
      expect(r.code, r.stderr).toBe(0);
      const capsule = r.json!["capsule"] as string;
      expect(capsule.endsWith(`${r.json!["runHash"]}.capsule.tar.gz`)).toBe(true);
      const replay = await cli(["replay", capsule, "--json"]);
      expect(replay.code, replay.stderr).toBe(0);
      expect(replay.json).toMatchObject({ matches: true, runHash: r.json!["runHash"], expectedRunHash: r.json!["runHash"] });
      const noExec = await cli(["replay", capsule, "--no-exec", "--json"]);
      expect(noExec.code).toBe(0);
      const verify = await cli(["verify", capsule, "--json"]);
      expect(verify.code, verify.stderr).toBe(0);
      expect(verify.json!["valid"]).toBe(true);
    });
  }

  it("a capsule re-compressed with another gzip (level 9, a file name, a time) still verifies and replays, and verify says so", async () => {
    const { gunzipSync, gzipSync } = await import("fflate");
    const r = await cli(["run", "packs/hello", "--unrestricted", "--json", "--out", join(scratch, "regz")]);
    const original = readFileSync(r.json!["capsule"] as string);
    const again = join(scratch, "regz", "again.capsule.tar.gz");
    writeFileSync(again, gzipSync(gunzipSync(original), { level: 9, mtime: 1_700_000_000_000, filename: "run.tar" }));
    const v = await cli(["verify", again, "--json"]);
    expect(v.code, v.stderr).toBe(0);
    const checks = v.json!["checks"] as { name: string; ok: boolean; message: string }[];
    expect(checks.find((c) => c.name === "archive")?.message).toMatch(/re-compressed/);
    expect(v.json!["runHash"]).toBe(r.json!["runHash"]);
    expect((await cli(["replay", again, "--json"])).json).toMatchObject({ matches: true });
    const plain = await cli(["verify", r.json!["capsule"] as string, "--json"]);
    expect((plain.json!["checks"] as { name: string }[]).some((c) => c.name === "archive")).toBe(false);
  });

  it("a failed run has a capsule too, and it replays", async () => {
    const r = await cli(["run", "packs/path_escape_fail", "--unrestricted", "--json", "--out", join(scratch, "failed")]);
    expect(r.code).toBe(1);
    expect((await cli(["replay", r.json!["capsule"] as string])).code).toBe(0);
    expect((await cli(["verify", r.json!["capsule"] as string])).code).toBe(0);
  });

  it("Node and Deno write byte-identical capsules for the same run", async () => {
    const node = await cli(["run", "packs/notes", "--unrestricted", "--json", "--out", join(scratch, "rt-node")]);
    const deno = spawnSync(join(root, "node_modules/.bin/deno"), ["run", "--allow-read", "--allow-write", "--allow-env", "--allow-net", "src/cli/main.ts", "run", "packs/notes", "--unrestricted", "--json", "--out", join(scratch, "rt-deno")], { cwd: root, encoding: "utf8" });
    expect(deno.status, deno.stderr).toBe(0);
    const d = JSON.parse(deno.stdout) as { capsule: string; runHash: string };
    expect(d.runHash).toBe(node.json!["runHash"]);
    expect(sha(readFileSync(d.capsule))).toBe(sha(readFileSync(node.json!["capsule"] as string)));
  }, 60_000);

  it("a signed run verifies its run proof and every step proof", async () => {
    const capsule = await signedNotesCapsule();
    const v = await cli(["verify", capsule, "--json"]);
    expect(v.code, v.stderr).toBe(0);
    const names = (v.json!["checks"] as { name: string }[]).map((c) => c.name);
    expect(names).toContain("proof.run.signature");
    expect(names.filter((n) => /^proof\.steps\[\d\]\.signature$/.test(n))).toHaveLength(5);
  });
});

describe("capsule.json validates against the upstream capsule.schema.json and ours", () => {
  it("for every committed capsule", async () => {
    const Ajv2020 = Ajv2020Module.default;
    const addFormats = addFormatsModule.default;
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
    const upstream = ajv.compile(JSON.parse(readFileSync(join(root, "conformance/upstream-schemas/capsule.schema.json"), "utf8")));
    const ours = ajv.compile(JSON.parse(readFileSync(join(root, "conformance/schemas/capsule.schema.json"), "utf8")));
    const { readdirSync } = await import("node:fs");
    for (const folder of readdirSync(join(root, "conformance/capsules"))) {
      const dir = join(root, "conformance/capsules", folder);
      const index = readRunCapsule(readFileSync(join(dir, readdirSync(dir)[0]!))).index;
      const plain = JSON.parse(JSON.stringify(index));
      expect(upstream(plain), `${folder}: ${JSON.stringify(upstream.errors)}`).toBe(true);
      expect(ours(plain), `${folder}: ${JSON.stringify(ours.errors)}`).toBe(true);
    }
  });
});

describe("single-byte damage is found and located (exit 1)", () => {
  it("an event: verify names the entry and, with a forged index, the event index; replay diverges", async () => {
    const r = await cli(["run", "packs/notes", "--unrestricted", "--json", "--out", join(scratch, "dmg")]);
    const capsule = r.json!["capsule"] as string;
    const naive = tamper(capsule, "events.jsonl", (b) => flipByteOfLine(b, 5), false);
    const v1 = await cli(["verify", naive, "--json"]);
    expect(v1.code).toBe(1);
    const failed1 = (v1.json!["checks"] as { ok: boolean; name: string; location?: Record<string, unknown> }[]).filter((c) => !c.ok);
    expect(failed1.find((c) => c.name === "files")?.location).toEqual({ entry: "events.jsonl" });
    expect(failed1.find((c) => c.name === "events")?.location).toMatchObject({ eventIndex: 5 });
    const forged = tamper(capsule, "events.jsonl", (b) => flipByteOfLine(b, 5), true);
    const v2 = await cli(["verify", forged, "--json"]);
    expect(v2.code).toBe(1);
    expect((v2.json!["checks"] as { ok: boolean; name: string; location?: Record<string, unknown> }[]).find((c) => !c.ok)).toMatchObject({ name: "events", location: { eventIndex: 5 } });
    const rp = await cli(["replay", forged, "--json"]);
    expect(rp.code).toBe(1);
    expect(rp.json!["matches"]).toBe(false);
  });

  it("a tape record: verify names it (exit 1); a consistently re-hashed forgery is caught by the run hash's commitments too, by verify and by the standalone verifier, and replay names the step", async () => {
    const r = await cli(["run", "packs/notes", "--unrestricted", "--json", "--out", join(scratch, "tape")]);
    const capsule = r.json!["capsule"] as string;
    // a run's tape commits each host call apart (HASHING.md "Value commitments"): the fs.read call's values are
    // tape/<seq>.json, its tape.jsonl line holds their salted commitments
    const line = dec.decode(readArchive(readFileSync(capsule)).get("tape.jsonl")!).split("\n").find((l) => l.includes('"op":"fs.read"'))!;
    const seq = (JSON.parse(line) as { seq: number }).seq;
    const naive = tamper(capsule, `tape/${seq}.json`, (b) => enc.encode(dec.decode(b).replace('"path":"data/input.txt"', '"path":"data/input.tx7"')), true);
    const v = await cli(["verify", naive, "--json"]);
    expect(v.code, v.stderr).toBe(1);
    expect((v.json!["checks"] as { ok: boolean; name: string }[]).filter((c) => !c.ok).map((c) => c.name)).toEqual(["contents", "tape"]);
    expect((await cli(["replay", naive])).code).toBe(1);
    // a forger who re-commits the call (same salt) and patches capsule.json: the response claims other file bytes
    let commit = "";
    const valued = tamper(capsule, `tape/${seq}.json`, (b) => {
      const call = JSON.parse(dec.decode(b));
      call.response.data = Buffer.from("forged file content\n").toString("base64");
      commit = valueCommit(call.responseSalt, call.response);
      return enc.encode(canonicalize(call) + "\n");
    }, true);
    const forged = tamper(valued, "tape.jsonl", (b) => enc.encode(dec.decode(b).replace(line, canonicalize({ ...JSON.parse(line), responseCommit: commit }))), true);
    const fv = await cli(["verify", forged, "--json"]);
    expect(fv.code).toBe(1); // the run hash commits the tape: the invocation's hostCalls and the body's contents
    expect((fv.json!["checks"] as { ok: boolean; name: string }[]).filter((c) => !c.ok).map((c) => c.name)).toEqual(["contents", "tape"]);
    const standalone = spawnSync(process.execPath, [join(root, "conformance/verifier/verify-capsule.mjs"), forged], { encoding: "utf8" });
    expect(standalone.status, standalone.stdout + standalone.stderr).toBe(1);
    const rp = await cli(["replay", forged, "--json"]);
    expect(rp.code, rp.stderr).toBe(1);
    const div = rp.json!["divergence"] as { code: string; message: string; field: string };
    expect(div.code).toBe("REPLAY_DIVERGENCE");
    expect(div.message).toMatch(/damaged before replay: contents/); // found by hashing, before any tool runs
  });

  it("a blob: verify names the blob", async () => {
    const folder = join(root, "conformance/capsules/http");
    const file = readRunCapsule(readFileSync(join(folder, (await import("node:fs")).readdirSync(folder)[0]!)));
    const blob = [...file.entries.keys()].find((p) => p.startsWith("blobs/"))!;
    const src = join(scratch, "http.capsule.tar.gz");
    writeFileSync(src, readFileSync(join(folder, (await import("node:fs")).readdirSync(folder)[0]!)));
    const forged = tamper(src, blob, (b) => {
      const c = b.slice();
      c[10] = c[10]! ^ 1;
      return c;
    }, true);
    const v = await cli(["verify", forged, "--json"]);
    expect(v.code).toBe(1);
    expect(JSON.stringify((v.json!["checks"] as { ok: boolean }[]).filter((c) => !c.ok))).toContain(blob.slice(6, 22));
    expect((await cli(["replay", forged])).code).toBe(1);
  });

  it("the proof: verify names the failing proof check", async () => {
    const capsule = await signedNotesCapsule();
    const forged = tamper(capsule, "proof.json", (b) => {
      const doc = JSON.parse(dec.decode(b));
      doc.steps[2].signature = doc.steps[2].signature.replace(/^./, (c: string) => (c === "0" ? "1" : "0"));
      return enc.encode(JSON.stringify(doc));
    }, true);
    const v = await cli(["verify", forged, "--json"]);
    expect(v.code).toBe(1);
    expect((v.json!["checks"] as { ok: boolean; name: string }[]).filter((c) => !c.ok).map((c) => c.name)).toEqual(["proof.steps[2].signature"]);
  });
});

describe("malicious and broken capsules are refused with exit 2", () => {
  function rawTar(name: string, typeflag: string, body: Uint8Array, linkname = ""): Uint8Array {
    const h = new Uint8Array(512);
    const put = (s: string, at: number) => h.set(enc.encode(s), at);
    put(name, 0);
    put("0000644\0", 100);
    put("0000000\0", 108);
    put("0000000\0", 116);
    put(body.length.toString(8).padStart(11, "0") + "\0", 124);
    put("00000000000\0", 136);
    put("        ", 148);
    put(typeflag, 156);
    put(linkname, 157);
    put("ustar\0", 257);
    put("00", 263);
    let sum = 0;
    for (const b of h) sum += b;
    put(sum.toString(8).padStart(6, "0") + "\0 ", 148);
    const data = new Uint8Array(Math.ceil(body.length / 512) * 512);
    data.set(body);
    const out = new Uint8Array(512 + data.length + 1024);
    out.set(h);
    out.set(data, 512);
    return out;
  }
  async function gz(tar: Uint8Array): Promise<Uint8Array> {
    const { gzipSync } = await import("fflate");
    return gzipSync(tar, { mtime: 0 });
  }
  const cases: [string, () => Promise<Uint8Array>, RegExp?][] = [
    ["a tar-slip path", () => gz(rawTar("../../etc/passwd", "0", enc.encode("x")))],
    ["an absolute path", () => gz(rawTar("/etc/passwd", "0", enc.encode("x")))],
    ["a symbolic link", () => gz(rawTar("events.jsonl", "2", new Uint8Array(), "/etc/passwd"))],
    ["a hard link", () => gz(rawTar("events.jsonl", "1", new Uint8Array(), "capsule.json"))],
    // 1.25 GiB of zeros, past the 1 GiB limit (deflate fragments repeated: built in milliseconds, ~1.3 MB)
    ["a gzip bomb", async () => zeroBomb(1280)],
    // ~1 MB whose tar headers declare ~1 GiB: refused at the first header by the inflation ratio
    ["a small capsule declaring a gigabyte", async () => tarBomb([["a", 511], ["b", 511]]), /REPLAY_CAPSULE_TOO_LARGE: .*limits\.maxInflationRatio/],
    ["not a gzip file", async () => enc.encode("hello")],
  ];
  for (const [name, make, says] of cases) {
    it(name, async () => {
      const file = join(scratch, `bad-${name.replace(/\W/g, "_")}.capsule.tar.gz`);
      writeFileSync(file, await make());
      const started = performance.now();
      for (const cmd of ["verify", "replay"]) {
        const r = await cli([cmd, file, "--json"]);
        expect(r.code, `${cmd}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toMatch(says ?? /REPLAY_CAPSULE_(INVALID|TOO_LARGE)/);
      }
      expect(performance.now() - started).toBeLessThan(30_000);
    }, 60_000);
  }

  it("truncating a real capsule at every offset is refused every time, quickly", async () => {
    const folder = join(root, "conformance/capsules/hello");
    const bytes = readFileSync(join(folder, readdirSync(folder)[0]!));
    const started = performance.now();
    for (let n = 0; n < bytes.length; n++) {
      if (n % 256 === 0) await breathe();
      let code = "accepted";
      try {
        readRunCapsule(bytes.subarray(0, n));
      } catch (err) {
        code = err instanceof ReachError ? err.code : `not a ReachError: ${String(err)}`;
      }
      if (code !== "REPLAY_CAPSULE_INVALID") expect.fail(`truncated at ${n} of ${bytes.length}: ${code}`);
    }
    expect(performance.now() - started).toBeLessThan(120_000);
  }, 180_000);

  it("flipping any single byte of a real capsule is refused or detected, never a crash", async () => {
    const { verifyRunCapsule } = await import("../src/engine/verify.ts");
    const folder = join(root, "conformance/capsules/hello");
    const bytes = new Uint8Array(readFileSync(join(folder, readdirSync(folder)[0]!)));
    const original = readArchive(bytes);
    const same = (m: Map<string, Uint8Array>): boolean => m.size === original.size && [...m].every(([p, b]) => original.has(p) && sha(original.get(p)!) === sha(b));
    let unchanged = 0;
    for (let i = 0; i < bytes.length; i++) {
      if (i % 256 === 0) await breathe();
      const c = bytes.slice();
      c[i] = c[i]! ^ 0x20;
      let outcome = "accepted";
      try {
        const capsule = readRunCapsule(c);
        outcome = verifyRunCapsule(capsule).valid ? (same(readArchive(c)) ? "unchanged" : "accepted") : "detected";
        if (outcome === "unchanged") unchanged++; // deflate can encode the same bytes two ways: nothing was damaged
      } catch (err) {
        outcome = err instanceof ReachError ? "refused" : `crash: ${String(err)}`;
      }
      if (outcome === "accepted" || outcome.startsWith("crash")) expect.fail(`byte ${i}: ${outcome}`);
    }
    expect(unchanged).toBeLessThan(bytes.length / 20);
  }, 180_000);
});
