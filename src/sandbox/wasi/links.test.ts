import { describe, expect, it } from "vitest";
import { Workspace } from "../workspace/workspace.ts";
import type { WorkspaceView } from "../workspace/workspace.ts";
import type { Preopen } from "./context.ts";
import { Errno, FileType, LookupFlags, OFlags, Rights } from "./errno.ts";
import { readFileSync } from "node:fs";
import { bareShim, runCommand } from "./_test-support.ts";

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array): string => new TextDecoder().decode(b);
const RW = Rights.FD_READ | Rights.FD_WRITE | Rights.FD_FILESTAT_GET;

/** A guest's-eye view of the shim: each call returns its errno (and its result where there is one). */
async function guest(fs: WorkspaceView, preopens: Preopen[]) {
  const { f, put, dv, mem, wasi } = await bareShim(fs, preopens);
  const at = (ptr: number) => dv().getUint32(ptr, true);
  const call = (name: string, ...args: unknown[]): number => f[name]!(...args);
  return {
    wasi,
    open(dirfd: number, path: string, o: { follow?: boolean; oflags?: number; rights?: bigint } = {}): [number, number] {
      const [p, l] = put(1000, path);
      const e = call("path_open", dirfd, o.follow === false ? 0 : LookupFlags.SYMLINK_FOLLOW, p, l, o.oflags ?? 0, o.rights ?? RW, RW, 0, 2000);
      return [e, e === 0 ? at(2000) : -1];
    },
    symlink(target: string, dirfd: number, path: string): number {
      const [tp, tl] = put(1000, target);
      const [p, l] = put(1500, path);
      return call("path_symlink", tp, tl, dirfd, p, l);
    },
    link(fromFd: number, from: string, toFd: number, to: string): number {
      const [ap, al] = put(1000, from);
      const [bp, bl] = put(1500, to);
      return call("path_link", fromFd, 0, ap, al, toFd, bp, bl);
    },
    rename(fromFd: number, from: string, toFd: number, to: string): number {
      const [ap, al] = put(1000, from);
      const [bp, bl] = put(1500, to);
      return call("path_rename", fromFd, ap, al, toFd, bp, bl);
    },
    unlink(dirfd: number, path: string): number {
      const [p, l] = put(1000, path);
      return call("path_unlink_file", dirfd, p, l);
    },
    readlink(dirfd: number, path: string): [number, string] {
      const [p, l] = put(1000, path);
      const e = call("path_readlink", dirfd, p, l, 3000, 256, 2000);
      return [e, e === 0 ? dec(new Uint8Array(mem.buffer, 3000, at(2000))) : ""];
    },
    stat(dirfd: number, path: string, follow: boolean): [number, number, bigint, bigint] {
      const [p, l] = put(1000, path);
      const e = call("path_filestat_get", dirfd, follow ? LookupFlags.SYMLINK_FOLLOW : 0, p, l, 4000);
      return [e, dv().getUint8(4016), dv().getBigUint64(4008, true), dv().getBigUint64(4024, true)]; // errno, type, ino, nlink
    },
    write(fd: number, text: string): number {
      const [p, l] = put(5000, text);
      dv().setUint32(2100, p, true);
      dv().setUint32(2104, l, true);
      return call("fd_write", fd, 2100, 1, 2108);
    },
    read(fd: number): string {
      dv().setUint32(2100, 6000, true);
      dv().setUint32(2104, 1000, true);
      expect(call("fd_read", fd, 2100, 1, 2108)).toBe(0);
      return dec(new Uint8Array(mem.buffer, 6000, at(2108)));
    },
    close: (fd: number): number => call("fd_close", fd),
  };
}

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
