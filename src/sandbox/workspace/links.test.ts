import { describe, expect, it } from "vitest";
import { ReachError } from "../../protocol/errors.ts";
import { MAX_LINK_EXPANSIONS, Workspace, WorkspaceError } from "./workspace.ts";
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
const violation = (fn: () => unknown): string => {
  const err = caught(fn);
  expect(err.code).toBe("POLICY_VIOLATION");
  return err.details["violationType"] as string;
};
const errno = (fn: () => unknown): string => {
  const err = caught(fn);
  expect(err).toBeInstanceOf(WorkspaceError);
  return (err as WorkspaceError).errno;
};

/** data: read-only, out: read-write, drop: write-only, temp: read-write; links planted in out/. */
function linked(): Workspace {
  const ws = Workspace.fromResources([
    { root: "data", access: "read", files: { "in.txt": enc("input"), "sub/deep.txt": enc("deep") } },
    { root: "out", access: "readwrite", files: { "ok.txt": enc("ok") } },
    { root: "drop", access: "write" },
  ]);
  const step = ws.beginStep();
  step.symlink("out/in", "../data/in.txt"); // into a read-only root
  step.symlink("out/abs", "/data/sub"); // absolute: from the workspace root
  step.symlink("out/dir", "../data/sub/"); // a directory, trailing slash
  step.symlink("out/self", "ok.txt");
  step.symlink("out/dangling", "new.txt");
  step.symlink("out/root", "/");
  step.symlink("out/up", "../../x");
  step.symlink("out/chain", "../out/../out/./self");
  step.symlink("out/secret", "../undeclared/key");
  step.symlink("out/loop", "loop");
  step.symlink("out/ping", "pong");
  step.symlink("out/pong", "ping");
  step.symlink("out/dropped", "../drop");
  step.commit();
  return ws;
}

/** Digest plus a recursive listing: everything observable. */
function fingerprint(v: WorkspaceView): string {
  const walk = (dir: string): string[] =>
    v.list(dir).flatMap((e) => {
      const p = dir === "" ? e.name : `${dir}/${e.name}`;
      const readable = e.type === "dir" && p !== "drop";
      return [`${e.type}:${p}:${e.size}`, ...(readable ? walk(p) : [])];
    });
  return v.digest() + "\n" + walk("").join("\n");
}

describe("symbolic links are followed inside the workspace", () => {
  it("reads through relative, absolute, directory and chained links", () => {
    const ws = linked();
    expect(dec(ws.read("out/in"))).toBe("input");
    expect(dec(ws.read("out/abs/deep.txt"))).toBe("deep");
    expect(dec(ws.read("out/dir/deep.txt"))).toBe("deep");
    expect(dec(ws.read("out/chain"))).toBe("ok");
    expect(ws.stat("out/in")).toEqual({ type: "file", size: 5 });
    expect(ws.stat("out/dir")).toEqual({ type: "dir", size: 0 });
    expect(ws.list("out/abs").map((e) => e.name)).toEqual(["deep.txt"]);
    expect(ws.list("out/root").map((e) => e.name)).toEqual(["data", "drop", "out", "temp"]); // the root is listable
    expect(ws.exists("out/dangling")).toBe(false);
  });

  it("checks access on the resolved path: a link never widens access", () => {
    const ws = linked();
    const before = fingerprint(ws);
    const step = ws.beginStep();
    expect(violation(() => step.write("out/in", enc("evil")))).toBe("PERMISSION_DENIED"); // writable root → read-only root
    expect(violation(() => step.mkdir("out/dir/new"))).toBe("PERMISSION_DENIED");
    expect(violation(() => step.read("out/dropped/x"))).toBe("PERMISSION_DENIED"); // write-only root is not readable
    expect(violation(() => step.read("out/secret"))).toBe("RESOURCE_ACCESS"); // an undeclared folder
    expect(violation(() => step.write("out/secret", enc("x")))).toBe("RESOURCE_ACCESS");
    expect(violation(() => step.write("out/root/x", enc("x")))).toBe("RESOURCE_ACCESS"); // the root itself
    expect(violation(() => step.read("out/root/etc/passwd"))).toBe("RESOURCE_ACCESS");
    expect(step.violation()).not.toBeNull();
    expect(caught(() => step.commit()).code).toBe("PROTO_SEQUENCE_ERROR");
    expect(fingerprint(ws)).toBe(before);
    expect(dec(ws.read("data/in.txt"))).toBe("input");
  });

  it("refuses links leaving the workspace (.. chains, / then ..) with RESOURCE_ACCESS", () => {
    const ws = linked();
    const step = ws.beginStep();
    for (const target of ["../..", "../../..", "../temp/../../..", "/..", "/../etc/passwd", "../out/../../x"]) {
      step.symlink("temp/l", target);
      for (const path of ["temp/l", "temp/l/x"]) {
        expect(violation(() => step.read(path)), `${target} ${path}`).toBe("RESOURCE_ACCESS");
        expect(violation(() => step.write(path, enc("x"))), `${target} ${path}`).toBe("RESOURCE_ACCESS");
      }
      step.remove("temp/l");
    }
    expect(violation(() => step.read("out/up"))).toBe("RESOURCE_ACCESS");
    expect(caught(() => step.read("out/up")).message).toContain('the link "out/up" leads out of its directory');
    step.rollback();
  });

  it("reports loops and over-long chains as ELOOP, not as a violation", () => {
    const ws = linked();
    const step = ws.beginStep();
    expect(errno(() => step.read("out/loop"))).toBe("ELOOP");
    expect(errno(() => step.read("out/ping"))).toBe("ELOOP");
    expect(errno(() => step.write("out/ping/x", enc("x")))).toBe("ELOOP");
    for (let i = 0; i < MAX_LINK_EXPANSIONS; i++) step.symlink(`temp/c${i}`, `c${i + 1}`);
    step.write(`temp/c${MAX_LINK_EXPANSIONS}`, enc("end"));
    expect(dec(step.read("temp/c1"))).toBe("end"); // 39 links
    expect(dec(step.read("temp/c0"))).toBe("end"); // 40 links: the most one walk follows
    step.symlink("temp/c", "c0");
    expect(errno(() => step.read("temp/c"))).toBe("ELOOP"); // 41
    expect(step.violation()).toBeNull();
    step.commit();
  });

  it("writes through a dangling link create its target; remove, lstat and readlink act on the link", () => {
    const ws = linked();
    const step = ws.beginStep();
    step.write("out/dangling", enc("made"));
    expect(dec(step.read("out/new.txt"))).toBe("made");
    expect(step.lstat("out/dangling")).toEqual({ type: "symlink", size: 7, ino: null, nlink: 1 });
    expect(step.readlink("out/dangling")).toBe("new.txt");
    expect(errno(() => step.readlink("out/ok.txt"))).toBe("EINVAL");
    step.symlink("temp/to-out", "../out");
    expect(step.readlink("temp/to-out/loop")).toBe("loop"); // links on the way are followed, the last is read
    step.remove("out/dir"); // the link only
    expect(step.list("data/sub").map((e) => e.name)).toEqual(["deep.txt"]);
    step.remove("temp/to-out/self"); // the link out/self, through a link to its directory
    expect(step.exists("out/self")).toBe(false);
    expect(step.exists("out/ok.txt")).toBe(true);
    step.commit();
  });

  it("a link swapped between check and use within one step is resolved again at use", () => {
    const ws = linked();
    const before = ws.read("data/in.txt");
    const step = ws.beginStep();
    step.symlink("temp/w", "../out/ok.txt");
    step.write("temp/w", enc("first")); // allowed: out is writable
    step.remove("temp/w");
    step.symlink("temp/w", "../data/in.txt"); // swapped to a read-only file
    expect(violation(() => step.write("temp/w", enc("second")))).toBe("PERMISSION_DENIED");
    step.remove("temp/w");
    step.symlink("temp/w", "../../outside");
    expect(violation(() => step.write("temp/w", enc("third")))).toBe("RESOURCE_ACCESS");
    expect(dec(step.read("out/ok.txt"))).toBe("first");
    expect(caught(() => step.commit()).code).toBe("PROTO_SEQUENCE_ERROR");
    expect(ws.read("data/in.txt")).toEqual(before);
    expect(dec(ws.read("out/ok.txt"))).toBe("ok");
  });

  it("refuses a resolved path deeper than the depth limit", () => {
    const ws = new Workspace();
    ws.mkdir("a");
    ws.symlink("a/deep", "d/".repeat(64) + "x");
    expect(violation(() => ws.write("a/deep", enc("x")))).toBe("RESOURCE_ACCESS");
    expect(ws.exists("a/d")).toBe(false);
  });
});

describe("resolve: a walk confined to a directory (WASI)", () => {
  it("allows .. inside the jail and refuses it above", () => {
    const ws = linked();
    expect(ws.resolve("sub/../in.txt", { jail: "data" })).toEqual({ path: "data/in.txt", kind: "file", missing: 0, slash: false });
    expect(ws.resolve("a/b/c", { jail: "out" })).toEqual({ path: "out/a/b/c", kind: null, missing: 3, slash: false });
    expect(ws.resolve("sub/", { jail: "data" }).slash).toBe(true);
    expect(violation(() => ws.resolve("..", { jail: "data" }))).toBe("RESOURCE_ACCESS");
    expect(violation(() => ws.resolve("sub/../../out", { jail: "data" }))).toBe("RESOURCE_ACCESS");
    expect(errno(() => ws.resolve("none/../in.txt", { jail: "data" }))).toBe("ENOENT"); // POSIX: no walking through a missing name
    expect(violation(() => ws.resolve("none/../../x", { jail: "data" }))).toBe("RESOURCE_ACCESS"); // …but an escape is one anyway
    ws.symlink("out/via-missing", "nothing/../../../x");
    expect(violation(() => ws.read("out/via-missing"))).toBe("RESOURCE_ACCESS");
    expect(errno(() => ws.resolve("in.txt/x", { jail: "data" }))).toBe("ENOTDIR");
  });

  it("confines links to the jail: a link may not leave the directory the path is relative to", () => {
    const ws = linked();
    expect(ws.resolve("out/in").path).toBe("data/in.txt"); // jailed to the whole workspace: fine
    expect(violation(() => ws.resolve("in", { jail: "out" }))).toBe("RESOURCE_ACCESS"); // ../data leaves out/
    expect(ws.resolve("in", { jail: "out", follow: false }).kind).toBe("symlink"); // not followed: nothing leaves
  });

  it("maps absolute targets through the jail's absolute name, or refuses them", () => {
    const ws = new Workspace();
    ws.write("data/sub/f.txt", enc("f"));
    ws.symlink("data/a", "/data/sub/f.txt");
    ws.symlink("data/b", "/etc/passwd");
    ws.symlink("data/c", "/data/../data/sub/f.txt");
    expect(ws.resolve("a", { jail: "data", absolute: "/data" }).path).toBe("data/sub/f.txt");
    ws.symlink("data/sub/g", "/data/sub/f.txt");
    ws.symlink("data/sub/h", "/data/x");
    expect(ws.resolve("g", { jail: "data/sub", absolute: "/data/sub" }).path).toBe("data/sub/f.txt");
    expect(violation(() => ws.resolve("h", { jail: "data/sub", absolute: "/data/sub" }))).toBe("RESOURCE_ACCESS");
    expect(violation(() => ws.resolve("b", { jail: "data", absolute: "/data" }))).toBe("RESOURCE_ACCESS");
    expect(violation(() => ws.resolve("c", { jail: "data", absolute: "/data" }))).toBe("RESOURCE_ACCESS");
    expect(violation(() => ws.resolve("a", { jail: "data", absolute: null }))).toBe("RESOURCE_ACCESS");
    expect(ws.resolve("a", { jail: "data", follow: false }).kind).toBe("symlink");
  });

  it("refuses a jail that is no longer a directory", () => {
    const ws = new Workspace();
    ws.mkdir("d/e");
    expect(ws.resolve(".", { jail: "d/e" }).kind).toBe("dir");
    ws.remove("d", { recursive: true });
    ws.symlink("d", ".");
    expect(errno(() => ws.resolve("x", { jail: "d/e" }))).toBe("ENOENT");
  });
});
