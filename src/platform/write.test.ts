import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { narrowTree, privateDir } from "./_safe-fs.ts";
import { writeDirAtomic, writeFileAtomic } from "./write.ts";

let base: string;
beforeEach(() => (base = mkdtempSync(join(tmpdir(), "reach-write-"))));
afterEach(() => rmSync(base, { recursive: true, force: true }));

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Every file under `dir`, relative path → text. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out[join(e.parentPath, e.name).slice(dir.length + 1)] = readFileSync(join(e.parentPath, e.name), "utf8");
  }
  return out;
}

describe("writeDirAtomic", () => {
  it("replaces a directory whole: the old files and folders go, nothing is left beside it", async () => {
    const dir = join(base, "runs", "r");
    await writeDirAtomic(dir, new Map([["a.json", enc("1")], ["deep/x/y.txt", enc("old")], ["gone.txt", enc("x")]]));
    await writeDirAtomic(dir, new Map([["a.json", enc("2")], ["deep/z.txt", enc("new")]]));
    expect(tree(dir)).toEqual({ "a.json": "2", "deep/z.txt": "new" });
    expect(readdirSync(join(base, "runs"))).toEqual(["r"]);
  });
});

const mode = (p: string): number => lstatSync(p).mode & 0o777;

/** A folder outside the one given, with files a planted link must never let reach-wasm touch. */
function victim(): string {
  const v = join(base, "victim");
  mkdirSync(join(v, "sub"), { recursive: true });
  writeFileSync(join(v, "precious.txt"), "keep me");
  writeFileSync(join(v, "sub", "also.txt"), "me too");
  return v;
}

describe("no write follows a link or leaves the folder it was given", () => {
  it("a link planted at OUT/runs/<hash> is refused: nothing under its target is removed or written", async () => {
    const out = join(base, "out");
    const v = victim();
    mkdirSync(join(out, "runs"), { recursive: true });
    symlinkSync(v, join(out, "runs", "r"));
    const err = await writeDirAtomic(join(out, "runs", "r"), new Map([["a.json", enc("new")]]), { within: out, mode: 0o600 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReachError);
    expect((err as ReachError).message).toMatch(/is a symbolic link; reach-wasm never writes or removes through a link/);
    expect(tree(v)).toEqual({ "precious.txt": "keep me", "sub/also.txt": "me too" });
    expect(lstatSync(join(out, "runs", "r")).isSymbolicLink()).toBe(true);
    expect(readdirSync(join(out, "runs"))).toEqual(["r"]); // no temporary folder left beside it
  });

  it("a link at OUT/runs itself, or at the file, is refused; a dangling link is never created through", async () => {
    const out = join(base, "out");
    const v = victim();
    mkdirSync(out);
    symlinkSync(v, join(out, "runs"));
    await expect(writeDirAtomic(join(out, "runs", "r"), new Map([["a", enc("x")]]), { within: out, mode: 0o600 })).rejects.toThrow(/runs" is a symbolic link/);
    symlinkSync(join(v, "precious.txt"), join(out, "c.capsule.tar.gz"));
    await expect(writeFileAtomic(join(out, "c.capsule.tar.gz"), enc("evil"), 0o600, { within: out })).rejects.toThrow(/is a symbolic link/);
    symlinkSync(join(v, "new.txt"), join(out, "dangling"));
    await expect(writeFileAtomic(join(out, "dangling"), enc("evil"))).rejects.toThrow(ReachError);
    expect(tree(v)).toEqual({ "precious.txt": "keep me", "sub/also.txt": "me too" });
    expect(readdirSync(out).sort()).toEqual(["c.capsule.tar.gz", "dangling", "runs"]);
  });

  it("replacing a run folder never descends through a link inside the old one", async () => {
    const out = join(base, "out");
    const v = victim();
    await writeDirAtomic(join(out, "runs", "r"), new Map([["a.json", enc("1")]]), { within: out, mode: 0o600 });
    symlinkSync(v, join(out, "runs", "r", "planted"));
    await writeDirAtomic(join(out, "runs", "r"), new Map([["a.json", enc("2")]]), { within: out, mode: 0o600 });
    expect(tree(join(out, "runs", "r"))).toEqual({ "a.json": "2" });
    expect(tree(v)).toEqual({ "precious.txt": "keep me", "sub/also.txt": "me too" });
  });

  it("names from outside (a run file's path, a folder below the one given) are checked before they touch a path", async () => {
    const out = join(base, "out");
    for (const bad of ["../x", "/abs", "a/../../x", "a\u0000b", "a\nb", "a\\b", "", "a//b", "."]) {
      const err = await writeDirAtomic(join(out, "runs", "r"), new Map([[bad, enc("x")]]), { within: out, mode: 0o600 }).catch((e: unknown) => e);
      expect(err, JSON.stringify(bad)).toBeInstanceOf(ReachError);
    }
    await expect(writeFileAtomic(join(base, "elsewhere.txt"), enc("x"), 0o600, { within: out })).rejects.toThrow(/is not inside/);
    await expect(writeFileAtomic(join(out, "a\u001b]52;c;x\u0007"), enc("x"), 0o600, { within: out })).rejects.toThrow(/control character/);
    expect(readdirSync(base).sort()).toEqual(["out"]);
    expect(tree(out)).toEqual({});
  });
});

describe("file modes regardless of umask", () => {
  let umask: number;
  beforeEach(() => (umask = process.umask(0)));
  afterEach(() => void process.umask(umask));

  it("private files are 0600 in 0700 folders, others 0644/0755 (scripts 0755), exactly, under umask 000", async () => {
    const out = join(base, "out");
    await writeFileAtomic(join(out, "k", "x.key"), enc("secret"), 0o600);
    expect([mode(join(out, "k")), mode(join(out, "k", "x.key"))]).toEqual([0o700, 0o600]);
    await writeDirAtomic(join(out, "runs", "r"), new Map([["a.json", enc("1")], ["d/e.txt", enc("2")]]), { within: out, mode: 0o600 });
    expect([join(out, "runs"), join(out, "runs", "r"), join(out, "runs", "r", "d")].map(mode)).toEqual([0o700, 0o700, 0o700]);
    expect([join(out, "runs", "r", "a.json"), join(out, "runs", "r", "d", "e.txt")].map(mode)).toEqual([0o600, 0o600]);
    await writeDirAtomic(join(base, "pack"), new Map([["reach.json", enc("{}")], ["build.sh", enc("#!/bin/sh\n")]]), { executable: new Set(["build.sh"]) });
    expect([join(base, "pack"), join(base, "pack", "reach.json"), join(base, "pack", "build.sh")].map(mode)).toEqual([0o755, 0o644, 0o755]);
  });

  it("an existing private folder of this user's that others can read is narrowed to 0700; a link is refused", async () => {
    const out = join(base, "out");
    mkdirSync(join(out, "runs"), { recursive: true, mode: 0o777 });
    chmodSync(join(out, "runs"), 0o777);
    await writeDirAtomic(join(out, "runs", "r"), new Map([["a", enc("1")]]), { within: out, mode: 0o600 });
    expect(mode(join(out, "runs"))).toBe(0o700);
    const store = join(base, "store");
    mkdirSync(store, { mode: 0o755 });
    chmodSync(store, 0o755);
    writeFileSync(join(store, "wal"), "tenant input");
    chmodSync(join(store, "wal"), 0o666);
    let warned = "";
    privateDir(store, "the store", (m) => void (warned += m));
    expect(warned).toMatch(/was readable by other users; it is 0700 now/);
    expect(mode(store)).toBe(0o700);
    expect(narrowTree(store, 0o700, 0o600)).toBe(1);
    expect(mode(join(store, "wal"))).toBe(0o600);
    symlinkSync(store, join(base, "link"));
    expect(() => privateDir(join(base, "link"), "the store", () => {})).toThrow(/is a symbolic link/);
  });
});
