import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../determinism/clock.ts";
import { deriveStream } from "../../determinism/prng.ts";
import { Workspace } from "../workspace/workspace.ts";
import { Errno, OFlags, Rights } from "./errno.ts";
import { bareShim, runCommand } from "./_test-support.ts";

const tool = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(`../../../wasm-tools/build/${name}.wasm`, import.meta.url)));
const enc = new TextEncoder();

const bare = bareShim;

describe("WASI preview1 shim", () => {
  it("host functions return an errno for hostile arguments and never throw", async () => {
    const ws = Workspace.fromResources([{ root: "data", access: "read", files: { "a.txt": enc.encode("x") } }]);
    const { f } = await bare(ws, [{ guest: "/data", path: "data" }]);
    const stream = deriveStream("1", "fuzz-args");
    const values = (): unknown => {
      const k = stream.int(9);
      return [0, -1, 0xffffffff, 65_536, 65_535, 3, stream.u32(), 2 ** 31, 1n << 63n][k];
    };
    let calls = 0;
    for (const [name, fn] of Object.entries(f)) {
      if (name === "proc_exit") continue;
      for (let i = 0; i < 300; i++) {
        const args = Array.from({ length: 9 }, values);
        const r = fn(...args);
        expect(Number.isInteger(r) && r >= 0 && r <= 76, `${name}(${args.join(",")}) = ${r}`).toBe(true);
        calls++;
      }
    }
    expect(calls).toBeGreaterThan(10_000);
    expect(f["fd_write"]!(1, 131_066, 2, 0)).toBe(Errno.FAULT);
    expect(f["fd_write"]!(1, 0, 100_000, 0)).toBe(Errno.INVAL);
    expect(f["args_get"]!(131_070, 0)).toBe(Errno.FAULT);
    expect(f["clock_time_get"]!(0, 0n, 131_071)).toBe(Errno.FAULT);
    expect(f["fd_read"]!(99, 0, 0, 0)).toBe(Errno.BADF);
  });

  it("clock_time_get and random_get are the virtual clock and the seeded stream", async () => {
    const clock = new VirtualClock("2026-01-01T00:00:00.000Z");
    const { f, dv, mem } = await bare(undefined, [], clock);
    expect(f["clock_time_get"]!(0, 0n, 8)).toBe(0);
    expect(f["clock_time_get"]!(1, 0n, 16)).toBe(0);
    expect(dv().getBigUint64(8, true)).toBe(BigInt(Date.UTC(2026, 0, 1)) * 1_000_000n);
    expect(dv().getBigUint64(16, true) - dv().getBigUint64(8, true)).toBe(1_000_000n); // read() steps 1 ms
    expect(f["clock_res_get"]!(0, 24)).toBe(0);
    expect(dv().getBigUint64(24, true)).toBe(1_000_000n);
    expect(f["clock_time_get"]!(9, 0n, 8)).toBe(Errno.INVAL);
    expect(f["random_get"]!(100, 70_000)).toBe(0);
    const expected = deriveStream("0", "t");
    expect(new Uint8Array(mem.buffer, 100, 70_000)).toEqual(new Uint8Array([...expected.bytes(65_536), ...expected.bytes(70_000 - 65_536)]));
  });

  it("poll_oneoff: a relative clock subscription completes at once by advancing the virtual clock", async () => {
    const clock = new VirtualClock(0);
    const { f, dv } = await bare(undefined, [], clock);
    const d = dv();
    d.setBigUint64(0, 42n, true); // userdata
    d.setUint8(8, 0); // clock
    d.setUint32(16, 1, true); // monotonic
    d.setBigUint64(24, 5_000_000_000n, true); // 5 s
    expect(f["poll_oneoff"]!(0, 64, 1, 128)).toBe(0);
    expect(dv().getUint32(128, true)).toBe(1);
    expect(dv().getBigUint64(64, true)).toBe(42n);
    expect(clock.now()).toBe(5000);
    expect(f["poll_oneoff"]!(0, 64, 0, 128)).toBe(Errno.INVAL);
  });

  it("stdin, stdout and stderr", async () => {
    const { f, dv, wasi } = await bare();
    const d = dv();
    d.setUint32(0, 100, true);
    d.setUint32(4, 10, true);
    expect(f["fd_read"]!(0, 0, 1, 8)).toBe(0);
    expect(dv().getUint32(8, true)).toBe(3);
    expect(f["fd_write"]!(1, 0, 1, 8)).toBe(0);
    expect(new TextDecoder().decode(wasi.ctx.stdout.bytes()).slice(0, 3)).toBe("abc");
    expect(f["fd_seek"]!(1, 0n, 0, 8)).toBe(Errno.SPIPE);
  });

  it("read-only resources: no create, write-open, truncate, rename into, unlink or link; the violation is remembered", async () => {
    const ws = Workspace.fromResources([{ root: "data", access: "read", files: { "a.txt": enc.encode("hello") } }]);
    const before = ws.digest();
    const step = ws.beginStep();
    const { f, put, dv, wasi } = await bare(step, [{ guest: "/data", path: "data" }, { guest: "/temp", path: "temp" }]);
    const open = (dirfd: number, path: string, oflags: number, rights: bigint): number => {
      const [p, l] = put(1000, path);
      return f["path_open"]!(dirfd, 0, p, l, oflags, rights, 0n, 0, 2000) as number;
    };
    expect(open(3, "a.txt", 0, Rights.FD_READ)).toBe(0);
    expect(open(3, "new.txt", OFlags.CREAT, Rights.FD_READ | Rights.FD_WRITE)).toBe(Errno.ACCES);
    expect(wasi.ctx.violation?.details["violationType"]).toBe("PERMISSION_DENIED");
    expect(open(3, "a.txt", 0, Rights.FD_WRITE)).toBe(Errno.ACCES);
    expect(open(3, "a.txt", OFlags.TRUNC, Rights.FD_READ)).toBe(Errno.ACCES);
    const [p, l] = put(1000, "a.txt");
    expect(f["path_unlink_file"]!(3, p, l)).toBe(Errno.ACCES);
    const [lp, ll] = put(1100, "b.txt");
    expect(f["path_link"]!(3, 0, p, l, 3, lp, ll)).toBe(Errno.ACCES); // a second name in a read-only root
    expect(f["path_link"]!(3, 0, p, l, 4, lp, ll)).toBe(Errno.ACCES); // …or in temp, whence the file could be written
    // A file made in temp (readwrite) cannot be renamed into data (read).
    expect(open(4, "t.txt", OFlags.CREAT, Rights.FD_READ | Rights.FD_WRITE)).toBe(0);
    const fd = dv().getUint32(2000, true);
    const [bp, bl] = put(3000, "payload");
    dv().setUint32(100, bp, true);
    dv().setUint32(104, bl, true);
    expect(f["fd_write"]!(fd, 100, 1, 108)).toBe(0);
    expect(f["fd_close"]!(fd)).toBe(0);
    expect(new TextDecoder().decode(step.read("temp/t.txt"))).toBe("payload");
    const [np, nl] = put(4000, "moved.txt");
    const [op, ol] = put(4100, "t.txt");
    expect(f["path_rename"]!(4, op, ol, 3, np, nl)).toBe(Errno.ACCES);
    expect(step.read("temp/t.txt").length).toBe(7); // the failed rename left the source in place
    expect(step.violation()).not.toBeNull(); // the step cannot be committed (seed 003 §4.3)
    step.rollback();
    expect(ws.digest()).toBe(before);
  });

  it("the escape corpus tool: every escape is refused and the workspace digest is unchanged", async () => {
    const ws = Workspace.fromResources([{ root: "data", access: "readwrite", files: { "input.txt": enc.encode("x") } }]);
    const seed = ws.beginStep();
    seed.symlink("data/escape-link", "/");
    seed.commit();
    const before = ws.digest();
    const step = ws.beginStep();
    const r = await runCommand(tool("escape"), step, [{ guest: "/data", path: "data" }]);
    expect(r.exit).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      dotdot: Errno.NOTCAPABLE,
      absolute: Errno.NOTCAPABLE,
      inner_dotdot: Errno.NOTCAPABLE, // "a/../../x": "a" is missing, but the text climbs out: an escape all the same
      nul: Errno.INVAL, // no path can hold a NUL (POSIX); the shim never cuts a path at one
      backslash: Errno.NOTCAPABLE,
      link: Errno.NOTCAPABLE,
      create_outside: Errno.NOTCAPABLE,
      mkdir_outside: Errno.NOTCAPABLE,
      bad_pointer: Errno.FAULT,
      symlink: Errno.PERM, // an absolute target is never made by a guest
      hardlink: 0, // input.txt → copy: a second name inside the preopen, not an escape
      readlink: 0, // reading escape-link's text ("/") is allowed; following it is refused ("link" above)
      libc_fopen: 1,
    });
    expect(r.wasi.ctx.violation?.details["violationType"]).toBe("RESOURCE_ACCESS");
    expect(step.violation()).not.toBeNull();
    step.rollback();
    expect(ws.digest()).toBe(before);
  });

  it("the C tool reads a preopened file; byte-identical output twice", async () => {
    const ws = new Workspace();
    ws.write("data/input.txt", enc.encode("abc"));
    const r1 = await runCommand(tool("c-sha"), ws, [{ guest: "/data", path: "data" }]);
    const r2 = await runCommand(tool("c-sha"), ws, [{ guest: "/data", path: "data" }]);
    expect(r1.exit).toBe(0);
    expect(JSON.parse(r1.stdout)).toEqual({
      path: "/data/input.txt",
      size: 3,
      sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    });
    expect(r2.stdout).toBe(r1.stdout);
    const missing = await runCommand(tool("c-sha"), ws, [{ guest: "/data", path: "data" }], "0", ["c-sha", "/data/nope"]);
    expect(missing.exit).toBe(3);
    expect(missing.stderr).toContain("cannot open /data/nope");
  });

  it("fd_readdir lists . .. and the entries, deterministically", async () => {
    const ws = new Workspace();
    ws.write("d/b.txt", enc.encode("1"));
    ws.write("d/a.txt", enc.encode("22"));
    const { f, dv, mem } = await bare(ws, [{ guest: "/d", path: "d" }]);
    expect(f["fd_readdir"]!(3, 0, 512, 0n, 600)).toBe(0);
    const used = dv().getUint32(600, true);
    const names: string[] = [];
    for (let at = 0; at < used; ) {
      const len = dv().getUint32(at + 16, true);
      names.push(new TextDecoder().decode(new Uint8Array(mem.buffer, at + 24, len)));
      at += 24 + len;
    }
    expect(names).toEqual([".", "..", "a.txt", "b.txt"]);
  });
});
