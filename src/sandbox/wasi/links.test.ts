import { describe, expect, it } from "vitest";
import { Workspace } from "../workspace/workspace.ts";
import { Errno, FileType, OFlags, Rights } from "./errno.ts";
import { readFileSync } from "node:fs";
import { RW, guest, runCommand } from "./_test-support.ts";

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

/** data: read-write, ro: read-only; the host planted two absolute links (guests cannot make them). */
function roots(): Workspace {
  const ws = Workspace.fromResources([
    { root: "data", access: "readwrite", files: { "input.txt": enc("input"), "sub/f.txt": enc("f") } },
    { root: "ro", access: "read", files: { "secret.txt": enc("secret") } },
  ]);
  ws.symlink("data/to-root", "/");
  ws.symlink("data/abs-in", "/data/sub/f.txt");
  return ws;
}

describe("WASI links: hostile cases", () => {
  it("a link to / is never made by the guest; a planted one is not followed out of the preopen", async () => {
    const ws = roots();
    const step = ws.beginStep();
    const g = await guest(step, [{ guest: "/data", path: "data" }]);
    const before = step.digest();
    expect(g.symlink("/", 3, "up")).toBe(Errno.PERM);
    expect(g.symlink("/data/input.txt", 3, "abs")).toBe(Errno.PERM);
    expect(g.open(3, "to-root")[0]).toBe(Errno.NOTCAPABLE);
    expect(g.open(3, "to-root/etc/passwd")[0]).toBe(Errno.NOTCAPABLE);
    expect(g.open(3, "to-root/data/input.txt")[0]).toBe(Errno.NOTCAPABLE); // "/" is not inside "/data"
    expect(g.readlink(3, "to-root")).toEqual([0, "/"]);
    const [e, fd] = g.open(3, "abs-in"); // an absolute target inside the preopen's guest name is followed
    expect(e).toBe(0);
    expect(g.read(fd)).toBe("f");
    expect(step.digest()).toBe(before);
    expect(g.wasi.ctx.violation?.details["violationType"]).toBe("RESOURCE_ACCESS");
    expect(step.violation()).not.toBeNull(); // the step cannot be committed (seed 003 §4.3)
    step.rollback();
  });

  it("'..' chains: refused when they climb out of the descriptor, by link or by path, existing names or not", async () => {
    const ws = roots();
    const step = ws.beginStep();
    const g = await guest(step, [{ guest: "/data", path: "data" }]);
    for (const [i, target] of ["..", "../..", "../../../../etc/passwd", "sub/../../x", "nothing/../../x", "sub/../sub/../.."].entries()) {
      expect(g.symlink(target, 3, `up${i}`)).toBe(0); // making a link is not following it
      expect(g.open(3, `up${i}`)[0], target).toBe(Errno.NOTCAPABLE);
      expect(g.open(3, `up${i}/x`, { oflags: OFlags.CREAT })[0], target).toBe(Errno.NOTCAPABLE);
      expect(g.open(3, `up${i}`, { follow: false })[0], target).toBe(Errno.LOOP); // not followed: nothing leaves
    }
    for (const path of ["..", "../data/input.txt", "sub/../../data/input.txt", "none/../../x", "sub/f.txt/../../.."]) {
      expect(g.open(3, path)[0], path).not.toBe(0);
    }
    expect(g.open(3, "sub/../input.txt")[0]).toBe(0); // '..' that stays inside is fine
    const [, sub] = g.open(3, "sub", { oflags: OFlags.DIRECTORY, rights: Rights.PATH_OPEN | Rights.PATH_SYMLINK });
    expect(g.open(sub, "../input.txt")[0]).toBe(Errno.NOTCAPABLE); // beneath the descriptor, not just the preopen
    expect(g.symlink("../input.txt", sub, "back")).toBe(0);
    expect(g.open(sub, "back")[0]).toBe(Errno.NOTCAPABLE);
    expect(g.open(3, "sub/back")[0]).toBe(0); // the same link, walked from the preopen, stays inside it
    step.rollback();
  });

  it("loops are ELOOP and no violation", async () => {
    const ws = roots();
    const step = ws.beginStep();
    const g = await guest(step, [{ guest: "/data", path: "data" }]);
    expect(g.symlink("loop", 3, "loop")).toBe(0);
    expect(g.symlink("pong", 3, "ping")).toBe(0);
    expect(g.symlink("ping/x", 3, "pong")).toBe(0);
    expect(g.open(3, "loop")[0]).toBe(Errno.LOOP);
    expect(g.open(3, "ping")[0]).toBe(Errno.LOOP);
    expect(g.open(3, "loop/x", { oflags: OFlags.CREAT })[0]).toBe(Errno.LOOP);
    expect(g.stat(3, "loop", true)[0]).toBe(Errno.LOOP);
    expect(g.stat(3, "loop", false).slice(0, 2)).toEqual([0, FileType.SYMBOLIC_LINK]);
    expect(g.unlink(3, "loop")).toBe(0);
    expect(g.wasi.ctx.violation).toBeNull();
    step.commit();
    expect(ws.readlink("data/ping")).toBe("pong");
  });

  it("a link into another root or preopen: refused beneath a preopen; beneath the root, access is checked where it lands", async () => {
    const ws = roots();
    const step = ws.beginStep();
    const g = await guest(step, [{ guest: "/data", path: "data" }, { guest: "/ro", path: "ro" }]);
    expect(g.symlink("../ro/secret.txt", 3, "to-ro")).toBe(0);
    expect(g.open(3, "to-ro")[0]).toBe(Errno.NOTCAPABLE); // readable through /ro, but not through /data
    step.rollback();

    const wide = Workspace.fromResources([
      { root: "data", access: "readwrite", files: { "f.txt": enc("f") } },
      { root: "ro", access: "read", files: { "secret.txt": enc("secret") } },
    ]);
    const s2 = wide.beginStep();
    const h = await guest(s2, [{ guest: "/", path: "" }]);
    expect(h.symlink("../ro/secret.txt", 3, "data/to-ro")).toBe(0);
    expect(h.symlink("../undeclared/x", 3, "data/to-undeclared")).toBe(0);
    const [e, fd] = h.open(3, "data/to-ro", { rights: Rights.FD_READ });
    expect(e).toBe(0);
    expect(h.read(fd)).toBe("secret");
    expect(h.open(3, "data/to-ro", { rights: RW })[0]).toBe(Errno.ACCES); // a writable root's link cannot write ro/
    expect(h.wasi.ctx.violation?.details["violationType"]).toBe("PERMISSION_DENIED");
    expect(h.open(3, "data/to-undeclared", { oflags: OFlags.CREAT })[0]).toBe(Errno.NOTCAPABLE);
    expect(s2.violation()).not.toBeNull();
    s2.rollback();
    expect(wide.read("ro/secret.txt")).toEqual(enc("secret"));
  });

  it("a link swapped between check and use within one step cannot redirect an open descriptor", async () => {
    const ws = Workspace.fromResources([
      { root: "data", access: "readwrite", files: { "f.txt": enc("f"), "sub/a.txt": enc("a") } },
      { root: "ro", access: "read", files: { "secret.txt": enc("secret") } },
    ]);
    const step = ws.beginStep();
    const g = await guest(step, [{ guest: "/", path: "" }]);
    expect(g.symlink("f.txt", 3, "data/w")).toBe(0);
    const [e, fd] = g.open(3, "data/w", { rights: RW }); // checked: data/f.txt, writable
    expect(e).toBe(0);
    expect(g.unlink(3, "data/w")).toBe(0);
    expect(g.symlink("../ro/secret.txt", 3, "data/w")).toBe(0); // swapped before the write
    expect(g.write(fd, "written")).toBe(0);
    expect(g.close(fd)).toBe(0); // written back to the node it opened
    expect(dec(step.read("data/f.txt"))).toBe("written");
    expect(dec(step.read("ro/secret.txt"))).toBe("secret");
    expect(g.open(3, "data/w", { rights: RW })[0]).toBe(Errno.ACCES); // a new use resolves again, and is refused

    const [, dir] = g.open(3, "data/sub", { oflags: OFlags.DIRECTORY, rights: Rights.PATH_OPEN | Rights.PATH_CREATE_FILE });
    expect(g.rename(3, "data/sub", 3, "data/moved")).toBe(0);
    expect(g.symlink("../ro", 3, "data/sub")).toBe(0); // a link where the directory was
    const [e2, fd2] = g.open(dir, "new.txt", { oflags: OFlags.CREAT, rights: RW });
    expect(e2).toBe(0); // the descriptor followed its directory
    expect(g.close(fd2)).toBe(0);
    expect(step.exists("data/moved/new.txt")).toBe(true);
    expect(step.list("ro").map((x) => x.name)).toEqual(["secret.txt"]);
  });
});

describe("WASI hard links and shared open files", () => {
  it("two names, one node: same st_ino and nlink 2; a write through one descriptor is read through the other", async () => {
    const ws = new Workspace();
    ws.write("d/a.txt", enc("one"));
    const g = await guest(ws, [{ guest: "/d", path: "d" }]);
    expect(g.link(3, "a.txt", 3, "b.txt")).toBe(0);
    const a = g.stat(3, "a.txt", false);
    expect(a[0]).toBe(0);
    expect(g.stat(3, "b.txt", false)).toEqual(a);
    expect(a[3]).toBe(2n);
    const [, wfd] = g.open(3, "a.txt", { rights: RW });
    const [, rfd] = g.open(3, "b.txt", { rights: Rights.FD_READ });
    expect(g.write(wfd, "two")).toBe(0);
    expect(g.read(rfd)).toBe("two"); // not yet written back: shared in memory
    expect(g.close(wfd)).toBe(0);
    expect(dec(ws.read("d/b.txt"))).toBe("two");
    expect(g.link(3, "a.txt", 3, "b.txt")).toBe(Errno.EXIST);
    expect(g.link(3, ".", 3, "dir-link")).toBe(Errno.PERM);
  });
});

describe("the links fixture (wasi-libc): every hostile case, in a confined step", () => {
  it("refuses every escape, follows links inside, keeps ro/ unchanged; the step cannot be committed", async () => {
    const code = new Uint8Array(readFileSync(new URL("../../../wasm-tools/build/links.wasm", import.meta.url)));
    const ws = Workspace.fromResources([
      { root: "data", access: "readwrite" },
      { root: "ro", access: "read", files: { "secret.txt": enc("secret") } },
    ]);
    const before = ws.digest();
    const step = ws.beginStep();
    const r = await runCommand(code, step, [{ guest: "/data", path: "data" }, { guest: "/ro", path: "ro" }]);
    expect(r.exit).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      symlink_root: Errno.PERM,
      dots_make: 0,
      dots_open: Errno.NOTCAPABLE,
      dots_create: Errno.NOTCAPABLE,
      dots_nofollow: Errno.LOOP,
      dots_readlink: 1,
      chain_make: 0,
      chain_open: Errno.NOTCAPABLE,
      loop_make: 0,
      loop_open: Errno.LOOP,
      pair_make: 0,
      pair_open: Errno.LOOP,
      cross_make: 0,
      cross_open: Errno.NOTCAPABLE,
      ro_direct: 0,
      swap_make: 0,
      swap_open: 0,
      swap_unlink: 0,
      swap_relink: 0,
      swap_write: 0,
      swap_close: 0,
      swap_landed: 1,
      swap_secret_kept: 1,
      inside_make: 0,
      inside_read: 1,
      hard_link: 0,
      hard_same: 1,
      hard_into_ro: Errno.ACCES,
      rename_dir: 0,
    });
    expect(r.wasi.ctx.violation?.details["violationType"]).toBe("RESOURCE_ACCESS");
    expect(dec(step.read("ro/secret.txt"))).toBe("secret");
    expect(step.list("ro").map((e) => e.name)).toEqual(["secret.txt"]);
    expect(step.violation()).not.toBeNull();
    step.rollback();
    expect(ws.digest()).toBe(before);
  });
});
