/**
 * What crosses between a thread that calls the engine and the engine's thread (`engine-thread.ts`,
 * `engine-worker.ts`), and what both faces of an isolated engine call offer (`engine-inline.ts` runs the same on the
 * calling thread): types only.
 * @module
 */
import type { ErrorDetails } from "../protocol/mod.ts";
import type { EngineRun, EngineRunRequest } from "../engine/mod.ts";
import type { SessionBudget, SessionCall, SessionScope, SessionSpent, SessionTool, WorkspaceFile } from "../engine/mod.ts";
import type { RunProgress } from "../engine/mod.ts";
import type { JsonValue } from "../protocol/mod.ts";

/** What crosses to the worker: the request without functions (the worker makes its own fetch and progress). */
export type WireRequest = Omit<EngineRunRequest, "signal" | "interrupted" | "turn" | "fetch" | "onProgress" | "annex" | "trust" | "wallClock"> & {
  /** The trust store document (JSON text) and `unrestricted`. */
  trust?: { storeText?: string | null; unrestricted?: boolean };
  /** Give tools the runtime's `fetch` for `http.fetch` (the pack's policy still decides which hosts). */
  network?: boolean;
  /** The signing key file's text (reach-wasm key file JSON), parsed on the engine thread; overrides `key`. */
  keyFileText?: string;
};

/** Messages from the worker. */
export type FromWorker =
  | { kind: "progress"; progress: RunProgress }
  | { kind: "done"; run: WireRun }
  | { kind: "error"; error: ErrorDetails }
  | { kind: "session"; tools: SessionTool[]; pack: EngineRun["pack"]; budget: SessionBudget; scope: SessionScope }
  | { kind: "answer"; id: number; answer: WireCall }
  | { kind: "workspace"; id: number; files: WorkspaceFile[] }
  | { kind: "file"; id: number; bytes: Uint8Array | null };

/** An EngineRun as it crosses (its error as details). */
export type WireRun = Omit<EngineRun, "error"> & { error: ErrorDetails | null };
/** A SessionCall as it crosses. */
export type WireCall =
  | { ok: true; stepId: string; output: Record<string, JsonValue>; spent: SessionSpent }
  | { ok: false; stepId: string | null; error: ErrorDetails; ended: boolean; spent: SessionSpent }
  | { thrown: ErrorDetails };

/** Messages to the worker. */
export type ToWorker =
  | { kind: "run"; request: WireRequest; interrupt: SharedArrayBuffer }
  | { kind: "session"; request: WireRequest; interrupt: SharedArrayBuffer }
  | { kind: "call"; id: number; tool: string; args: JsonValue }
  | { kind: "workspace"; id: number }
  | { kind: "read"; id: number; path: string }
  | { kind: "close"; aborted: boolean }
  | { kind: "abort"; reason: string };

/** A session run on an engine thread. */
export type IsolatedSession = {
  readonly tools: SessionTool[];
  readonly pack: EngineRun["pack"];
  /** What the run may spend. */
  readonly budget: SessionBudget;
  /** What the run's calls may reach. */
  readonly scope: SessionScope;
  call(tool: string, args: JsonValue): Promise<SessionCall>;
  /** The workspace's regular files now (path and size, sorted); read-only. */
  workspace(): Promise<WorkspaceFile[]>;
  /** A copy of one workspace file's bytes, or null when there is no such file. */
  readWorkspace(path: string): Promise<Uint8Array | null>;
  close(aborted?: boolean): Promise<EngineRun>;
};
