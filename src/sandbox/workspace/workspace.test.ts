import { describe, expect, it } from "vitest";
import { ReachError } from "../../protocol/errors.ts";
import { sha256Hex } from "../../canonical/sha256.ts";
import { Workspace, WorkspaceError } from "./workspace.ts";
import type { WorkspaceView } from "./workspace.ts";

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

function caught(fn: () => unknown): ReachError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ReachError);
    return err as ReachError;
  }
  throw new Error("expected an error");
}

function expectViolation(fn: () => unknown, type: "RESOURCE_ACCESS" | "PERMISSION_DENIED"): ReachError {
  const err = caught(fn);
  expect(err.code).toBe("POLICY_VIOLATION");
  expect(err.details["violationType"]).toBe(type);
  return err;
}

function expectErrno(fn: () => unknown, errno: string): void {
  const err = caught(fn);
  expect(err).toBeInstanceOf(WorkspaceError);
  expect((err as WorkspaceError).errno).toBe(errno);
  expect(err.code).toBe("EXEC_RESOURCE_UNAVAILABLE");
}

/** A run-like workspace with a read-only, a write-only and a read-write root, plus links planted for the corpus. */
function runWorkspace(): Workspace {
  const ws = Workspace.fromResources([
    { root: "data", access: "read", files: { "in.txt": enc("input"), "sub/deep.txt": enc("deep") } },
    { root: "out", access: "readwrite" },
    { root: "drop", access: "write" },
  ]);
  const step = ws.beginStep();
  step.symlink("out/root", "/");
  step.symlink("out/up", "../..");
  step.symlink("out/loop", "loop");
  step.symlink("out/a", "b");
  step.symlink("out/b", "a");
  step.symlink("temp/dot", ".");
  step.write("out/keep.txt", enc("keep"));
  step.commit();
  return ws;
}

/** Everything observable about a view: digest plus a recursive listing (directories and links included). */
function fingerprint(v: WorkspaceView): string {
  const walk = (dir: string): string[] =>
    v.list(dir).flatMap((e) => {
      const p = dir === "" ? e.name : `${dir}/${e.name}`;
      return [`${e.type}:${p}:${e.size}`, ...(e.type === "dir" && isReadable(v, p) ? walk(p) : [])];
    });
  return v.digest() + "\n" + walk("").join("\n");
}
function isReadable(v: WorkspaceView, p: string): boolean {
  try {
    v.list(p);
    return true;
  } catch {
    return false;
  }
}

describe("path corpus (seed 003 §4.2): refused with RESOURCE_ACCESS, workspace unchanged", () => {
  // Links that stay inside the workspace (out/root → "/", loops, temp/dot → ".") are followed: see links.test.ts.
  const corpus = [
    "..",
    "../x",
    "/etc/passwd",
    "/",
    "out/../data/in.txt",
    "a/../../x",
    "out/../../x",
    "out\\x",
    "..\\out\\x",
    "out/x\u0000.txt",
    "out/x\n",
    "out/keep.txt/",
    "out/" + "n".repeat(256),
    "out/" + "d/".repeat(64) + "x",
    "out/root/etc/passwd",
    "out/up",
    "out/up/x",
    "nowhere.txt",
    "etc/passwd",
  ];
  const ops: Array<[string, (v: WorkspaceView, p: string) => unknown]> = [
    ["read", (v, p) => v.read(p)],
    ["write", (v, p) => v.write(p, enc("evil"))],
    ["stat", (v, p) => v.stat(p)],
    ["exists", (v, p) => v.exists(p)],
    ["mkdir", (v, p) => v.mkdir(p + "/sub")],
    ["list", (v, p) => v.list(p + "/")],
  ];
  for (const path of corpus) {
    it(`refuses ${JSON.stringify(path.slice(0, 50))}`, () => {
      const ws = runWorkspace();
      const before = fingerprint(ws);
      // read, write and stat refuse every entry of the corpus, on the base and inside a step
      for (const [, op] of ops.slice(0, 3)) expectViolation(() => op(ws, path), "RESOURCE_ACCESS");
      const step = ws.beginStep();
      step.write("out/new.txt", enc("staged"));
      for (const [, op] of ops.slice(0, 3)) expectViolation(() => op(step, path), "RESOURCE_ACCESS");
      expect(step.violation()?.details["violationType"]).toBe("RESOURCE_ACCESS");
      // a step that hit a violation cannot be committed: it is rolled back
      expect(caught(() => step.commit()).code).toBe("PROTO_SEQUENCE_ERROR");
      expect(step.isOpen()).toBe(false);
      expect(fingerprint(ws)).toBe(before);
      expect(ws.exists("out/new.txt")).toBe(false);
    });
  }

  it("refuses a trailing '/' on a file path (a missing one is simply not found by stat)", () => {
    const ws = runWorkspace();
    const before = fingerprint(ws);
    expectViolation(() => ws.write("out/x.txt/", enc("x")), "RESOURCE_ACCESS");
    expectViolation(() => ws.read("out/x.txt/"), "RESOURCE_ACCESS");
    expectViolation(() => ws.symlink("out/x.txt/", "y"), "RESOURCE_ACCESS");
    expectViolation(() => ws.remove("out/keep.txt/"), "RESOURCE_ACCESS");
    expectErrno(() => ws.stat("out/x.txt/"), "ENOENT");
    expect(fingerprint(ws)).toBe(before);
  });

  it("refuses the corpus for every other operation too", () => {
    const ws = runWorkspace();
    const before = fingerprint(ws);
    for (const path of ["..", "/etc/passwd", "a/../../x", "out/root/x", "out/up/x", "out\\x", "out/x\u0000"]) {
      for (const [name, op] of ops) {
        const err = caught(() => op(ws, path));
        expect(err.details["violationType"], `${name} ${path}`).toBe("RESOURCE_ACCESS");
      }
      expect(caught(() => ws.remove(path)).details["violationType"]).toBe("RESOURCE_ACCESS");
      expect(caught(() => ws.symlink(path, "x")).details["violationType"]).toBe("RESOURCE_ACCESS");
    }
    expect(fingerprint(ws)).toBe(before);
  });

  it("lists links as records and removes the link itself, never its target", () => {
    const ws = runWorkspace();
    expect(ws.list("out").map((e) => `${e.name}:${e.type}`)).toEqual([
      "a:symlink",
      "b:symlink",
      "keep.txt:file",
      "loop:symlink",
      "root:symlink",
      "up:symlink",
    ]);
    const step = ws.beginStep();
    step.remove("out/root");
    step.commit();
    expect(ws.list("out").map((e) => e.name)).not.toContain("root");
    expect(ws.read("data/in.txt")).toEqual(enc("input"));
  });
});

describe("confinement to declared resources", () => {
  it("refuses paths outside every root with RESOURCE_ACCESS", () => {
    const ws = runWorkspace();
    expectViolation(() => ws.write("elsewhere/x", enc("x")), "RESOURCE_ACCESS");
    expectViolation(() => ws.write("x", enc("x")), "RESOURCE_ACCESS");
    expectViolation(() => ws.read("database/x"), "RESOURCE_ACCESS");
    expectViolation(() => ws.mkdir(""), "RESOURCE_ACCESS");
  });

  it("enforces read-only roots with PERMISSION_DENIED and leaves them unchanged", () => {
    const ws = runWorkspace();
    const before = fingerprint(ws);
    const step = ws.beginStep();
    const err = expectViolation(() => step.write("data/in.txt", enc("overwritten")), "PERMISSION_DENIED");
    expect(err.details).toMatchObject({ root: "data", access: "read", path: "data/in.txt" });
    expect(err.details["attemptedCapability"]).toBe("fs.write:data/in.txt");
    expectViolation(() => step.write("data/new.txt", enc("x")), "PERMISSION_DENIED");
    expectViolation(() => step.mkdir("data/new"), "PERMISSION_DENIED");
    expectViolation(() => step.remove("data/in.txt"), "PERMISSION_DENIED");
    expectViolation(() => step.remove("data/sub", { recursive: true }), "PERMISSION_DENIED");
    expectViolation(() => step.symlink("data/l", "in.txt"), "PERMISSION_DENIED");
    expect(dec(step.read("data/in.txt"))).toBe("input");
    step.rollback();
    expect(fingerprint(ws)).toBe(before);
  });

  it("enforces write-only roots", () => {
    const ws = runWorkspace();
    const step = ws.beginStep();
    step.write("drop/report.txt", enc("r"));
    expectViolation(() => step.read("drop/report.txt"), "PERMISSION_DENIED");
    expectViolation(() => step.list("drop"), "PERMISSION_DENIED");
    step.rollback();
  });

  it("keeps temp/ always read-write and reserves its name", () => {
    const ws = Workspace.fromResources([]);
    ws.write("temp/a/b.txt", enc("t"));
    expect(dec(ws.read("temp/a/b.txt"))).toBe("t");
    expect(ws.list("").map((e) => e.name)).toEqual(["temp"]);
    expect(() => Workspace.fromResources([{ root: "temp", access: "read" }])).toThrow(/reserved/);
  });

  it("lets directories above roots be listed but never written or removed", () => {
    const ws = Workspace.fromResources([{ root: "in/csv", access: "read", files: { "x.csv": enc("1") } }]);
    expect(ws.list("").map((e) => e.name)).toEqual(["in", "temp"]);
    expect(ws.list("in")).toEqual([{ name: "csv", type: "dir", size: 0 }]);
    expect(ws.stat("in")).toEqual({ type: "dir", size: 0 });
    expectViolation(() => ws.write("in/other.txt", enc("x")), "RESOURCE_ACCESS");
    expectViolation(() => ws.remove("in", { recursive: true }), "PERMISSION_DENIED");
    expectViolation(() => ws.remove("temp"), "PERMISSION_DENIED");
    expectViolation(() => ws.remove(""), "PERMISSION_DENIED");
  });

  it("uses the longest matching root when roots nest", () => {
    const ws = Workspace.fromResources([
      { root: "data", access: "read" },
      { root: "data/out", access: "readwrite" },
    ]);
    ws.write("data/out/r.txt", enc("ok"));
    expectViolation(() => ws.write("data/r.txt", enc("no")), "PERMISSION_DENIED");
    expectViolation(() => ws.remove("data/out"), "PERMISSION_DENIED");
  });

  it("rejects malformed resource declarations", () => {
    expect(() => Workspace.fromResources([{ root: "", access: "read" }])).toThrow(TypeError);
    expect(() => Workspace.fromResources([{ root: "a", access: "all" as "read" }])).toThrow(TypeError);
    expect(() => Workspace.fromResources([{ root: "a", access: "read" }, { root: "a/", access: "write" }])).toThrow(/twice/);
    expect(caught(() => Workspace.fromResources([{ root: "../a", access: "read" }])).details["violationType"]).toBe(
      "RESOURCE_ACCESS",
    );
    expect(caught(() => Workspace.fromResources([{ root: "a", access: "read", files: { "../x": enc("") } }])).code).toBe(
      "POLICY_VIOLATION",
    );
  });
});

describe("file-system semantics", () => {
  it("reads, writes, lists, stats and removes", () => {
    const ws = new Workspace();
    ws.write("a/b/c.txt", enc("hello"));
    expect(dec(ws.read("a/b/c.txt"))).toBe("hello");
    expect(ws.stat("a/b")).toEqual({ type: "dir", size: 0 });
    expect(ws.stat("a/b/c.txt")).toEqual({ type: "file", size: 5 });
    expect(ws.exists("a/b/")).toBe(true);
    expect(ws.exists("a/x")).toBe(false);
    expect(ws.exists("a/b/c.txt/x")).toBe(false);
    expectErrno(() => ws.read("a/b"), "EISDIR");
    expectErrno(() => ws.read("missing"), "ENOENT");
    expectErrno(() => ws.write("a/b/c.txt/d", enc("")), "ENOTDIR");
    expectErrno(() => ws.write("a/b", enc("")), "EISDIR");
    expectErrno(() => ws.mkdir("a/b/c.txt"), "EEXIST");
    expectErrno(() => ws.list("a/b/c.txt"), "ENOTDIR");
    expectErrno(() => ws.remove("a"), "ENOTEMPTY");
    ws.remove("a", { recursive: true });
    expect(ws.list("")).toEqual([]);
    expect(ws.bytesUsed()).toBe(0);
  });

  it("copies bytes in and out", () => {
    const ws = new Workspace();
    const data = enc("abc");
    ws.write("f", data);
    data[0] = 0x7a;
    const out = ws.read("f");
    out[1] = 0x7a;
    expect(dec(ws.read("f"))).toBe("abc");
  });

  it("lists deterministically in code-unit order", () => {
    const names = ["b", "B", "a", "~x", "_", "a.txt", "a-", "A", "10", "9", " sp"];
    const ws1 = new Workspace();
    const ws2 = new Workspace();
    for (const n of names) ws1.write(`d/${n}`, enc(n));
    for (const n of [...names].reverse()) ws2.write(`d/${n}`, enc(n));
    const expected = [" sp", "10", "9", "A", "B", "_", "a", "a-", "a.txt", "b", "~x"];
    expect(ws1.list("d").map((e) => e.name)).toEqual(expected);
    expect(ws2.list("d").map((e) => e.name)).toEqual(expected);
    expect(ws1.snapshot()).toEqual(ws2.snapshot());
    expect(ws1.digest()).toBe(ws2.digest());
  });

  it("computes the snapshot and the documented digest", () => {
    const ws = new Workspace();
    expect(ws.digest()).toBe(sha256Hex(""));
    ws.write("b.txt", enc("B"));
    ws.write("a/x.txt", enc("AX"));
    ws.mkdir("empty");
    expect(ws.snapshot()).toEqual([
      { path: "a/x.txt", size: 2, sha256: sha256Hex("AX") },
      { path: "b.txt", size: 1, sha256: sha256Hex("B") },
    ]);
    expect(ws.digest()).toBe(sha256Hex(`a/x.txt\0${sha256Hex("AX")}\nb.txt\0${sha256Hex("B")}\n`));
    ws.write("b.txt", enc("C"));
    expect(ws.digest()).not.toBe(sha256Hex(`a/x.txt\0${sha256Hex("AX")}\nb.txt\0${sha256Hex("B")}\n`));
  });
});

describe("staging (seed 003 §4.3)", () => {
  it("shows staged writes to the step only, and applies them on commit", () => {
    const ws = runWorkspace();
    const before = ws.digest();
    const step = ws.beginStep();
    step.write("out/keep.txt", enc("changed"));
    step.write("temp/new/file.txt", enc("n"));
    step.remove("out/loop");
    expect(dec(step.read("out/keep.txt"))).toBe("changed");
    expect(step.exists("temp/new")).toBe(true);
    expect(dec(ws.read("out/keep.txt"))).toBe("keep");
    expect(ws.exists("temp/new")).toBe(false);
    expect(ws.digest()).toBe(before);
    step.commit();
    expect(dec(ws.read("out/keep.txt"))).toBe("changed");
    expect(ws.exists("temp/new/file.txt")).toBe(true);
    expect(ws.list("out").map((e) => e.name)).not.toContain("loop");
    expect(ws.digest()).not.toBe(before);
  });

  it("leaves the base byte-identical after rollback", () => {
    const ws = runWorkspace();
    const before = fingerprint(ws);
    const step = ws.beginStep();
    step.write("out/keep.txt", enc("changed"));
    step.mkdir("temp/dir/sub");
    step.remove("out/loop");
    step.symlink("temp/l", "/");
    step.rollback();
    expect(fingerprint(ws)).toBe(before);
    step.rollback(); // idempotent
  });

  it("rolls back after a failed step that wrote before failing", () => {
    const ws = runWorkspace();
    const before = fingerprint(ws);
    const step = ws.beginStep();
    step.write("out/partial.txt", enc("half"));
    step.remove("out/keep.txt");
    expectViolation(() => step.read("../secret"), "RESOURCE_ACCESS");
    step.rollback();
    expect(fingerprint(ws)).toBe(before);
  });

  it("allows one open transaction at a time and blocks base writes meanwhile", () => {
    const ws = runWorkspace();
    const step = ws.beginStep();
    expect(caught(() => ws.beginStep()).code).toBe("PROTO_SEQUENCE_ERROR");
    expect(caught(() => ws.write("out/x", enc("x"))).code).toBe("PROTO_SEQUENCE_ERROR");
    expect(dec(ws.read("out/keep.txt"))).toBe("keep"); // reads are fine
    expect(ws.inStep()).toBe(true);
    step.commit();
    expect(ws.inStep()).toBe(false);
    expect(caught(() => step.read("out/keep.txt")).code).toBe("PROTO_SEQUENCE_ERROR");
    expect(caught(() => step.commit()).code).toBe("PROTO_SEQUENCE_ERROR");
    const next = ws.beginStep();
    next.rollback();
    ws.write("out/x", enc("x"));
  });

  it("commits an untouched step without changing anything", () => {
    const ws = runWorkspace();
    const before = fingerprint(ws);
    const step = ws.beginStep();
    step.read("data/in.txt");
    step.commit();
    expect(fingerprint(ws)).toBe(before);
  });
});

describe("limits", () => {
  it("refuses a file over maxFileBytes with EXEC_DISK_EXCEEDED and no effect", () => {
    const ws = new Workspace({ maxFileBytes: 10 });
    ws.write("ok", new Uint8Array(10));
    const err = caught(() => ws.write("big/nested/f", new Uint8Array(11)));
    expect(err.code).toBe("EXEC_DISK_EXCEEDED");
    expect(err.details).toMatchObject({ limit: "file", max: 10, attempted: 11 });
    expect(ws.exists("big")).toBe(false);
  });

  it("refuses writes over maxTotalBytes, counting replaced files once", () => {
    const ws = new Workspace({ maxTotalBytes: 20 });
    ws.write("a", new Uint8Array(15));
    ws.write("a", new Uint8Array(20)); // replaces, total 20
    expect(caught(() => ws.write("b", new Uint8Array(1))).details).toMatchObject({ limit: "total", attempted: 21 });
    ws.remove("a");
    ws.write("b", new Uint8Array(20));
    expect(ws.bytesUsed()).toBe(20);
  });

  it("applies limits inside a step against the staged state", () => {
    const ws = new Workspace({ maxTotalBytes: 10 });
    ws.write("a", new Uint8Array(6));
    const step = ws.beginStep();
    step.remove("a");
    step.write("b", new Uint8Array(10));
    expect(caught(() => step.write("c", new Uint8Array(1))).code).toBe("EXEC_DISK_EXCEEDED");
    step.commit(); // a disk error is not a policy violation: the step may still succeed
    expect(ws.snapshot().map((e) => e.path)).toEqual(["b"]);
  });

  it("limits the number of entries", () => {
    const ws = new Workspace({ maxEntries: 3 });
    ws.write("a/b", enc(""));
    expect(caught(() => ws.write("c/d", enc(""))).details).toMatchObject({ limit: "entries" });
    ws.write("c", enc(""));
    expect(caught(() => ws.mkdir("e")).code).toBe("EXEC_DISK_EXCEEDED");
    ws.write("c", enc("replace is fine"));
  });

  it("applies limits to initial resources and checks the options", () => {
    expect(
      caught(() => Workspace.fromResources([{ root: "d", access: "read", files: { x: new Uint8Array(5) } }], { maxFileBytes: 4 }))
        .code,
    ).toBe("EXEC_DISK_EXCEEDED");
    expect(() => new Workspace({ maxFileBytes: 0 })).toThrow(RangeError);
    expect(() => new Workspace({ maxTotalBytes: 1.5 })).toThrow(RangeError);
  });

  it("has the documented defaults", () => {
    const ws = new Workspace();
    ws.write("f", new Uint8Array(64 * 1024 * 1024));
    expect(caught(() => ws.write("g", new Uint8Array(64 * 1024 * 1024 + 1))).details).toMatchObject({
      limit: "file",
      max: 64 * 1024 * 1024,
    });
  });
});

describe("names a capsule cannot record are refused when they are made", () => {
  const refusal = (f: () => void): string => {
    try {
      f();
    } catch (err) {
      expect(err).toBeInstanceOf(WorkspaceError);
      expect((err as WorkspaceError).code).toBe("EXEC_RESOURCE_UNAVAILABLE");
      return (err as WorkspaceError).errno;
    }
    throw new Error("not refused");
  };

  it("a name outside printable ASCII (EILSEQ), by every operation that makes a name; nothing changes", () => {
    const ws = new Workspace();
    ws.write("d/a.txt", enc("a"));
    const before = ws.digest();
    expect(refusal(() => ws.write("d/ü.txt", enc("x")))).toBe("EILSEQ");
    expect(refusal(() => ws.write("日本/a.txt", enc("x")))).toBe("EILSEQ");
    expect(refusal(() => ws.mkdir("d/é"))).toBe("EILSEQ");
    expect(refusal(() => ws.symlink("d/😀", "a.txt"))).toBe("EILSEQ");
    expect(refusal(() => ws.link("d/a.txt", "d/\u00a0"))).toBe("EILSEQ");
    expect(refusal(() => ws.rename("d/a.txt", "d/\uff5e"))).toBe("EILSEQ");
    expect(refusal(() => ws.rename("d", "dé"))).toBe("EILSEQ");
    expect(ws.digest()).toBe(before);
    expect(() => ws.read("d/ü.txt")).toThrow(/no such file/); // reading such a name is an ordinary miss
  });

  it("a name over 100 characters or a path over 239 (ENAMETOOLONG); the longest that fit are taken", () => {
    const ws = new Workspace();
    expect(refusal(() => ws.write(`d/${"n".repeat(101)}`, enc("x")))).toBe("ENAMETOOLONG");
    ws.write(`d/${"n".repeat(100)}`, enc("x"));
    const deep = `${"p".repeat(69)}/${"q".repeat(68)}/${"n".repeat(100)}`; // 239: a ustar prefix of 155 with workspace/before/, a name of 100
    ws.write(deep, enc("x"));
    expect(refusal(() => ws.write(`${deep}x`, enc("x")))).toBe("ENAMETOOLONG");
    expect(refusal(() => ws.mkdir(`m/${"m".repeat(101)}`))).toBe("ENAMETOOLONG");
    // a rename that would take a file below it past the limit is refused as a whole
    ws.write(`r/${"a".repeat(100)}/${"b".repeat(100)}`, enc("x"));
    const before = ws.digest();
    expect(refusal(() => ws.rename("r", "r".repeat(40)))).toBe("ENAMETOOLONG");
    expect(ws.digest()).toBe(before);
  });
});
