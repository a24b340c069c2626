/**
 * `run --events FILE|-`: seed 004's live event stream as JSONL (`src/engine/live-events.ts` maps each hashed event as
 * the engine appends it), with a `heartbeat` every `--heartbeat MS` (default 5000) until the run ends. A file is
 * created (or truncated) before the run starts and written line by line, so a reader can follow it while it grows.
 * @module
 */
import { closeSync, constants, fchmodSync, fstatSync, openSync, writeSync } from "node:fs";
import process from "node:process";
import { heartbeat, liveEventMapper } from "../engine/mod.ts";
import type { LiveRunEvent } from "../engine/mod.ts";
import type { RunProgress } from "../engine/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import type { CliIO } from "./io.ts";

/** A live event stream: feed it progress, close it when the run ended. */
export type EventStream = { onProgress: (p: RunProgress) => void; close: () => void; count: () => number };

/** `O_NOFOLLOW` where the system has it: the events of a run are never written through a link. */
const EVENTS_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0);

/** Open (create or truncate) `--events FILE`: never through a link; a regular file gets mode 0600 (it holds run data). */
function openEvents(target: string): number {
  let fd: number;
  try {
    fd = openSync(target, EVENTS_FLAGS, 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    const why = code === "ELOOP" ? "it is a symbolic link, and reach-wasm never writes through one" : code;
    throw new ReachError("PROTO_INVALID_ARGUMENT", `run: --events ${JSON.stringify(target)} cannot be written (${why}); name a file in a writable folder, or - for stdout`);
  }
  try {
    if (process.platform !== "win32" && fstatSync(fd).isFile()) fchmodSync(fd, 0o600);
  } catch {
    // a file of another user's that we may write but not chmod: it keeps its mode
  }
  return fd;
}

/**
 * Open the stream (`-`: stdout) and start its heartbeat.
 * @param target `--events` value
 * @param heartbeatMs milliseconds between heartbeats
 * @param io the command's streams (stdout for `-`)
 * @returns the stream
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when the file cannot be created
 * @example const events = openEventStream("events.jsonl", 5000, io); try { … } finally { events.close(); }
 */
export function openEventStream(target: string, heartbeatMs: number, io: CliIO): EventStream {
  let fd: number | null = null;
  if (target !== "-") {
    fd = openEvents(target);
  }
  let written = 0;
  let broken = false;
  const write = (e: LiveRunEvent): void => {
    if (broken) return;
    const line = JSON.stringify(e) + "\n";
    try {
      if (fd === null) io.stdout(line);
      else writeSync(fd, line);
      written++;
    } catch (err) {
      broken = true; // a full disk or a closed pipe ends the stream, never the run
      io.stderr(`reach-wasm: the event stream stopped: ${(err as Error).message}\n`);
    }
  };
  const now = (): string => new Date().toISOString();
  const map = liveEventMapper(now);
  let runId: string | null = null;
  let beats = 0;
  const timer = setInterval(() => write(heartbeat(runId, beats++, now())), heartbeatMs);
  return {
    onProgress: (p) => {
      if (p.kind !== "event") return;
      runId = p.event.runId;
      for (const e of map(p.event)) write(e);
    },
    close: () => {
      clearInterval(timer);
      if (fd !== null) closeSync(fd);
      fd = null;
      broken = true;
    },
    count: () => written,
  };
}
