/**
 * Progress on stderr for every long operation (planning, each step with its elapsed time and fuel, replay, reading
 * and verifying a capsule, building a pack). On a TTY it is one line updated in place (with a live elapsed time);
 * otherwise plain lines; nothing with `--quiet`. stdout is never touched, so `--json` output is unaffected.
 * This module owns the TTY decision: {@link detectTerminal} asks the platform, and `main.ts` hands the answer to
 * every command through `CliIO.terminal` (tests pass none: not a TTY).
 * @module
 */
import type { RunProgress } from "../engine/mod.ts";
import { terminalInfo } from "../platform/terminal.ts";
import type { TerminalInfo } from "../platform/terminal.ts";
import { rawIO } from "./io.ts";
import type { CliIO } from "./io.ts";
import { processClock } from "../platform/real-clock.ts";

/** A progress reporter for one command. */
export type Progress = {
  /** A transient status: replaces the line on a TTY, a plain line otherwise. */
  status(text: string): void;
  /** A line that stays (on a TTY the status line is cleared first). */
  line(text: string): void;
  /** The engine's run progress (`onProgress`). */
  run(p: RunProgress): void;
  /**
   * Run `fn` under a status line `label …`. Plain output prints `label …` and `label: done in N ms` when
   * `announce` (default true), else only a `done` line when it took a second or more.
   */
  task<T>(label: string, fn: () => Promise<T> | T, options?: { announce?: boolean }): Promise<T>;
  /** Clear the status line and stop the clock (idempotent). */
  done(): void;
};

/**
 * The process's terminal, from the platform (`src/platform/terminal.ts`).
 * @returns whether stdout and stderr are TTYs, whether colour is wanted, and stderr's width
 * @example await main(argv, { stdout, stderr, terminal: detectTerminal() });
 */
export function detectTerminal(): TerminalInfo {
  return terminalInfo();
}

/**
 * Whether a command's stdout may be coloured: a TTY and colour allowed (`NO_COLOR` unset, `TERM` not dumb).
 * @param io the command's streams
 * @returns true to colour
 * @example renderShow(view, { color: colourStdout(io) })
 */
export function colourStdout(io: CliIO): boolean {
  return io.terminal?.stdout === true && io.terminal.color;
}

function ms(n: number): string {
  return n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(1)} s`;
}

function fuel(text: string | undefined): string {
  return text === undefined ? "" : `, fuel ${text.replace(/\B(?=(\d{3})+(?!\d))/g, ",")}`;
}

/**
 * How one engine progress report reads.
 * @param p the report
 * @returns one line of text (no prefix)
 * @example describeProgress({ kind: "planning", attempt: 0 }) // "planning …"
 */
export function describeProgress(p: RunProgress): string {
  if (p.kind === "pack") {
    const who = `pack ${p.id}@${p.version}`;
    if (p.trust.trusted) return `${who} is signed by trusted key ${p.trust.keyName ?? p.trust.publicKey}`;
    const signed = p.trust.signed ? "signed by a key that is not in the trust store" : "not signed";
    return p.restricted
      ? `${who} is ${signed}: running it in the restricted executor (no network, no writes outside temp/, no memory writes); pass --unrestricted to grant its declared capabilities`
      : `${who} is ${signed}; running it unrestricted because of --unrestricted`;
  }
  if (p.kind === "warning") return `warning: ${p.message}`;
  if (p.kind === "planning") return p.attempt === 0 ? "planning …" : `planning again (attempt ${p.attempt}) …`;
  if (p.kind === "planned") return `plan ${p.planId}: ${p.steps} step${p.steps === 1 ? "" : "s"}, hash ${p.planHash.slice(0, 16)}…`;
  if (p.kind === "replan") return `replanning (attempt ${p.attempt}) after ${p.reason}`;
  if (p.kind === "event") return `event ${p.event.sequence} ${p.event.type}`;
  const head = `[${p.index + 1}/${p.total}] ${p.stepId} (${p.tool})`;
  if (p.status === "started") return `${head} …`;
  return `${head} ${p.status}${p.code === undefined ? "" : ` ${p.code}`} in ${ms(p.durationMs)}${fuel(p.fuel)}`;
}

/** A reporter that prints nothing (`--quiet`). */
const SILENT: Progress = { status() {}, line() {}, run() {}, task: async (_l, fn) => await fn(), done() {} };

/**
 * A progress reporter for a command.
 * @param io the command's streams (`quiet` silences it; `terminal.stderr` makes it one line in place)
 * @param now the clock for elapsed times (default the process's real clock)
 * @returns the reporter; call `done()` when the command ends (a `finally`)
 * @example const progress = createProgress(io); try { … progress.run(p) … } finally { progress.done(); }
 */
export function createProgress(io: CliIO, now: () => number = processClock.monotonicMs): Progress {
  if (io.quiet === true) return SILENT;
  return io.terminal?.stderr === true ? ttyProgress(io, io.terminal.columns, now) : plainProgress(io, now);
}

function plainProgress(io: CliIO, now: () => number): Progress {
  return {
    status: (text) => io.stderr(`reach-wasm: ${text}\n`),
    line: (text) => io.stderr(`reach-wasm: ${text}\n`),
    run: (r) => io.stderr(`reach-wasm: ${describeProgress(r)}\n`),
    task: async (label, fn, options) => {
      const t0 = now();
      const announce = options?.announce !== false;
      if (announce) io.stderr(`reach-wasm: ${label} …\n`);
      const out = await fn();
      const took = now() - t0;
      if (announce || took >= 1000) io.stderr(`reach-wasm: ${label}: done in ${ms(took)}\n`);
      return out;
    },
    done: () => {},
  };
}

function ttyProgress(io: CliIO, columns: number, now: () => number): Progress {
  let current: { text: string; since: number } | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  const draw = (): void => {
    if (current === null) return;
    const elapsed = now() - current.since;
    const text = `reach-wasm: ${current.text}${elapsed >= 1000 ? ` ${ms(elapsed)}` : ""}`;
    // the CLI's own control sequence raw; the text (a tool's name, a message) through the escaping stream
    rawIO(io).stderr("\r\u001b[2K");
    io.stderr(text.length >= columns ? `${text.slice(0, columns - 2)}…` : text);
  };
  const clear = (): void => {
    if (current !== null) rawIO(io).stderr("\r\u001b[2K");
    current = null;
  };
  const status = (text: string): void => {
    current = { text, since: now() };
    draw();
    if (timer === null) {
      timer = setInterval(draw, 250);
      unref(timer);
    }
  };
  const line = (text: string): void => {
    const keep = current;
    clear();
    io.stderr(`reach-wasm: ${text}\n`);
    if (keep !== null) {
      current = keep;
      draw();
    }
  };
  return {
    status,
    line,
    // the pack's trust and warnings stay on screen; the rest is the one line in place
    run: (r) => (r.kind === "pack" || r.kind === "warning" ? line(describeProgress(r)) : status(describeProgress(r))),
    task: async (label, fn) => {
      status(`${label} …`);
      // let the status line reach the terminal before synchronous work holds the thread
      await new Promise((resolve) => setTimeout(resolve, 0));
      return await fn();
    },
    done: () => {
      if (timer !== null) clearInterval(timer);
      timer = null;
      clear();
    },
  };
}

/** Never let the progress clock keep the process alive (Node: `unref`; Deno: `Deno.unrefTimer`). */
function unref(timer: ReturnType<typeof setInterval>): void {
  if (typeof timer === "object" && timer !== null && "unref" in timer && typeof timer.unref === "function") timer.unref();
  else if (typeof timer === "number") (globalThis as { Deno?: { unrefTimer?: (id: number) => void } }).Deno?.unrefTimer?.(timer);
}
