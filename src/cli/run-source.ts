/**
 * Reading a run from the host for `show`, `report` and `diff`: a capsule (`{runHash}.capsule.tar.gz`, read bounded
 * and strict by `readRunCapsule`) or a run directory (`<out>/runs/<runHash>/`, the readable run files `run` writes).
 * A run directory's files are mapped onto capsule entry names; when the capsule `run` wrote beside it
 * (`<out>/<runHash>.capsule.tar.gz`) is there, it is read instead (it holds the pack and the workspace before), with
 * the directory's `evidence.json` for real durations. Shared by the three commands (not a command itself).
 * @module
 */
import { lstat, readdir } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { DEFAULT_ARCHIVE_LIMITS } from "../engine/mod.ts";
import { readRunCapsule } from "../engine/mod.ts";
import type { RunCapsule } from "../engine/mod.ts";
import { notAFile, readHostFile } from "../platform/files.ts";
import { ReachError } from "../protocol/mod.ts";
import type { RunSource } from "../report/mod.ts";

/** Bounds of a run directory read into memory. */
const DIR_LIMITS = { entries: 100_000, bytes: 1024 * 1024 * 1024, depth: 64 };
const MAX_EVIDENCE_BYTES = 64 * 1024 * 1024;

/** A capsule this large (bytes) or larger gets progress lines even when not on a TTY. */
export const LARGE_CAPSULE_BYTES = 8 * 1024 * 1024;

/**
 * Whether reading and checking the run at `path` is worth announcing: a capsule of {@link LARGE_CAPSULE_BYTES} or more.
 * @param path the host path
 * @returns true for a large capsule file
 * @example await progress.task("reading", () => readHostRun(p), { announce: await isLargeRun(p) })
 */
export async function isLargeRun(path: string): Promise<boolean> {
  try {
    const st = await lstat(path);
    return st.isFile() && st.size >= LARGE_CAPSULE_BYTES;
  } catch {
    return false;
  }
}

/** A run read from the host: its source for `src/report/`, and the capsule when it is one. */
export type HostRun = { source: RunSource; capsule: RunCapsule | null; path: string };

/** "dir", "file", why it is neither (see {@link notAFile}), or null when it does not exist. */
async function kindOf(path: string): Promise<string | null> {
  try {
    const st = await lstat(path);
    return st.isDirectory() ? "dir" : st.isFile() ? "file" : notAFile(st);
  } catch {
    return null;
  }
}

function parseEvidence(bytes: Uint8Array | null): unknown {
  if (bytes === null) return undefined;
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as unknown;
  } catch {
    return undefined;
  }
}

async function optional(path: string, max: number): Promise<Uint8Array | null> {
  return (await kindOf(path)) === "file" ? await readHostFile(path, max) : null;
}

/** Every regular file under `root` (relative `/` paths), bounded; links and special files are skipped. */
async function readTree(root: string): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  let total = 0;
  const walk = async (dir: string, rel: string, depth: number): Promise<void> => {
    if (depth > DIR_LIMITS.depth) throw new ReachError("PROTO_INVALID_ARGUMENT", `${JSON.stringify(root)} is nested deeper than ${DIR_LIMITS.depth} levels; it is not a run directory`);
    for (const name of (await readdir(dir)).sort()) {
      const host = join(dir, name);
      const path = rel === "" ? name : `${rel}/${name}`;
      const kind = await kindOf(host);
      if (kind === "dir") await walk(host, path, depth + 1);
      else if (kind === "file") {
        if (files.size >= DIR_LIMITS.entries) throw new ReachError("PROTO_INVALID_ARGUMENT", `${JSON.stringify(root)} holds more than ${DIR_LIMITS.entries} files; it is not a run directory`);
        const bytes = await readHostFile(host, DIR_LIMITS.bytes - total);
        total += bytes.length;
        files.set(path, bytes);
      }
    }
  };
  await walk(root, "", 0);
  return files;
}

async function readRunDir(path: string): Promise<HostRun> {
  const name = basename(path.replace(/[/\\]+$/, ""));
  const beside = join(dirname(dirname(path.replace(/[/\\]+$/, ""))), `${name}.capsule.tar.gz`);
  const evidence = parseEvidence(await optional(join(path, "evidence.json"), MAX_EVIDENCE_BYTES));
  if (/^[0-9a-f]{64}$/.test(name) && (await kindOf(beside)) === "file") {
    const capsule = readRunCapsule(await readHostFile(beside, DEFAULT_ARCHIVE_LIMITS.maxCompressedBytes));
    if (capsule.index.runHash === name) return { source: { origin: "capsule", entries: capsule.entries, index: capsule.index, damaged: capsule.damaged, evidence }, capsule, path: beside };
  }
  const files = await readTree(path);
  if (!files.has("events.jsonl")) {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `${JSON.stringify(path)} has no events.jsonl: give a capsule ({runHash}.capsule.tar.gz) or a run directory (<out>/runs/<runHash>/)`);
  }
  const entries = new Map<string, Uint8Array>();
  for (const [p, bytes] of files) {
    if (p === "evidence.json") continue;
    entries.set(p.startsWith("workspace/") ? `workspace/after/${p.slice("workspace/".length)}` : p, bytes);
  }
  return { source: { origin: "run-dir", entries, evidence }, capsule: null, path };
}

/**
 * Read a capsule file.
 * @param path the `.capsule.tar.gz`
 * @returns the run (with real durations when `runs/<runHash>/evidence.json` is beside the capsule)
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when it cannot be read; `REPLAY_CAPSULE_*` when it is not a capsule
 * @example const { source, capsule } = await readCapsuleRun("x.capsule.tar.gz");
 */
export async function readCapsuleRun(path: string): Promise<HostRun> {
  const capsule = readRunCapsule(await readHostFile(path, DEFAULT_ARCHIVE_LIMITS.maxCompressedBytes));
  const evidencePath = join(dirname(path), "runs", capsule.index.runHash, "evidence.json");
  const evidence = parseEvidence(await optional(evidencePath, MAX_EVIDENCE_BYTES).catch(() => null));
  return { source: { origin: "capsule", entries: capsule.entries, index: capsule.index, damaged: capsule.damaged, evidence }, capsule, path };
}

/**
 * Read a run: a capsule file or a run directory.
 * @param path the host path
 * @returns the run
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when the path is neither; `REPLAY_CAPSULE_*` for a bad capsule
 * @example const { source } = await readHostRun(".reach/runs/d1de…");
 */
export async function readHostRun(path: string): Promise<HostRun> {
  const kind = await kindOf(path);
  if (kind === "dir") return await readRunDir(path);
  if (kind === "file") return await readCapsuleRun(path);
  throw new ReachError("PROTO_INVALID_ARGUMENT", `${JSON.stringify(path)} ${kind ?? "does not exist"}; a run is a capsule ({runHash}.capsule.tar.gz) or a run directory (<out>/runs/<runHash>/)`);
}

/**
 * Refuse a run directory where a command reads only a capsule (`replay`, `verify`), naming the capsule beside it.
 * @param path the host path given
 * @param command the command, for the message
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when `path` is a run directory (events.jsonl and no reach.json)
 * @example await refuseRunDirectory(".reach/runs/d1de…", "replay"); // throws: give .reach/d1de….capsule.tar.gz
 */
export async function refuseRunDirectory(path: string, command: string): Promise<void> {
  if ((await kindOf(path)) !== "dir" || (await kindOf(join(path, "events.jsonl"))) !== "file" || (await kindOf(join(path, "reach.json"))) !== null) return;
  const trimmed = path.replace(/[/\\]+$/, "");
  const beside = join(dirname(dirname(trimmed)), `${basename(trimmed)}.capsule.tar.gz`);
  const capsule = (await kindOf(beside)) === "file" ? beside : "<out>/<runHash>.capsule.tar.gz";
  throw new ReachError("PROTO_INVALID_ARGUMENT", `${JSON.stringify(path)} is a run directory (a run's readable files); ${command} reads a run's capsule: give ${capsule}`);
}
