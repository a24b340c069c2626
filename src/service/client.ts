/**
 * A client of the run service (web-standard `fetch`), used by `reach-wasm submit` and `reach-wasm runs`. Every
 * refusal of the server comes back as the ReachError it sent; an unreachable server is `EXEC_RESOURCE_UNAVAILABLE`.
 * @module
 */
import { ReachError, isErrorCode } from "../protocol/mod.ts";
import type { RunOptions, RunRecord, ServiceEvent } from "./schemas.ts";

/** Where the service is and who asks. */
export type ClientOptions = {
  server: string;
  token?: string;
  fetch?: typeof fetch;
  /** Keep trying a server that refuses connections for this long (a service still starting up); default 0. */
  connectWaitMs?: number;
  /** Told once when the client starts waiting for the server. */
  onWait?: (message: string) => void;
  /** A clock in ms for the wait (default `performance.now`). */
  now?: () => number;
  /**
   * How long to wait for the answer's headers once connected (a long poll's wait comes on top); default 120,000 ms.
   * A server that takes the connection and never answers (a hung process, something else on the port) is then
   * `EXEC_RESOURCE_UNAVAILABLE` rather than a wait of minutes.
   */
  answerTimeoutMs?: number;
};

/** A page of runs. */
export type RunPage = { runs: RunRecord[]; nextCursor: string | null };

function asBody(bytes: Uint8Array): BodyInit {
  return bytes as Uint8Array<ArrayBuffer>;
}

/** A client bound to one service. */
export class ServiceClient {
  readonly #base: string;
  readonly #token: string | undefined;
  readonly #fetch: typeof fetch;

  /**
   * @param options the server URL (`http://host:port`), the bearer token, and a fetch (default the global one)
   * @throws ReachError `PROTO_INVALID_ARGUMENT` for a server that is not an http(s) URL
   */
  constructor(options: ClientOptions) {
    let url: URL;
    try {
      url = new URL(options.server);
    } catch {
      throw new ReachError("PROTO_INVALID_ARGUMENT", `--server expects a URL such as http://127.0.0.1:7411, got ${JSON.stringify(options.server)}`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new ReachError("PROTO_INVALID_ARGUMENT", `--server expects an http:// or https:// URL, got ${JSON.stringify(options.server)}`);
    this.#base = url.toString().replace(/\/+$/, "");
    this.#token = options.token;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#connectWaitMs = options.connectWaitMs ?? 0;
    this.#onWait = options.onWait;
    this.#now = options.now ?? (() => performance.now());
    this.#answerTimeoutMs = options.answerTimeoutMs ?? 120_000;
  }

  readonly #answerTimeoutMs: number;
  readonly #connectWaitMs: number;
  readonly #onWait: ((message: string) => void) | undefined;
  readonly #now: () => number;

  /**
   * One fetch, retried while the server refuses connections or says it is starting (503 with `details.starting`: the
   * request reached no handler, so sending it again is safe), up to `connectWaitMs`.
   */
  async #fetchWaiting(url: string, init: RequestInit): Promise<Response> {
    const deadline = this.#now() + this.#connectWaitMs;
    let told = false;
    for (;;) {
      let res: Response | null = null;
      try {
        res = await this.#fetch(url, init);
      } catch (err) {
        if (init.signal?.aborted === true || this.#now() >= deadline) throw err;
      }
      if (res !== null && (res.status !== 503 || this.#now() >= deadline || !(await starting(res.clone())))) return res;
      if (!told) this.#onWait?.(`waiting for the run service at ${this.#base} to ${res === null ? "accept connections" : "open its database"}…`);
      told = true;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  async #request(method: string, path: string, init: { body?: BodyInit; type?: string; signal?: AbortSignal } = {}): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.#token !== undefined) headers["authorization"] = `Bearer ${this.#token}`;
    if (init.type !== undefined) headers["content-type"] = init.type;
    let res: Response;
    const wait = Number(/[?&]wait=(\d+)/.exec(path)?.[1] ?? 0) * 1000;
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.#answerTimeoutMs + wait);
    const signal = init.signal === undefined ? timeout.signal : AbortSignal.any([init.signal, timeout.signal]);
    try {
      res = await this.#fetchWaiting(`${this.#base}${path}`, { method, headers, signal, ...(init.body === undefined ? {} : { body: init.body }) });
    } catch (err) {
      if (init.signal?.aborted) throw err;
      if (timeout.signal.aborted) {
        throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", `the run service at ${this.#base} took the connection but did not answer ${method} ${path.split("?")[0]} within ${Math.round((this.#answerTimeoutMs + wait) / 1000)} s; is --server a reach-wasm service, and is it running? (REACH_WASM_ANSWER_TIMEOUT sets the wait, in seconds)`, { cause: err, retryAfter: 1000 });
      }
      throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", `cannot reach the run service at ${this.#base} (${(err as Error).message}); start it with \`reach-wasm serve\` or pass --server URL`, { cause: err, retryAfter: 1000 });
    } finally {
      clearTimeout(timer);
    }
    if (res.ok) return res;
    throw await refusalOf(res);
  }

  async #json<T>(method: string, path: string, init: { body?: BodyInit; type?: string } = {}): Promise<T> {
    const res = await this.#request(method, path, init);
    const text = await res.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      // a server that is not the run service (a proxy's page, another program on the port)
      throw new ReachError("EXEC_RESOURCE_UNAVAILABLE", `the run service answered HTTP ${res.status} with no JSON (${JSON.stringify(text.slice(0, 80))}); is --server a reach-wasm service?`, { details: { httpStatus: res.status } });
    }
  }

  /**
   * Register a pack archive (`POST /packs`).
   * @param archive the `.tar.gz` bytes
   * @param digest the digest it must have, if known
   * @returns the registration
   * @example await client.registerPack(bytes, digest);
   */
  async registerPack(archive: Uint8Array, digest?: string): Promise<{ digest: string; id: string; version: string; signed: boolean; trusted: boolean }> {
    return await this.#json("POST", `/packs${digest === undefined ? "" : `?digest=${digest}`}`, { body: asBody(archive), type: "application/gzip" });
  }

  /**
   * Submit a run of a registered pack; when the service does not know the pack, register `archive` and retry.
   * @param digest the pack digest
   * @param archive the pack archive (uploaded only when needed)
   * @param options input, seed, requestId, …
   * @param secrets the values of the pack's secrets (sent once; the service never stores them)
   * @returns the run id and status
   * @example const { runId } = await client.submit(digest, bytes, { seed: "1" });
   */
  async submit(digest: string, archive: Uint8Array, options: RunOptions, secrets?: Readonly<Record<string, string>>): Promise<{ runId: string; status: string }> {
    // the secrets' values ride this request body only: the service holds them in memory for the run, never stores them
    const body = JSON.stringify({ pack: digest, ...options, ...(secrets === undefined ? {} : { secrets }) });
    try {
      return await this.#json("POST", "/runs", { body, type: "application/json" });
    } catch (err) {
      if (!(err instanceof ReachError) || err.code !== "PACK_NOT_FOUND") throw err;
    }
    await this.registerPack(archive, digest);
    return await this.#json("POST", "/runs", { body, type: "application/json" });
  }

  /**
   * A run record; with `waitSeconds`, the server holds the answer until the run ends or the wait is over.
   * @param runId the run
   * @param waitSeconds 0..60
   * @returns the record
   * @example const r = await client.run(id, 60);
   */
  async run(runId: string, waitSeconds = 0): Promise<RunRecord> {
    return await this.#json("GET", `/runs/${encodeURIComponent(runId)}${waitSeconds > 0 ? `?wait=${waitSeconds}` : ""}`);
  }

  /**
   * Wait for a run to end. While the service answers 503 (its database restarting) it waits as `Retry-After` says
   * and asks again; any other refusal is thrown.
   * @param runId the run
   * @returns its final record
   * @example const done = await client.waitForEnd(id);
   */
  async waitForEnd(runId: string): Promise<RunRecord> {
    let told = false;
    for (;;) {
      let r: RunRecord;
      try {
        r = await this.run(runId, 60);
      } catch (err) {
        // 503: the service is up but its database is not (restarting): the run goes on, so wait as it says
        if (!(err instanceof ReachError) || err.details["httpStatus"] !== 503) throw err;
        if (!told) this.#onWait?.(`the run service at ${this.#base} cannot answer for now (${err.message}); waiting for run ${runId}…`);
        told = true;
        await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, Math.max(250, err.retryAfter ?? 1000))));
        continue;
      }
      if (r.status !== "PENDING" && r.status !== "EXECUTING") return r;
    }
  }

  /**
   * A page of runs.
   * @param q filters and paging
   * @returns the page
   * @example const page = await client.list({ status: "FAILED" });
   */
  async list(q: { status?: string; pack?: string; cursor?: string; limit?: number } = {}): Promise<RunPage> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return await this.#json("GET", `/runs${qs === "" ? "" : `?${qs}`}`);
  }

  /**
   * Cancel a run.
   * @param runId the run
   * @returns `cancelled` (it was queued) or `requested` (its worker stops it)
   * @example await client.cancel(id);
   */
  async cancel(runId: string): Promise<{ runId: string; outcome: string }> {
    return await this.#json("POST", `/runs/${encodeURIComponent(runId)}/cancel`);
  }

  /**
   * A run's capsule.
   * @param runId the run
   * @returns the run hash and the capsule bytes
   * @example const { runHash, bytes } = await client.capsule(id);
   */
  async capsule(runId: string): Promise<{ runHash: string; bytes: Uint8Array }> {
    const res = await this.#request("GET", `/runs/${encodeURIComponent(runId)}/capsule`);
    return { runHash: res.headers.get("x-reach-run-hash") ?? "", bytes: new Uint8Array(await res.arrayBuffer()) };
  }

  /**
   * A run's events, from the first, as they happen, until the run ends (Server-Sent Events).
   * @param runId the run
   * @param signal stops the stream
   * @yields each event
   * @example for await (const e of client.events(id)) console.error(e.eventType);
   */
  async *events(runId: string, signal?: AbortSignal): AsyncGenerator<ServiceEvent> {
    const res = await this.#request("GET", `/runs/${encodeURIComponent(runId)}/events`, signal === undefined ? {} : { signal });
    if (res.body === null) return;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      let cut: number;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
        if (data === "") continue;
        const event = JSON.parse(data) as ServiceEvent;
        if (event.eventType !== "heartbeat") yield event;
      }
    }
  }
}

/** The ReachError a refusing response carries (or one describing a response that is not a ReachError document). */
async function refusalOf(res: Response): Promise<ReachError> {
  const text = await res.text();
  try {
    const doc = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    const e = doc.error;
    if (e !== undefined && isErrorCode(e.code) && typeof e.message === "string" && e.message !== "") {
      const details = typeof e.details === "object" && e.details !== null ? (e.details as Record<string, unknown>) : {};
      const header = res.headers.get("retry-after");
      const retryAfter = header !== null && /^\d{1,6}$/.test(header.trim()) ? Number(header.trim()) * 1000 : null;
      return new ReachError(e.code, e.message, { details: { ...details, httpStatus: res.status }, retryAfter });
    }
  } catch {
    // not JSON: described below
  }
  return new ReachError("EXEC_RESOURCE_UNAVAILABLE", `the run service answered HTTP ${res.status} without a ReachError (${text.slice(0, 200)}); is --server a reach-wasm service?`, { details: { httpStatus: res.status } });
}

/** Whether a 503 says the service is starting (its database not open yet). */
async function starting(res: Response): Promise<boolean> {
  try {
    const doc = (await res.json()) as { error?: { details?: { starting?: unknown } } };
    return doc.error?.details?.starting === true;
  } catch {
    return false;
  }
}
