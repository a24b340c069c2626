import { describe, expect, it } from "vitest";
import { Workspace } from "../workspace/workspace.ts";
import { DIR_RIGHTS, Errno, FdFlags, FstFlags, OFlags, Rights } from "./errno.ts";
import { MAX_OPEN_FDS } from "./fd-table.ts";
import { FILE_TIME_NS } from "./open-files.ts";
import { RW, guest } from "./_test-support.ts";

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

async function scratch() {
  const ws = new Workspace();
  ws.write("d/a.txt", enc("abc"));
  return { ws, g: await guest(ws, [{ guest: "/d", path: "d" }]) };
}

describe("WASI timestamps", () => {
  it("every entry reports FILE_TIME_NS until set; set times stick for the instance; _NOW takes the virtual clock", async () => {
    const { g } = await scratch();
    const mtim = () => g.dv().getBigUint64(4048, true);
    const atim = () => g.dv().getBigUint64(4040, true);
    const [p, l] = g.put(1000, "a.txt");
    expect(g.call("path_filestat_get", 3, 0, p, l, 4000)).toBe(0);
    expect([atim(), mtim()]).toEqual([FILE_TIME_NS, FILE_TIME_NS]);
    expect(g.call("path_filestat_set_times", 3, 0, p, l, 0n, FILE_TIME_NS - 100n, FstFlags.MTIM)).toBe(0);
    expect(g.call("path_filestat_get", 3, 0, p, l, 4000)).toBe(0);
    expect([atim(), mtim()]).toEqual([FILE_TIME_NS, FILE_TIME_NS - 100n]);
    expect(g.call("fd_filestat_set_times", g.open(3, "a.txt")[1], 0n, 0n, FstFlags.ATIM_NOW)).toBe(Errno.NOTCAPABLE); // no right
    const [e, fd] = g.open(3, "a.txt", { rights: RW | Rights.FD_FILESTAT_SET_TIMES });
    expect(e).toBe(0);
    expect(g.call("fd_filestat_get", fd, 4000)).toBe(0);
    expect(mtim()).toBe(FILE_TIME_NS - 100n); // the same node through a descriptor
    g.clock.advance(5000);
    expect(g.call("fd_filestat_set_times", fd, 0n, 0n, FstFlags.ATIM_NOW)).toBe(0);
    expect(g.call("fd_filestat_get", fd, 4000)).toBe(0);
    expect(atim()).toBe(5_000_000_000n);
    expect(g.call("fd_filestat_set_times", fd, 1n, 2n, FstFlags.MTIM | FstFlags.MTIM_NOW)).toBe(Errno.INVAL);
    expect(g.call("fd_filestat_set_times", fd, 1n, 2n, FstFlags.ATIM | FstFlags.ATIM_NOW)).toBe(Errno.INVAL);
    expect(g.call("path_filestat_set_times", 3, 0, p, l, 0n, 0n, 16)).toBe(Errno.INVAL);
  });

  it("setting times needs write access: refused on a read-only root", async () => {
    const ws = Workspace.fromResources([{ root: "ro", access: "read", files: { "a.txt": enc("a") } }]);
    const step = ws.beginStep();
    const g = await guest(step, [{ guest: "/ro", path: "ro" }]);
    const [p, l] = g.put(1000, "a.txt");
    expect(g.call("path_filestat_set_times", 3, 0, p, l, 0n, 5n, FstFlags.MTIM)).toBe(Errno.ACCES);
    step.rollback();
  });
});

describe("WASI descriptors", () => {
  it("keeps the fdflags a file was opened with, and reports none for a directory", async () => {
    const { g } = await scratch();
    const [p, l] = g.put(1000, "a.txt");
    expect(g.call("path_open", 3, 0, p, l, 0, RW, 0n, FdFlags.APPEND | FdFlags.SYNC, 2000)).toBe(0);
    const fd = g.dv().getUint32(2000, true);
    expect(g.call("fd_fdstat_get", fd, 4000)).toBe(0);
    expect(g.dv().getUint16(4002, true)).toBe(FdFlags.APPEND | FdFlags.SYNC);
    expect(g.call("fd_fdstat_set_flags", fd, 0)).toBe(0);
    expect(g.call("fd_fdstat_get", fd, 4000)).toBe(0);
    expect(g.dv().getUint16(4002, true)).toBe(FdFlags.SYNC);
    expect(g.call("fd_fdstat_get", 3, 4000)).toBe(0);
    expect(g.dv().getUint16(4002, true)).toBe(0);
  });

  it("fd_allocate grows a file (never shrinks it); a directory is EISDIR", async () => {
    const { ws, g } = await scratch();
    const [e, fd] = g.open(3, "a.txt", { rights: RW | Rights.FD_ALLOCATE });
    expect(e).toBe(0);
    expect(g.call("fd_allocate", fd, 0n, 2n)).toBe(0);
    expect(g.call("fd_allocate", fd, 4n, 2n)).toBe(0);
    expect(g.close(fd)).toBe(0);
    expect([...ws.read("d/a.txt")]).toEqual([97, 98, 99, 0, 0, 0]);
    expect(g.call("fd_allocate", 3, 0n, 1n)).toBe(Errno.ISDIR);
    const [, ro] = g.open(3, "a.txt", { rights: Rights.FD_READ });
    expect(g.call("fd_allocate", ro, 0n, 100n)).toBe(Errno.NOTCAPABLE);
  });

  it("sock_* answer ENOTSOCK for an open descriptor and EBADF for a closed one", async () => {
    const { g } = await scratch();
    for (const name of ["sock_shutdown", "sock_accept", "sock_recv", "sock_send"]) {
      expect(g.call(name, 1, 0, 0, 0, 0, 0), name).toBe(Errno.NOTSOCK);
      expect(g.call(name, 99, 0, 0, 0, 0, 0), name).toBe(Errno.BADF);
    }
  });

  it("O_TRUNC needs path_filestat_set_size on the directory, O_CREAT path_create_file", async () => {
    const { ws, g } = await scratch();
    expect(g.call("fd_fdstat_set_rights", 3, DIR_RIGHTS & ~(Rights.PATH_FILESTAT_SET_SIZE | Rights.PATH_CREATE_FILE), DIR_RIGHTS)).toBe(0);
    expect(g.open(3, "a.txt", { oflags: OFlags.TRUNC })[0]).toBe(Errno.NOTCAPABLE);
    expect(g.open(3, "new.txt", { oflags: OFlags.CREAT })[0]).toBe(Errno.NOTCAPABLE);
    expect(dec(ws.read("d/a.txt"))).toBe("abc");
    expect(ws.exists("d/new.txt")).toBe(false);
  });

  it("two descriptors on one file see each other's writes at once; a removed file's writes are dropped", async () => {
    const { ws, g } = await scratch();
    const [, r] = g.open(3, "a.txt", { rights: Rights.FD_READ });
    const [, w] = g.open(3, "a.txt", { rights: RW });
    expect(g.write(w, "xyz")).toBe(0);
    expect(g.read(r)).toBe("xyz");
    expect(g.unlink(3, "a.txt")).toBe(0);
    expect(g.write(w, "!")).toBe(0);
    expect(g.close(w)).toBe(0);
    expect(ws.exists("d/a.txt")).toBe(false);
    expect(ws.list("d")).toEqual([]);
  });

  it("an open that cannot get a descriptor creates nothing", async () => {
    const { ws, g } = await scratch();
    let opened = 0;
    while (g.open(3, "a.txt", { rights: Rights.FD_READ })[0] === 0) opened++;
    expect(opened).toBe(MAX_OPEN_FDS - 4); // 0-2 and the preopen
    expect(g.open(3, "new.txt", { oflags: OFlags.CREAT })[0]).toBe(33); // EMFILE
    expect(ws.exists("d/new.txt")).toBe(false);
  });
});

describe("WASI directories: readdir inodes and renames", () => {
  it("d_ino of '.' and of a file equal their filestat ino", async () => {
    const { g } = await scratch();
    expect(g.call("fd_readdir", 3, 8000, 1024, 0n, 2000)).toBe(0);
    const dirent = (at: number) => ({ ino: g.dv().getBigUint64(at + 8, true), len: g.dv().getUint32(at + 16, true) });
    const dot = dirent(8000);
    const dotdot = dirent(8000 + 24 + dot.len);
    const file = dirent(8000 + 48 + dot.len + dotdot.len);
    expect(g.call("fd_filestat_get", 3, 4000)).toBe(0);
    expect(dot.ino).toBe(g.dv().getBigUint64(4008, true));
    expect(g.stat(3, "a.txt", false)[2]).toBe(file.ino);
  });

  it("renames directories (trailing slashes allowed), and a directory descriptor follows its directory", async () => {
    const { ws, g } = await scratch();
    ws.mkdir("d/src");
    expect(g.rename(3, "src/", 3, "dst")).toBe(0);
    expect(g.rename(3, "dst", 3, "src/")).toBe(0);
    const [, dir] = g.open(3, "src", { oflags: OFlags.DIRECTORY, rights: Rights.PATH_OPEN | Rights.PATH_CREATE_FILE });
    expect(g.rename(3, "src/", 3, "moved/")).toBe(0);
    expect(g.close(g.open(dir, "x.txt", { oflags: OFlags.CREAT })[1])).toBe(0);
    expect(ws.exists("d/moved/x.txt")).toBe(true);
    expect(g.rename(3, "a.txt/", 3, "b")).toBe(Errno.NOTDIR);
    expect(g.rename(3, "moved", 3, "a.txt")).toBe(Errno.NOTDIR);
    expect(g.rename(3, "a.txt", 3, "moved")).toBe(Errno.ISDIR);
    expect(g.rename(3, "moved", 3, "moved/inner")).toBe(Errno.INVAL);
  });

  it("readlink cuts the target to the buffer; symlink with a trailing slash is ENOENT when missing, EEXIST when present", async () => {
    const { g } = await scratch();
    expect(g.symlink("a.txt", 3, "l")).toBe(0);
    const [p, l] = g.put(1000, "l");
    expect(g.call("path_readlink", 3, p, l, 3000, 3, 2000)).toBe(0);
    expect(g.dv().getUint32(2000, true)).toBe(3);
    expect(g.readlink(3, "a.txt")[0]).toBe(Errno.INVAL);
    expect(g.symlink("a.txt", 3, "new/")).toBe(Errno.NOENT);
    expect(g.symlink("a.txt", 3, "l")).toBe(Errno.EXIST);
    expect(g.symlink("", 3, "empty")).toBe(Errno.NOENT);
  });
});
