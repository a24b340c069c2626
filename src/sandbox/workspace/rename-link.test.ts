import { describe, expect, it } from "vitest";
import { ReachError } from "../../protocol/errors.ts";
import { sha256Hex } from "../../canonical/sha256.ts";
import { Workspace, WorkspaceError } from "./workspace.ts";

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
const errno = (fn: () => unknown): string => {
  const err = caught(fn);
  expect(err).toBeInstanceOf(WorkspaceError);
  return (err as WorkspaceError).errno;
};
const violation = (fn: () => unknown): string => {
  const err = caught(fn);
  expect(err.code).toBe("POLICY_VIOLATION");
  return err.details["violationType"] as string;
};

function roots(): Workspace {
  return Workspace.fromResources([
    { root: "data", access: "read", files: { "in.txt": enc("input") } },
    { root: "out", access: "readwrite", files: { "a.txt": enc("aaa"), "d/x.txt": enc("x"), "d/e/y.txt": enc("y") } },
  ]);
}

describe("hard links share one file node", () => {
  it("a write through either name is seen through both; the bytes count once; removing one name keeps the other", () => {
    const ws = roots();
    const used = ws.bytesUsed();
    ws.link("out/a.txt", "out/b.txt");
    expect(ws.bytesUsed()).toBe(used);
    const a = ws.lstat("out/a.txt");
    expect(a).toEqual({ type: "file", size: 3, ino: a.ino, nlink: 2 });
    expect(ws.lstat("out/b.txt")).toEqual(a);
    ws.write("out/b.txt", enc("changed"));
    expect(dec(ws.read("out/a.txt"))).toBe("changed");
    expect(ws.bytesUsed()).toBe(used - 3 + 7);
    ws.remove("out/a.txt");
    expect(dec(ws.read("out/b.txt"))).toBe("changed");
    expect(ws.lstat("out/b.txt").nlink).toBe(1);
    ws.remove("out/b.txt");
    expect(ws.bytesUsed()).toBe(used - 3);
  });

  it("links a link record as a copy, refuses directories, existing names and read-only sources", () => {
    const ws = roots();
    ws.symlink("out/s", "dangling");
    ws.link("out/s", "out/s2");
    expect(ws.readlink("out/s2")).toBe("dangling");
    expect(errno(() => ws.link("out/d", "out/d2"))).toBe("EPERM");
    expect(errno(() => ws.link("out/a.txt", "out/s"))).toBe("EEXIST");
    expect(errno(() => ws.link("out/none", "out/n2"))).toBe("ENOENT");
    expect(errno(() => ws.link("out/a.txt", "out/no/dir/b"))).toBe("ENOENT");
    const step = ws.beginStep();
    expect(violation(() => step.link("data/in.txt", "out/in.txt"))).toBe("PERMISSION_DENIED"); // else out/ could write data/
    expect(step.exists("out/in.txt")).toBe(false);
    step.rollback();
  });

  it("each name is a regular file in the snapshot", () => {
    const ws = roots();
    ws.link("out/a.txt", "out/b.txt");
    const h = sha256Hex(enc("aaa"));
    expect(ws.snapshot().filter((e) => e.path.endsWith(".txt") && e.sha256 === h).map((e) => e.path)).toEqual(["out/a.txt", "out/b.txt"]);
  });
});

describe("rename", () => {
  it("moves files (keeping their node), links, and directories with everything below", () => {
    const ws = roots();
    const ino = ws.lstat("out/a.txt").ino;
    ws.rename("out/a.txt", "out/b.txt");
    expect(ws.lstat("out/b.txt").ino).toBe(ino);
    expect(ws.exists("out/a.txt")).toBe(false);
    ws.symlink("out/l", "b.txt");
    ws.rename("out/l", "out/d/l2");
    expect(ws.readlink("out/d/l2")).toBe("b.txt");
    ws.rename("out/d", "out/moved/");
    expect(ws.list("out/moved").map((e) => e.name)).toEqual(["e", "l2", "x.txt"]);
    expect(dec(ws.read("out/moved/e/y.txt"))).toBe("y");
    expect(ws.exists("out/d")).toBe(false);
  });

  it("replaces a file or an empty directory; refuses the POSIX error cases without changing anything", () => {
    const ws = roots();
    ws.write("out/b.txt", enc("bbb"));
    ws.rename("out/b.txt", "out/a.txt");
    expect(dec(ws.read("out/a.txt"))).toBe("bbb");
    ws.mkdir("out/empty");
    ws.mkdir("out/src");
    ws.rename("out/src", "out/empty");
    expect(ws.exists("out/src")).toBe(false);
    const before = ws.digest() + JSON.stringify(ws.list("out"));
    expect(errno(() => ws.rename("out/empty", "out/d"))).toBe("ENOTEMPTY");
    expect(errno(() => ws.rename("out/a.txt", "out/d"))).toBe("EISDIR");
    expect(errno(() => ws.rename("out/d", "out/a.txt"))).toBe("ENOTDIR");
    expect(errno(() => ws.rename("out/d", "out/d/e/inside"))).toBe("EINVAL");
    expect(errno(() => ws.rename("out/none", "out/x"))).toBe("ENOENT");
    expect(errno(() => ws.rename("out/a.txt/", "out/x"))).toBe("ENOTDIR");
    expect(errno(() => ws.rename("out/a.txt", "out/no/dir/x"))).toBe("ENOENT");
    expect(ws.digest() + JSON.stringify(ws.list("out"))).toBe(before);
  });

  it("needs write access at both ends and never moves or replaces a root", () => {
    const ws = roots();
    const step = ws.beginStep();
    expect(violation(() => step.rename("out/a.txt", "data/a.txt"))).toBe("PERMISSION_DENIED");
    expect(violation(() => step.rename("data/in.txt", "out/in.txt"))).toBe("PERMISSION_DENIED");
    expect(violation(() => step.rename("out", "temp/out"))).toBe("PERMISSION_DENIED");
    expect(violation(() => step.rename("out/a.txt", "elsewhere"))).toBe("RESOURCE_ACCESS");
    step.rollback();
    expect(dec(ws.read("out/a.txt"))).toBe("aaa");
  });
});

describe("writeNode: a descriptor writes back to the file it opened", () => {
  it("follows the node through renames and drops the bytes of an unlinked file", () => {
    const ws = roots();
    const ino = ws.lstat("out/a.txt").ino!;
    ws.rename("out/a.txt", "out/renamed.txt");
    expect(ws.writeNode(ino, enc("new"), "out/a.txt")).toBe(true);
    expect(dec(ws.read("out/renamed.txt"))).toBe("new");
    expect(ws.exists("out/a.txt")).toBe(false);
    ws.symlink("out/a.txt", "../data/in.txt"); // a link put where the file was: not written through
    expect(ws.writeNode(ino, enc("again"), "out/a.txt")).toBe(true);
    expect(dec(ws.read("data/in.txt"))).toBe("input");
    ws.remove("out/renamed.txt");
    expect(ws.writeNode(ino, enc("lost"), "out/renamed.txt")).toBe(false);
  });

  it("checks access on the name it writes through", () => {
    const ws = roots();
    const ino = ws.lstat("data/in.txt").ino!;
    const step = ws.beginStep();
    expect(violation(() => step.writeNode(ino, enc("x"), "data/in.txt"))).toBe("PERMISSION_DENIED");
    step.rollback();
  });
});

describe("limits", () => {
  it("link targets count towards the total bytes; links towards the entries", () => {
    const ws = new Workspace({ maxTotalBytes: 10, maxEntries: 3 });
    ws.symlink("a", "0123456789");
    expect(ws.bytesUsed()).toBe(10);
    expect(caught(() => ws.symlink("b", "x")).code).toBe("EXEC_DISK_EXCEEDED");
    expect(caught(() => ws.link("a", "b")).code).toBe("EXEC_DISK_EXCEEDED"); // a link's copy counts too
    ws.remove("a");
    expect(ws.bytesUsed()).toBe(0);
    ws.write("f", enc("12345"));
    ws.link("f", "g");
    ws.link("f", "h");
    expect(ws.bytesUsed()).toBe(5);
    expect(caught(() => ws.link("f", "i")).code).toBe("EXEC_DISK_EXCEEDED");
  });
});

describe("snapshot and digest with links", () => {
  it("keeps the digest of a workspace without links, and adds links only when asked", () => {
    const ws = new Workspace();
    ws.write("b.txt", enc("b"));
    ws.write("a.txt", enc("a"));
    const files = `a.txt\0${sha256Hex(enc("a"))}\nb.txt\0${sha256Hex(enc("b"))}\n`;
    expect(ws.digest()).toBe(sha256Hex(enc(files)));
    ws.symlink("c", "a.txt");
    expect(ws.snapshot().map((e) => e.path)).toEqual(["a.txt", "b.txt"]);
    expect(ws.snapshot({ links: true })[2]).toEqual({ path: "c", size: 5, sha256: sha256Hex(enc("a.txt")), kind: "symlink", target: "a.txt" });
    expect(ws.digest()).toBe(sha256Hex(enc(files + "c\0symlink\0a.txt\n")));
  });
});
