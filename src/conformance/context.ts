/**
 * What the black-box cases share: the implementation as a command line (`cli`), fixtures made once per suite run
 * (`once`: a run of `packs/hello` that several categories inspect), fresh copies of the packs, capsule reading, and
 * the long-running processes to stop at the end. Nothing here knows how the implementation works inside: it only
 * runs its CLI (ARCHITECTURE.md "Contracts") and reads the files it writes.
 * @module
 */
import { readArchive } from "../capsule/mod.ts";
import type { ConformanceHost, ExecResult, ServedProcess } from "./types.ts";

/** The default bound of one implementation command (generous: verdicts never depend on speed). */
export const COMMAND_TIMEOUT_MS = 180_000;

/** One implementation command's outcome, with its `--json` object when stdout held exactly one. */
export type CliOutcome = ExecResult & { json: Record<string, unknown> | null };

/** A recorded event as a capsule's `events.jsonl` holds it. */
export type CapsuleEvent = {
  type: string;
  timestamp: string;
  payload: Record<string, unknown>;
  payloadHash: string;
  prevEventHash: string;
  eventHash: string;
  [key: string]: unknown;
};

const decoder = new TextDecoder("utf-8", { fatal: false });

/**
 * The first JSON object of a command's stdout, when stdout is exactly one (seed contract: `--json` prints one object).
 * @param stdout the text
 * @returns the object, or null
 */
export function parseJsonLine(stdout: string): Record<string, unknown> | null {
  const text = stdout.trim();
  if (text === "" || text.includes("\n")) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The shared state of one suite run (see the module notes). */
export class SuiteContext {
  readonly host: ConformanceHost;
  readonly scratch: string;
  readonly #memo = new Map<string, Promise<unknown>>();
  readonly #served: ServedProcess[] = [];

  /**
   * @param host the platform
   * @param scratch this run's scratch folder
   */
  constructor(host: ConformanceHost, scratch: string) {
    this.host = host;
    this.scratch = scratch;
  }

  /**
   * Make a fixture once per suite run; a failure is remembered too, so every case that needs it fails the same way.
   * @param key the fixture's name
   * @param make how to make it
   * @returns the fixture
   */
  once<T>(key: string, make: () => Promise<T>): Promise<T> {
    let p = this.#memo.get(key) as Promise<T> | undefined;
    if (p === undefined) {
      p = make();
      p.catch(() => {}); // observed by whoever awaits it
      this.#memo.set(key, p);
    }
    return p;
  }

  /** A path in the scratch folder. */
  at(...parts: string[]): string {
    return [this.scratch, ...parts].join("/");
  }

  /** A path in the installed package (`packs/…`, `conformance/…`). */
  resource(rel: string): string {
    return `${this.host.packageRoot}/${rel}`;
  }

  /**
   * Run the implementation.
   * @param args its arguments
   * @param timeoutMs the bound
   * @returns exit code, output, and the `--json` object when there is one
   */
  async cli(args: readonly string[], timeoutMs = COMMAND_TIMEOUT_MS): Promise<CliOutcome> {
    const r = await this.host.exec(args, { timeoutMs });
    return { ...r, json: parseJsonLine(r.stdout) };
  }

  /**
   * Start a long-running implementation process, stopped when the suite ends.
   * @param args its arguments
   * @returns the process, ready
   */
  async serve(args: readonly string[]): Promise<ServedProcess> {
    const p = await this.host.serve(args, { timeoutMs: 60_000 });
    this.#served.push(p);
    return p;
  }

  /**
   * A fresh copy of a pack of the package, so that no implementation can touch the installed one.
   * @param rel its folder relative to the package root (`packs/hello`)
   * @returns the copy's path
   */
  pack(rel: string): Promise<string> {
    return this.once(`pack:${rel}`, async () => {
      const to = this.at("packs", rel.replace(/\//g, "_"));
      await this.host.copyDir(this.resource(rel), to);
      return to;
    });
  }

  /**
   * A JSON file in the scratch folder.
   * @param name its file name
   * @param value its content
   * @returns its path
   */
  async jsonFile(name: string, value: unknown): Promise<string> {
    const path = this.at("inputs", name);
    await this.host.writeFile(path, new TextEncoder().encode(JSON.stringify(value)));
    return path;
  }

  /**
   * A capsule's entries (bounded reader).
   * @param path the capsule file
   * @returns entry name → bytes
   * @throws Error when it is missing or not a readable capsule
   */
  async capsule(path: string): Promise<Map<string, Uint8Array>> {
    const bytes = await this.host.readFile(path);
    if (bytes === null) throw new Error(`the capsule ${path} does not exist`);
    try {
      return readArchive(bytes);
    } catch (err) {
      throw new Error(`the capsule ${path} cannot be read: ${(err as Error).message}`);
    }
  }

  /** Stop every long-running process. */
  async close(): Promise<void> {
    for (const p of this.#served.splice(0)) await p.stop().catch(() => {});
  }

  /**
   * A message without host paths, so that verdicts are the same bytes on every machine and runtime.
   * @param text the message
   * @returns it with the scratch folder and the package root replaced
   */
  sanitize(text: string): string {
    return text.split(this.scratch).join("<scratch>").split(this.host.packageRoot).join("<package>");
  }
}

/**
 * The text of an entry.
 * @param entries a capsule's entries
 * @param name the entry
 * @returns its UTF-8 text
 * @throws Error when the entry is missing
 */
export function entryText(entries: ReadonlyMap<string, Uint8Array>, name: string): string {
  const bytes = entries.get(name);
  if (bytes === undefined) throw new Error(`the capsule has no ${name}`);
  return decoder.decode(bytes);
}

/**
 * The events of a capsule (`events.jsonl`), one JSON object per line.
 * @param entries a capsule's entries
 * @returns the events in order
 * @throws Error when a line is not a JSON object
 */
export function capsuleEvents(entries: ReadonlyMap<string, Uint8Array>): CapsuleEvent[] {
  return entryText(entries, "events.jsonl").split("\n").filter((l) => l !== "").map((line, i) => {
    const v = JSON.parse(line) as unknown;
    if (v === null || typeof v !== "object" || Array.isArray(v)) throw new Error(`events.jsonl line ${i + 1} is not a JSON object`);
    return v as CapsuleEvent;
  });
}
