/**
 * The file-descriptor table of one WASI instance (WASI preview1 `fd`): the standard streams, preopened
 * directories, opened directories and opened files. An opened file is an {@link OpenFile}: the content of one
 * workspace file node, held in memory and shared by every descriptor opened on that node (through any of its
 * names), so descriptors see each other's writes at once, as on POSIX. It is written back to its node (never to a
 * path looked up again, so a link or rename made meanwhile cannot redirect it) on `fd_close`, `fd_sync` /
 * `fd_datasync` and when the run ends (`WasiPreview1.finish`). Other workspace users (the `reach` host API) see
 * the content as last written back.
 * @module
 */
import { ReachError } from "../../protocol/mod.ts";
import type { WorkspaceView } from "../workspace/workspace.ts";
import { Errno, FileType, WasiErrno } from "./errno.ts";

/** Most descriptors open at once (`EMFILE` beyond). */
export const MAX_OPEN_FDS = 1024;
/** Largest size an open file may reach in memory (`EFBIG` beyond); the workspace limits apply on write-back. */
export const MAX_OPEN_FILE_BYTES = 64 * 1024 * 1024;

/** A capped output stream (stdout or stderr). Exceeding the cap halts the guest with `EXEC_RESOURCE_EXHAUSTED`. */
export class OutputSink {
  readonly #name: string;
  readonly #cap: number;
  readonly #chunks: Uint8Array[] = [];
  #size = 0;
  readonly #onChunk: ((bytes: Uint8Array) => void) | undefined;

  /**
   * @param name "stdout" or "stderr" (for messages)
   * @param cap the most bytes accepted
   * @param onChunk optional pass-through called with a copy of every accepted chunk (the CLI streams with it)
   */
  constructor(name: string, cap: number, onChunk?: (bytes: Uint8Array) => void) {
    this.#name = name;
    this.#cap = cap;
    this.#onChunk = onChunk;
  }

  /**
   * Append bytes.
   * @param bytes the bytes (copied)
   * @returns nothing
   * @throws ReachError `EXEC_RESOURCE_EXHAUSTED` when the cap would be passed (the caller halts the guest)
   * @example sink.write(new Uint8Array([104, 105]))
   */
  write(bytes: Uint8Array): void {
    if (this.#size + bytes.length > this.#cap) {
      throw new ReachError(
        "EXEC_RESOURCE_EXHAUSTED",
        `the tool wrote more than ${this.#cap} bytes to ${this.#name}; write less or raise the output limit`,
        { details: { stream: this.#name, limit: this.#cap } },
      );
    }
    const copy = bytes.slice();
    this.#chunks.push(copy);
    this.#size += copy.length;
    this.#onChunk?.(copy);
  }

  /** Everything written so far. @returns the concatenated bytes @example sink.bytes() */
  bytes(): Uint8Array {
    const out = new Uint8Array(this.#size);
    let at = 0;
    for (const c of this.#chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

/** Standard input: the given bytes, read once. */
export type StdinEntry = { kind: "stdin"; data: Uint8Array; pos: number; rights: bigint };
/** Standard output or error. */
export type OutEntry = { kind: "out"; sink: OutputSink; rights: bigint };
/** The preopened directory a directory descriptor descends from: its guest name and workspace folder. */
export type DirBase = { guest: string; path: string };
/**
 * A directory: `path` is its normalised workspace path (paths given with this descriptor may not leave it);
 * `preopen` the guest name of a preopened one; `base` the preopen it descends from.
 */
export type DirEntry = { kind: "dir"; path: string; preopen: string | null; base: DirBase; rights: bigint; inheriting: bigint };
/** The content of one workspace file node while descriptors are open on it (see the module notes). */
export type OpenFile = {
  /** The workspace file node. */
  ino: number;
  /** The name it was last known under (a hint for writing back). */
  path: string;
  data: Uint8Array;
  size: number;
  dirty: boolean;
  /** How many descriptors use it. */
  refs: number;
};
/** An open regular file: a position and flags over a shared {@link OpenFile}. */
export type FileEntry = { kind: "file"; file: OpenFile; pos: number; fdflags: number; rights: bigint };
/** One descriptor. */
export type FdEntry = StdinEntry | OutEntry | DirEntry | FileEntry;

/**
 * The table. Descriptors are allocated lowest-free-first from 3 (0–2 are the standard streams), so the numbers a
 * guest sees are deterministic.
 * @example const fds = new FdTable(); fds.set(0, { kind: "stdin", data, pos: 0, rights });
 */
export class FdTable {
  readonly #entries = new Map<number, FdEntry>();

  /**
   * Look up a descriptor.
   * @param fd the guest's descriptor number
   * @returns the entry
   * @throws WasiErrno `EBADF` when it is not open
   * @example fds.get(1)
   */
  get(fd: number): FdEntry {
    const e = Number.isInteger(fd) ? this.#entries.get(fd >>> 0) : undefined;
    if (e === undefined) throw new WasiErrno(Errno.BADF, `fd ${fd} is not open`);
    return e;
  }

  /**
   * Put an entry at a given number (the standard streams, preopens, `fd_renumber`).
   * @param fd the number
   * @param entry the entry
   * @returns nothing
   * @example fds.set(3, dir)
   */
  set(fd: number, entry: FdEntry): void {
    this.#entries.set(fd, entry);
  }

  /**
   * Allocate the lowest free number ≥ 3.
   * @param entry the entry
   * @returns its number
   * @throws WasiErrno `EMFILE`-like `NOMEM` when `MAX_OPEN_FDS` are open
   * @example const fd = fds.add(file)
   */
  add(entry: FdEntry): number {
    if (this.#entries.size >= MAX_OPEN_FDS) throw new WasiErrno(33 /* mfile */, "too many open files");
    let fd = 3;
    while (this.#entries.has(fd)) fd++;
    this.#entries.set(fd, entry);
    return fd;
  }

  /**
   * Refuse early when no descriptor is free, so that an open fails before it creates or truncates anything.
   * @returns nothing
   * @throws WasiErrno `EMFILE` when `MAX_OPEN_FDS` are open
   * @example fds.reserve()
   */
  reserve(): void {
    if (this.#entries.size >= MAX_OPEN_FDS) throw new WasiErrno(33 /* mfile */, "too many open files");
  }

  /**
   * Remove a descriptor (no write-back; see `flush`).
   * @param fd the number
   * @returns the removed entry
   * @throws WasiErrno `EBADF`
   * @example fds.remove(4)
   */
  remove(fd: number): FdEntry {
    const e = this.get(fd);
    this.#entries.delete(fd >>> 0);
    return e;
  }

  /**
   * All entries, in descriptor order.
   * @returns `[fd, entry]` pairs
   * @example for (const [fd, e] of fds.entries()) …
   */
  entries(): [number, FdEntry][] {
    return [...this.#entries].sort((a, b) => a[0] - b[0]);
  }
}

/**
 * Write a dirty open file back to its workspace file node (WASI `fd_sync`, `fd_close`).
 * @param fs the workspace view
 * @param f the open file
 * @returns nothing
 * @throws ReachError from the workspace (mapped to errno by the caller)
 * @example flush(ws, entry.file)
 */
export function flush(fs: WorkspaceView, f: OpenFile): void {
  if (!f.dirty) return;
  fs.writeNode(f.ino, f.data.subarray(0, f.size), f.path);
  f.dirty = false;
}

/**
 * Make room for `size` bytes in an open file, growing the backing buffer geometrically.
 * @param f the file entry
 * @param size the size needed
 * @returns nothing
 * @throws WasiErrno `EFBIG` beyond `MAX_OPEN_FILE_BYTES`
 * @example ensureCapacity(file, file.pos + n)
 */
export function ensureCapacity(f: OpenFile, size: number): void {
  if (size > MAX_OPEN_FILE_BYTES) throw new WasiErrno(Errno.FBIG, `file would exceed ${MAX_OPEN_FILE_BYTES} bytes`);
  if (size <= f.data.length) return;
  const next = new Uint8Array(Math.min(MAX_OPEN_FILE_BYTES, Math.max(size, f.data.length * 2, 4096)));
  next.set(f.data.subarray(0, f.size));
  f.data = next;
}

/**
 * The WASI file type of an entry.
 * @param e the entry
 * @returns a `FileType` value
 * @example fileTypeOf(fds.get(1)) // CHARACTER_DEVICE
 */
export function fileTypeOf(e: FdEntry): number {
  switch (e.kind) {
    case "dir":
      return FileType.DIRECTORY;
    case "file":
      return FileType.REGULAR_FILE;
    default:
      return FileType.CHARACTER_DEVICE;
  }
}

/**
 * The `st_ino` of an entry: a file's workspace node number (shared by its hard links), else a stable number from
 * the path (FNV-1a 64 of its UTF-8 bytes, top bit set so it never equals a node number). Deterministic.
 * @param path a normalised workspace path
 * @param node the file node, or null for a directory or link
 * @returns a u64
 * @example inodeOf("data", null)
 */
export function inodeOf(path: string, node: number | null): bigint {
  if (node !== null) return BigInt(node);
  let h = 0xcbf29ce484222325n;
  for (const b of encoder.encode(path)) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h | (1n << 63n);
}

const encoder = new TextEncoder();
