/**
 * The run service's HTTP API (Hono, web-standard: served on Node and Deno by `src/platform/http-server.ts`). Routes
 * are listed with their schemas in `openapi.ts`; every refusal is a ReachError document (`http-errors.ts`).
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ServiceContext } from "./context.ts";
import { errorResponse, refuse } from "./http-errors.ts";
import type { HttpRefusal } from "./http-errors.ts";
import { awaitRecord, streamEvents } from "./http-events.ts";
import { ClientSlots, DEFAULT_MAX_WATCHERS_PER_CLIENT, DEFAULT_STREAM_IDLE_MS, takeWatch } from "./http-limits.ts";
import type { ApiEnv, WatchLimits } from "./http-limits.ts";
import { parseOrRefuse, readPackUpload, readSubmission } from "./http-submit.ts";
import { openApiDocument, ROUTES } from "./openapi.ts";
import { ListRunsQuerySchema } from "./schemas.ts";
import type { PackRegistered } from "./schemas.ts";
import { cancelRun, listRuns, readCapsule } from "./store-runs.ts";
import { SubmitBatcher } from "./submit-batch.ts";
import { randomRunId } from "./tokens.ts";

type Env = ApiEnv;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function runIdOf(c: Context<Env>): string {
  const id = c.req.param("id") ?? "";
  if (!UUID.test(id)) throw refuse(404, "PROTO_INVALID_ARGUMENT", `${JSON.stringify(id.slice(0, 80))} is not a run id (a lowercase UUID from POST /runs)`, { runId: id.slice(0, 80) });
  return id;
}

/**
 * The refusal of a `requestId` used again for a different request: like an idempotency key, a requestId names one
 * request; the first run is not returned for another one (the caller would take it for the run it asked for).
 */
function reusedRequestId(requestId: string, runId: string, differs: readonly string[]): HttpRefusal {
  const what = differs.map((d) => (d === "secrets" ? "the secrets' names" : d)).join(", ");
  return refuse(
    409,
    "PROTO_INVALID_ARGUMENT",
    `requestId ${JSON.stringify(requestId)} was already used for a different request (run ${runId}; this one differs in: ${what}); use a new requestId for a new run, or send the first request unchanged to get its run`,
    { requestId, runId, differs: [...differs] },
  );
}

/** The methods the API answers at a path (none: no such path), from the routes of `/openapi.json`. */
function allowedMethods(path: string): string[] {
  const pattern = (route: string) => new RegExp(`^${route.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{id\}/g, "[^/]+")}$`);
  const methods = ROUTES.filter((r) => pattern(r.path).test(path)).map((r) => r.method.toUpperCase());
  return methods.includes("GET") ? [...methods, "HEAD"] : methods;
}

/** 404 for a path the API does not have; 405 with `Allow` for a method a path does not take. */
function noRoute(c: Context<Env>): Response {
  const path = new URL(c.req.url).pathname;
  const allowed = allowedMethods(path);
  if (allowed.length === 0) return errorResponse(refuse(404, "PROTO_INVALID_ARGUMENT", `no route ${c.req.method} ${path}; see /openapi.json`));
  const res = errorResponse(refuse(405, "PROTO_INVALID_ARGUMENT", `${path} takes ${allowed.join(" or ")}, not ${c.req.method}; see /openapi.json`, { allowed }));
  res.headers.set("allow", allowed.join(", "));
  return res;
}

/** Every query parameter is one value: a repeated one (`?limit=1&limit=2`) would be read as its first, silently. */
async function oneValuePerParameter(c: Context<Env>, next: () => Promise<void>): Promise<void> {
  const keys = [...new URL(c.req.url).searchParams.keys()];
  const twice = keys.find((k, i) => keys.indexOf(k) !== i);
  if (twice !== undefined) throw refuse(400, "PROTO_INVALID_ARGUMENT", `the query parameter ${JSON.stringify(twice.slice(0, 40))} is given twice; give it once`, { parameter: twice.slice(0, 40) });
  await next();
}

/**
 * The routes that hold a request open while a run goes on — the long poll `GET /runs/:id?wait=S` and the event stream
 * `GET /runs/:id/events` — each taking one of its client's watch slots (`http-limits.ts`) until it ends.
 */
function watchRoutes(app: Hono<Env>, ctx: ServiceContext): void {
  const limits: WatchLimits = {
    watchersPerClient: ctx.limits?.watchersPerClient ?? DEFAULT_MAX_WATCHERS_PER_CLIENT,
    streamIdleMs: ctx.limits?.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS,
    now: ctx.limits?.now ?? (() => performance.now()),
  };
  const watchers = ctx.watchers ?? new ClientSlots(limits.watchersPerClient);
  const watch = (c: Context<Env>): (() => void) => takeWatch(c, watchers, limits.watchersPerClient);
  app.get("/runs/:id", async (c) => {
    const wait = c.req.query("wait");
    if (wait !== undefined && !/^([0-9]|[1-5][0-9]|60)$/.test(wait)) throw refuse(400, "PROTO_INVALID_ARGUMENT", `?wait= is a number of seconds 0..60, got ${JSON.stringify(wait.slice(0, 20))}`);
    const id = runIdOf(c);
    if (wait === undefined || wait === "0") return c.json(await awaitRecord(ctx, c.get("tenant"), id, 0));
    const release = watch(c);
    try {
      return c.json(await awaitRecord(ctx, c.get("tenant"), id, Number(wait)));
    } finally {
      release();
    }
  });
  app.get("/runs/:id/events", async (c) => {
    const id = runIdOf(c);
    const release = watch(c);
    try {
      return await streamEvents(c, ctx, c.get("tenant"), id, { release, idleMs: limits.streamIdleMs, now: limits.now });
    } catch (err) {
      release();
      throw err;
    }
  });
}

/**
 * Build the API.
 * @param ctx the database, queue, engine, auth and limits
 * @param version the reach-wasm version (for `/openapi.json`)
 * @returns the Hono app; serve `app.fetch`
 * @throws nothing at build time; handlers answer every failure with a ReachError document
 * @example const server = await serveHttp(createServiceApp(ctx, VERSION).fetch, { hostname: "127.0.0.1", port: 7411 });
 */
export function createServiceApp(ctx: ServiceContext, version: string): Hono<Env> {
  const app = new Hono<Env>();
  const openapi = JSON.stringify(openApiDocument(version));
  const batcher = new SubmitBatcher(ctx.db, ctx.queue);
  app.onError((err) => errorResponse(err, (e) => ctx.log(`internal error: ${(e as Error)?.stack ?? String(e)}`)));
  app.notFound(noRoute);
  app.use("*", oneValuePerParameter);
  app.get("/openapi.json", (c) => c.body(openapi, 200, { "content-type": "application/json; charset=utf-8" }));
  app.get("/healthz", async (c) => {
    await ctx.db.query("SELECT 1");
    return c.json({ ok: true, store: ctx.db.kind });
  });
  const limit = bodyLimit({
    maxSize: ctx.maxBodyBytes,
    onError: () => {
      throw refuse(413, "PROTO_INVALID_MESSAGE", `the request body is larger than this service accepts (${ctx.maxBodyBytes} bytes; serve --max-body); send a smaller pack or input`, { maxBytes: ctx.maxBodyBytes });
    },
  });
  app.use("/runs", limit);
  app.use("/runs/*", limit);
  app.use("/agent/run", limit);
  app.use("/packs", limit);
  for (const path of ["/runs", "/runs/*", "/agent/run", "/packs"]) {
    app.use(path, async (c, next) => {
      c.set("tenant", await ctx.auth.tenantOf(c.req.header("authorization")));
      await next();
    });
  }
  const submit = async (c: Context<Env>) => {
    const tenant = c.get("tenant");
    const { pack, options, secrets } = await readSubmission(ctx, tenant, c.req.raw);
    const id = randomRunId();
    // held before the run is queued (a worker may claim it at once), dropped when the submission named an existing run
    if (secrets !== null) ctx.secrets.put(id, secrets);
    const r = await batcher.submit({ id, tenant, pack, options, secretNames: secrets === null ? [] : Object.keys(secrets) });
    if (secrets !== null && r.runId !== id) ctx.secrets.take(id);
    if (r.differs !== undefined) throw reusedRequestId(options.requestId ?? "", r.runId, r.differs);
    return c.json({ runId: r.runId, status: r.status, requestId: options.requestId ?? null }, r.existed ? 200 : 202, { location: `/runs/${r.runId}` });
  };
  app.post("/runs", submit);
  app.post("/agent/run", submit);
  app.get("/runs", async (c) => {
    const q = parseOrRefuse(ListRunsQuerySchema, c.req.query(), "the query");
    return c.json(await listRuns(ctx.db, c.get("tenant"), q));
  });
  watchRoutes(app, ctx);
  app.get("/runs/:id/capsule", async (c) => {
    const id = runIdOf(c);
    const capsule = await readCapsule(ctx.db, c.get("tenant"), id);
    if (capsule === null) {
      const record = await awaitRecord(ctx, c.get("tenant"), id, 0); // 404 when it is not the tenant's
      if (record.status === "PENDING" || record.status === "EXECUTING") throw refuse(409, "PROTO_SEQUENCE_ERROR", `run ${id} is ${record.status}; its capsule exists once it ends (GET /runs/${id}?wait=60)`, { status: record.status });
      throw refuse(404, "PROTO_SEQUENCE_ERROR", `run ${id} ended ${record.status} before it ran, so it has no capsule${record.error === null ? "" : `: ${record.error.message}`}`, { status: record.status });
    }
    return c.body(capsule.bytes.slice().buffer as ArrayBuffer, 200, {
      "content-type": "application/gzip",
      "content-disposition": `attachment; filename="${capsule.runHash}.capsule.tar.gz"`,
      "x-reach-run-hash": capsule.runHash,
    });
  });
  app.post("/runs/:id/cancel", async (c) => {
    const id = runIdOf(c);
    const r = await cancelRun(ctx.db, ctx.queue, c.get("tenant"), id);
    if (r.outcome === "missing") throw refuse(404, "PROTO_INVALID_ARGUMENT", `there is no run ${id} for this tenant; list your runs with GET /runs (reach-wasm runs list)`, { runId: id });
    if (r.outcome === "ended") throw refuse(409, "PROTO_SEQUENCE_ERROR", `run ${id} already ended (${r.status}); there is nothing to cancel`, { runId: id, status: r.status });
    return c.json({ runId: id, outcome: r.outcome }, 202);
  });
  app.post("/packs", async (c) => {
    const { pack, inspection, size } = await readPackUpload(ctx, c.get("tenant"), c.req.raw);
    const body: PackRegistered = { digest: pack.digest, id: pack.id, version: pack.version, signed: inspection.signed, trusted: inspection.trusted, signer: inspection.signer, size };
    return c.json(body, 201);
  });
  return app;
}
