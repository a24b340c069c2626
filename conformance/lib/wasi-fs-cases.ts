/**
 * Workspace links and the WASI preview1 file calls, runtime-neutral: symbolic links followed only inside the
 * workspace or beneath a directory descriptor, loops, hard links, renames, and the two hostile fixtures
 * (`wasm-tools/fixtures/escape.c`, `links.c`) run through the shim. Each case's fingerprint is a SHA-256 over what it
 * observed (outcomes, guest output, workspace digest), so Node and Deno must agree byte for byte.
 * @module
 */
import { sha256Hex, utf8 } from "../../src/canonical/sha256.ts";
import { VirtualClock } from "../../src/determinism/clock.ts";
import { deriveStream } from "../../src/determinism/prng.ts";
import { ReachError } from "../../src/protocol/errors.ts";
import { WasiExit, virtualSources } from "../../src/sandbox/wasi/context.ts";
import type { Preopen } from "../../src/sandbox/wasi/context.ts";
import { WasiPreview1 } from "../../src/sandbox/wasi/preview1.ts";
import { Workspace, WorkspaceError } from "../../src/sandbox/workspace/workspace.ts";
import type { WorkspaceView } from "../../src/sandbox/workspace/workspace.ts";
import { check } from "./types.ts";
import type { ConformanceCase, ConformanceIO } from "./types.ts";

/** What an operation ended in: its result, an errno, or a violation type. */
function outcome(fn: () => unknown): string {
  try {
    const r = fn();
    return r instanceof Uint8Array ? `ok:${sha256Hex(r).slice(0, 16)}` : `ok:${JSON.stringify(r ?? null)}`;
  } catch (err) {
    if (err instanceof WorkspaceError) return err.errno;
    if (err instanceof ReachError) return `${err.code}:${String(err.details["violationType"] ?? "")}`;
    throw err;
  }
}

/** A confined workspace with links planted for the corpus. */
function linkedWorkspace(): Workspace {
  const ws = Workspace.fromResources([
    { root: "data", access: "read", files: { "in.txt": utf8("input"), "sub/deep.txt": utf8("deep") } },
    { root: "out", access: "readwrite", files: { "ok.txt": utf8("ok") } },
  ]);
  const links: [string, string][] = [
    ["out/in", "../data/in.txt"], ["out/abs", "/data/sub"], ["out/root", "/"], ["out/up", "../../x"],
    ["out/secret", "../undeclared/key"], ["out/loop", "loop"], ["out/ping", "pong"], ["out/pong", "ping"],
    ["out/dangling", "new.txt"], ["out/via-missing", "nothing/../../../x"],
  ];
  for (const [path, target] of links) ws.symlink(path, target);
  return ws;
}

/** Run a WASI command over a workspace view; returns its stdout, exit code and first violation. */
async function runGuest(code: Uint8Array, fs: WorkspaceView, preopens: Preopen[]): Promise<{ stdout: string; exit: number; violation: string }> {
  const wasi = new WasiPreview1({ args: ["tool"], sources: virtualSources(new VirtualClock(0), deriveStream("0", "wasi")), fs, preopens });
  const module = await WebAssembly.compile(code as BufferSource);
  const instance = await WebAssembly.instantiate(module, wasi.imports(module));
  wasi.bind(instance);
  let exit = 0;
  try {
    (instance.exports["_start"] as () => void)();
  } catch (e) {
    if (!(e instanceof WasiExit)) throw e;
    exit = e.code;
  }
  wasi.finish();
  const v = wasi.ctx.violation;
  return { stdout: new TextDecoder().decode(wasi.ctx.stdout.bytes()), exit, violation: v === null ? "" : `${v.code}:${String(v.details["violationType"])}` };
}

/**
 * The cases.
 * @param io file access rooted at conformance/
 * @returns the cases
 */
export function wasiFsCases(io: ConformanceIO): ConformanceCase[] {
  return [
    {
      name: "workspace links: reads, writes and walks through links, refused where they lead out or widen access",
      run: () => {
        const ws = linkedWorkspace();
        const step = ws.beginStep();
        const lines: string[] = [];
        for (const path of ["out/in", "out/abs/deep.txt", "out/root", "out/root/data/in.txt", "out/up", "out/secret", "out/loop", "out/ping", "out/dangling", "out/via-missing"]) {
          lines.push(`${path} read=${outcome(() => step.read(path))} stat=${outcome(() => step.stat(path))} write=${outcome(() => step.write(path, utf8("w")))}`);
        }
        check(lines[0]!.includes("write=POLICY_VIOLATION:PERMISSION_DENIED"), "a link into a read-only root was written through");
        check(lines[6]!.includes("read=ELOOP"), "a loop is not ELOOP");
        lines.push(`digest=${step.digest()}`);
        step.rollback();
        lines.push(`base=${ws.digest()}`);
        return sha256Hex(lines.join("\n"));
      },
    },
    {
      name: "workspace hard links and rename: one node, two names; POSIX rename; digest after the sequence",
      run: () => {
        const ws = linkedWorkspace();
        const lines = [
          outcome(() => ws.link("out/ok.txt", "out/ok2.txt")),
          outcome(() => ws.write("out/ok2.txt", utf8("shared"))),
          outcome(() => ws.read("out/ok.txt")),
          outcome(() => ws.lstat("out/ok.txt").nlink),
          outcome(() => ws.link("data/in.txt", "out/in2.txt")),
          outcome(() => ws.rename("out/ok.txt", "out/moved.txt")),
          outcome(() => ws.rename("out", "temp/out")),
          outcome(() => ws.mkdir("out/d/e")),
          outcome(() => ws.rename("out/d", "out/d/e/f")),
          outcome(() => ws.rename("out/d", "out/d2")),
          outcome(() => ws.readlink("out/in")),
          `bytes=${ws.bytesUsed()}`,
          `digest=${ws.digest()}`,
          `files=${JSON.stringify(ws.snapshot())}`,
        ];
        check(lines[2] === `ok:${sha256Hex(utf8("shared")).slice(0, 16)}`, "a hard link did not share its content");
        return sha256Hex(lines.join("\n"));
      },
    },
    {
      name: "wasi fixture links.wasm: every escape refused, swap and hard links as documented",
      run: async () => {
        const ws = Workspace.fromResources([
          { root: "data", access: "readwrite" },
          { root: "ro", access: "read", files: { "secret.txt": utf8("secret") } },
        ]);
        const before = ws.digest();
        const step = ws.beginStep();
        const r = await runGuest(io.readBytes("../wasm-tools/build/links.wasm"), step, [{ guest: "/data", path: "data" }, { guest: "/ro", path: "ro" }]);
        const out = JSON.parse(r.stdout) as Record<string, number>;
        for (const k of ["dots_open", "dots_create", "chain_open", "cross_open"]) check(out[k] === 76, `${k} = ${out[k]}, expected ENOTCAPABLE`);
        check(out["swap_landed"] === 1 && out["swap_secret_kept"] === 1, "the swapped link redirected an open descriptor");
        const after = step.digest();
        step.rollback();
        check(ws.digest() === before, "the rolled-back step changed the workspace");
        return sha256Hex([r.stdout, String(r.exit), r.violation, after].join("\n"));
      },
    },
    {
      name: "wasi fixture escape.wasm with a planted link to /: refused, digest unchanged",
      run: async () => {
        const ws = Workspace.fromResources([{ root: "data", access: "readwrite", files: { "input.txt": utf8("x") } }]);
        ws.symlink("data/escape-link", "/");
        const before = ws.digest();
        const step = ws.beginStep();
        const r = await runGuest(io.readBytes("../wasm-tools/build/escape.wasm"), step, [{ guest: "/data", path: "data" }]);
        const out = JSON.parse(r.stdout) as Record<string, number>;
        check(out["link"] === 76 && out["dotdot"] === 76 && out["symlink"] === 63, `escape: ${r.stdout}`);
        check(r.violation === "POLICY_VIOLATION:RESOURCE_ACCESS", `violation ${r.violation}`);
        step.rollback();
        check(ws.digest() === before, "the rolled-back step changed the workspace");
        return sha256Hex([r.stdout, String(r.exit), r.violation].join("\n"));
      },
    },
  ];
}
