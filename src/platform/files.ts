/**
 * Host file reading for the CLI (`reach-wasm wasi --dir`): a bounded copy of a directory tree into memory. Runs on
 * Node and on Deno (through its `node:` compatibility layer). Nothing here writes to the host.
 * @module
 */
import { lstat, readFile, readdir, readlink, realpath } from "./_fs.ts";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { ReachError } from "../protocol/mod.ts";
import { POSIX_MODES, userId } from "./_safe-fs.ts";

/** Limits of {@link readDirTree}. */
export type TreeLimits = {
  /** Most entries (files, directories, links) (default 10 000). */
  maxEntries?: number;
  /** Most bytes of all files together (default 256 MiB). */
  maxTotalBytes?: number;
  /** Deepest nesting (default 64). */
  maxDepth?: number;
};

/** A directory tree in memory: files and directories by relative `/`-separated path, links with their target. */
export type HostTree = { files: Map<string, Uint8Array>; dirs: string[]; links: Map<string, string> };

function refuse(message: string): ReachError {
  return new ReachError("PROTO_INVALID_ARGUMENT", message);
}

/**
 * Why a path that is not a regular file is refused, and what to give instead.
 * @param st its `lstat`
 * @returns e.g. `is a symbolic link; reach-wasm reads no file through a link: give the path of the file it points to`
 * @example `${JSON.stringify(path)} ${notAFile(await lstat(path))}`
 */
export function notAFile(st: { isSymbolicLink(): boolean; isDirectory(): boolean }): string {
  if (st.isSymbolicLink()) return "is a symbolic link; reach-wasm reads no file through a link: give the path of the file it points to";
  if (st.isDirectory()) return "is a directory; give a file";
  return "is not a regular file (a FIFO, socket or device); give a file";
}

/**
 * Read a file, refusing anything larger than `maxBytes`.
 * @param path host path
 * @param maxBytes the largest accepted size (default 256 MiB)
 * @returns the bytes
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when it cannot be read, is not a regular file, or is too large
 * @example const wasm = await readHostFile("tool.wasm");
 */
export async function readHostFile(path: string, maxBytes = 256 * 1024 * 1024): Promise<Uint8Array> {
  try {
    const st = await lstat(path);
    if (!st.isFile()) throw refuse(`${JSON.stringify(path)} ${notAFile(st)}`);
    if (st.size > maxBytes) throw refuse(`${JSON.stringify(path)} is larger than ${maxBytes} bytes`);
    return new Uint8Array(await readFile(path));
  } catch (err) {
    if (err instanceof ReachError) throw err;
    const code = (err as { code?: string }).code;
    if (code === "ENOENT") throw refuse(`${JSON.stringify(path)} does not exist; check the path`);
    if (code === "EACCES") throw refuse(`cannot read ${JSON.stringify(path)}: permission denied; give a file you can read`);
    throw refuse(`cannot read ${JSON.stringify(path)}: ${(err as Error).message}`);
  }
}

/**
 * Refuse an output path that is one of the command's inputs: writing there would replace the file being read
 * (`redact x --out x`, `approve H --key k --out k`). The same file is found by path and by identity (a hard link, or
 * a path through a linked folder).
 * @param out the output path (`--out FILE`)
 * @param inputs the input paths (a capsule, a key file, a trust store; undefined ones are skipped)
 * @param fix what to do instead, for the message
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when `out` names the same file as an input
 * @example await refuseOutputOverInput("x.capsule.tar.gz", ["x.capsule.tar.gz"], "write the redacted copy to a new file");
 */
export async function refuseOutputOverInput(out: string, inputs: readonly (string | undefined)[], fix: string): Promise<void> {
  const o = await lstat(out).catch(() => null);
  for (const input of inputs) {
    if (input === undefined) continue;
    let same = resolve(out) === resolve(input);
    if (!same && o !== null) {
      const i = await lstat(input).catch(() => null);
      same = i !== null && o.dev === i.dev && o.ino === i.ino;
    }
    if (same) throw refuse(`--out ${JSON.stringify(out)} is the input ${JSON.stringify(input)} itself, which it would replace; ${fix}`);
  }
}

/**
 * Read a private key file (`--key FILE`), checked the way the caches check their key: a regular file (not a link)
 * owned by this user and neither readable nor writable by its group or others (keygen writes it 0600).
 * @param path host path
 * @param what how the message names it (default `--key`)
 * @returns the bytes (at most 64 KiB)
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when it cannot be read, is not a regular file, belongs to another user,
 *   or is open to others (with the `chmod 600` that fixes it)
 * @example const text = new TextDecoder().decode(await readPrivateKeyFile("reach-wasm.key"));
 */
export async function readPrivateKeyFile(path: string, what = "--key"): Promise<Uint8Array> {
  const st = await lstat(path).catch(() => null);
  if (st === null) throw refuse(`${what} ${JSON.stringify(path)} does not exist; give the private key file \`reach-wasm keygen\` wrote`);
  const me = userId();
  if (st !== null && st.isFile() && POSIX_MODES) {
    if (me !== null && st.uid !== me) throw refuse(`${what} ${JSON.stringify(path)} is owned by uid ${st.uid}, not by this user (${me}); a private key must be your own file`);
    if ((st.mode & 0o077) !== 0) {
      throw refuse(`${what} ${JSON.stringify(path)} is open to other users (mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}); ` +
        `a private key must be readable by you alone — run \`chmod 600 ${path}\` (and make a new key if others may have read it)`);
    }
  }
  return await readHostFile(path, 64 * 1024);
}

/**
 * Copy a host directory tree into memory, in sorted order. Symbolic links are kept as link records when their
 * target stays inside the directory, and refused when it leaves it (or cannot be resolved); devices, sockets and
 * FIFOs are refused.
 * @param root the host directory
 * @param limits entry, byte and depth limits
 * @returns the tree
 * @throws ReachError `PROTO_INVALID_ARGUMENT` for an unreadable directory, a link leaving it, a special file, or a
 *   limit exceeded
 * @example const tree = await readDirTree("./data");
 */
export async function readDirTree(root: string, limits: TreeLimits = {}): Promise<HostTree> {
  const maxEntries = limits.maxEntries ?? 10_000;
  const maxTotal = limits.maxTotalBytes ?? 256 * 1024 * 1024;
  const maxDepth = limits.maxDepth ?? 64;
  const tree: HostTree = { files: new Map(), dirs: [], links: new Map() };
  let entries = 0;
  let total = 0;
  let base: string;
  try {
    base = await realpath(root);
    if (!(await lstat(base)).isDirectory()) throw new Error("not a directory");
  } catch (err) {
    throw refuse(`--dir ${JSON.stringify(root)}: cannot read the directory (${(err as Error).message})`);
  }
  const walk = async (dir: string, rel: string, depth: number): Promise<void> => {
    if (depth > maxDepth) throw refuse(`--dir ${JSON.stringify(root)}: deeper than ${maxDepth} levels`);
    const names = (await readdir(dir)).sort();
    for (const name of names) {
      if (++entries > maxEntries) throw refuse(`--dir ${JSON.stringify(root)}: more than ${maxEntries} entries; give a folder with fewer files`);
      const host = join(dir, name);
      const path = rel === "" ? name : `${rel}/${name}`;
      const st = await lstat(host);
      if (st.isSymbolicLink()) {
        const target = await readlink(host);
        const resolved = resolve(dirname(host), target);
        const inside = relative(base, resolved);
        if (isAbsolute(target) || inside === ".." || inside.startsWith(".." + sep) || isAbsolute(inside)) {
          throw refuse(`--dir ${JSON.stringify(root)}: the link ${JSON.stringify(path)} points outside the directory; remove it or copy the target in`);
        }
        tree.links.set(path, target);
      } else if (st.isDirectory()) {
        tree.dirs.push(path);
        await walk(host, path, depth + 1);
      } else if (st.isFile()) {
        total += st.size;
        if (total > maxTotal) throw refuse(`--dir ${JSON.stringify(root)}: more than ${maxTotal} bytes in all (${JSON.stringify(path)} passes the limit); move large files out of it`);
        tree.files.set(path, new Uint8Array(await readFile(host)));
      } else {
        throw refuse(`--dir ${JSON.stringify(root)}: ${JSON.stringify(path)} is not a regular file, directory or link`);
      }
    }
  };
  await walk(base, "", 0);
  return tree;
}
