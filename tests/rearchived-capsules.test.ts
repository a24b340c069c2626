// A capsule re-archived by the standard tools people run — GNU tar (ustar, pax, gnu formats), bsdtar (its default,
// pax, ustar, gnutar), Python's tarfile (pax, GNU, ustar, shutil.make_archive), gzip -9 with a file name, several gzip
// members — reads with the same entries, verifies with the same run hash, and `verify`, `replay`, `show`, `diff` and
// `report` give the same verdicts as on the capsule reach-wasm wrote; `verify` says it is not in canonical form
// (human output and `canonicalArchive` in --json). The archives are made here, from the extracted committed
// capsules, by the real tools (CI installs them, .ci/run; elsewhere a missing tool skips its variants). One verify
// runs through the Deno entry.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fixedEntries } from "../src/capsule/_test-tar.ts";
import { archiveIsCanonical, readArchive } from "../src/capsule/archive.ts";
import { runCapsuleFromEntries } from "../src/capsule/run-capsule.ts";
import { verifyRunCapsule } from "../src/engine/verify.ts";
import { cli, ROOT } from "./_test-report.ts";
import { cliBundle } from "./support/service.ts";

const scratch = mkdtempSync(join(tmpdir(), "reach-rearchived-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const capsuleOf = (folder: string): string => {
  const dir = join(ROOT, "conformance/capsules", folder);
  return join(dir, readdirSync(dir).find((f) => f.endsWith(".capsule.tar.gz"))!);
};

/** Whether a tool runs here; on CI every one must (.ci/run installs them), elsewhere its variants are skipped. */
function have(tool: string): boolean {
  const ok = spawnSync(tool, ["--version"], { encoding: "utf8" }).status === 0;
  if (!ok && process.env.CI) throw new Error(`${tool} is missing; .ci/run installs it (apt: tar, libarchive-tools, python3, gzip)`);
  return ok;
}
const TOOLS = { tar: have("tar"), bsdtar: have("bsdtar"), python3: have("python3"), gzip: have("gzip") };

/** Python writing `dir` (as `./…` names, directories included) to `out`. */
const python = (format: string) => (dir: string, out: string) =>
  ["python3", "-c", `import sys, tarfile\nwith tarfile.open(sys.argv[2], "w:gz", format=tarfile.${format}) as t: t.add(sys.argv[1], arcname=".")`, dir, out];

/** Each producer: the tool it needs, and the shell words that archive directory `dir` into `out`. */
const PRODUCERS: Record<string, { tool: keyof typeof TOOLS; argv: (dir: string, out: string) => string[] }> = {
  "gnu-ustar": { tool: "tar", argv: (d, o) => ["tar", "--format=ustar", "-czf", o, "-C", d, "."] },
  "gnu-pax": { tool: "tar", argv: (d, o) => ["tar", "--format=pax", "-czf", o, "-C", d, "."] },
  "gnu-gnu": { tool: "tar", argv: (d, o) => ["tar", "--format=gnu", "-czf", o, "-C", d, "."] },
  "gnu-default-top-level-names": { tool: "tar", argv: (d, o) => ["bash", "-c", `cd "$1" && tar -czf "$2" *`, "-", d, o] },
  "gnu-reproducible-gzip-9-fname": { tool: "gzip", argv: (d, o) => ["bash", "-c", 'set -e; t="${2%.gz}"; tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=pax --pax-option=delete=atime,delete=ctime -cf "$t" -C "$1" .; gzip -9 "$t"', "-", d, o] },
  "gnu-two-gzip-members": { tool: "gzip", argv: (d, o) => ["bash", "-c", 'set -e; tar -cf "$2.tar" -C "$1" .; n=$(( $(stat -c %s "$2.tar") / 2 )); head -c $n "$2.tar" | gzip -c > "$2"; tail -c +$((n + 1)) "$2.tar" | gzip -9 -c >> "$2"', "-", d, o] },
  "bsdtar-default": { tool: "bsdtar", argv: (d, o) => ["bsdtar", "-czf", o, "-C", d, "."] },
  "bsdtar-pax": { tool: "bsdtar", argv: (d, o) => ["bsdtar", "--format=pax", "-czf", o, "-C", d, "."] },
  "bsdtar-ustar": { tool: "bsdtar", argv: (d, o) => ["bsdtar", "--format=ustar", "-czf", o, "-C", d, "."] },
  "bsdtar-gnutar": { tool: "bsdtar", argv: (d, o) => ["bsdtar", "--format=gnutar", "-czf", o, "-C", d, "."] },
  "python-pax": { tool: "python3", argv: python("PAX_FORMAT") },
  "python-gnu": { tool: "python3", argv: python("GNU_FORMAT") },
  "python-ustar": { tool: "python3", argv: python("USTAR_FORMAT") },
  "python-make-archive": { tool: "python3", argv: (d, o) => ["python3", "-c", "import shutil, sys\nshutil.make_archive(sys.argv[2][:-7], 'gztar', sys.argv[1])", d, o] },
};
const available = Object.entries(PRODUCERS).filter(([, p]) => TOOLS[p.tool] && TOOLS.tar);

/**
 * Write `entries` under a fresh directory, then archive it with every available producer.
 * @returns producer → archive file
 */
function rearchive(label: string, entries: ReadonlyMap<string, Uint8Array>): Map<string, string> {
  const dir = join(scratch, label, "files");
  for (const [path, bytes] of entries) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), bytes);
  }
  const out = new Map<string, string>();
  for (const [name, p] of available) {
    const file = join(scratch, label, `${name}.capsule.tar.gz`);
    const [cmd, ...args] = p.argv(dir, file);
    const r = spawnSync(cmd!, args, { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${name}: ${cmd} exited ${r.status}: ${r.stderr}`);
    out.set(name, file);
  }
  return out;
}

const copies = new Map<string, Map<string, string>>();
/** The committed capsule `folder`, extracted and re-archived by every producer (made once per file). */
function copiesOf(folder: string): Map<string, string> {
  if (!copies.has(folder)) copies.set(folder, rearchive(folder, readArchive(readFileSync(capsuleOf(folder)))));
  return copies.get(folder)!;
}
const read = (file: string): Map<string, Uint8Array> => readArchive(readFileSync(file));

function expectSameEntries(got: ReadonlyMap<string, Uint8Array>, want: ReadonlyMap<string, Uint8Array>, label: string): void {
  expect([...got.keys()], label).toEqual([...want.keys()]);
  for (const [path, bytes] of want) expect(Buffer.from(got.get(path)!).equals(Buffer.from(bytes)), `${label}: ${path}`).toBe(true);
}

describe("archives written by GNU tar, bsdtar and Python's tarfile", () => {
  it("the tools are here (on CI all of them), and they really write other formats than ours", () => {
    expect(available.length).toBeGreaterThan(0);
    if (process.env.CI) expect(available.length).toBe(Object.keys(PRODUCERS).length);
  });

  it("read as the same entries — long paths too (GNU long names, pax paths, ustar prefixes) — and none is canonical", () => {
    const want = new Map(fixedEntries().sort((a, b) => (a.path < b.path ? -1 : 1)).map((e) => [e.path, e.bytes] as const));
    for (const [name, file] of rearchive("fixed", want)) {
      const bytes = readFileSync(file);
      const got = readArchive(bytes);
      expectSameEntries(got, want, name);
      expect(archiveIsCanonical(bytes, got), name).toBe(false);
    }
  });

  for (const folder of ["hello", "notes-signed", "return_spec_fail"]) {
    it(`capsules/${folder}: every re-archived copy verifies with the recorded run hash and the same checks`, () => {
      const original = read(capsuleOf(folder));
      const want = verifyRunCapsule(runCapsuleFromEntries(new Map(original)));
      for (const [name, file] of copiesOf(folder)) {
        const entries = read(file);
        expectSameEntries(entries, original, name);
        const got = verifyRunCapsule(runCapsuleFromEntries(entries));
        expect({ valid: got.valid, runHash: got.runHash, checks: got.checks }, name).toEqual({ valid: want.valid, runHash: want.runHash, checks: want.checks });
      }
    });
  }
});

describe("the standalone verifier (conformance/verifier/verify-capsule.mjs) on re-archived capsules", () => {
  it("capsules/notes-signed: every copy is valid with the recorded run hash and its proofs; a copy with a link is refused", () => {
    const verifier = join(ROOT, "conformance/verifier/verify-capsule.mjs");
    const want = capsuleOf("notes-signed").split("/").pop()!.slice(0, 64);
    for (const [name, file] of copiesOf("notes-signed")) {
      const r = spawnSync(process.execPath, [verifier, file], { encoding: "utf8" });
      expect(r.status, `${name}: ${r.stdout}${r.stderr}`).toBe(0);
      expect(r.stdout, name).toContain(`valid: run ${want}`);
      expect(r.stdout, name).toMatch(/ok {3}proof\.run/);
    }
    if (!TOOLS.tar) return;
    const dir = join(scratch, "notes-signed", "files");
    const linked = join(scratch, "linked.capsule.tar.gz");
    const made = spawnSync("bash", ["-c", 'set -e; cd "$1"; ln -sf events.jsonl link.jsonl; tar --format=pax -czf "$2" .; rm link.jsonl', "-", dir, linked], { encoding: "utf8" });
    expect(made.status, made.stderr).toBe(0);
    const refused = spawnSync(process.execPath, [verifier, linked], { encoding: "utf8" });
    expect(refused.status, refused.stdout + refused.stderr).toBe(2);
    expect(refused.stdout + refused.stderr).toMatch(/refusing entry "link\.jsonl"/);
  });
});

describe("verify, replay, show, diff and report on re-archived capsules (same verdicts)", () => {
  const cases = ["gnu-pax", "bsdtar-default", "python-gnu"].filter((n) => available.some(([a]) => a === n));

  for (const folder of ["hello", "return_spec_fail"]) {
    for (const name of cases) {
      it(`capsules/${folder} by ${name}`, async () => {
        const original = capsuleOf(folder);
        const file = copiesOf(folder).get(name)!;
        const [v0, v1] = [await cli(["verify", original, "--json"]), await cli(["verify", file, "--json"])];
        const [j0, j1] = [JSON.parse(v0.stdout), JSON.parse(v1.stdout)];
        expect(v1.code, v1.stderr).toBe(v0.code);
        expect({ valid: j1.valid, runHash: j1.runHash }).toEqual({ valid: j0.valid, runHash: j0.runHash });
        expect(j0.canonicalArchive).toBe(true);
        expect(j1.canonicalArchive).toBe(false);
        expect(v0.stderr).not.toContain("not in canonical form");
        expect(v1.stderr).toContain("ok   archive: not in canonical form");

        const [r0, r1] = [await cli(["replay", original, "--json"]), await cli(["replay", file, "--json"])];
        expect(r1.code, r1.stderr).toBe(r0.code);
        const [p0, p1] = [JSON.parse(r0.stdout), JSON.parse(r1.stdout)];
        expect({ matches: p1.matches, runHash: p1.runHash, status: p1.status }).toEqual({ matches: p0.matches, runHash: p0.runHash, status: p0.status });

        const [s0, s1] = [await cli(["show", original, "--json"]), await cli(["show", file, "--json"])];
        expect(s1.code).toBe(s0.code);
        expect(s1.stdout).toBe(s0.stdout);

        const d = await cli(["diff", original, file, "--json"]);
        expect(d.code, d.stderr).toBe(0);
        expect(JSON.parse(d.stdout)).toMatchObject({ identical: true });

        const out = join(scratch, `${folder}-${name}.html`);
        const rep = await cli(["report", file, "--out", out, "--json"]);
        const rep0 = await cli(["report", original, "--out", `${out}.orig.html`, "--json"]);
        expect(rep.code, rep.stderr).toBe(rep0.code);
        const [q0, q1] = [JSON.parse(rep0.stdout), JSON.parse(rep.stdout)];
        expect({ runHash: q1.runHash, status: q1.status, verified: q1.verified }).toEqual({ runHash: q0.runHash, status: q0.status, verified: q0.verified });
      }, 60_000);
    }
  }
});

describe("the Deno entry", () => {
  it("verifies a capsule re-archived by GNU tar (pax format), with the same run hash", async () => {
    if (!TOOLS.tar) return;
    const file = copiesOf("hello").get("gnu-pax")!;
    const bundle = await cliBundle();
    try {
      const r = spawnSync(join(ROOT, "node_modules/.bin/deno"), ["run", "-A", "--quiet", bundle.deno, "verify", file, "--json"], { cwd: ROOT, encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      const json = JSON.parse(r.stdout);
      expect(json).toMatchObject({ valid: true, canonicalArchive: false, runHash: capsuleOf("hello").split("/").pop()!.slice(0, 64) });
      expect(r.stderr).toContain("not in canonical form");
    } finally {
      bundle.remove();
    }
  }, 180_000);
});
