/**
 * Reading what clients send: run submissions (a registered pack by digest as JSON, or a pack archive upload as
 * multipart) and pack registrations (raw archive bytes or multipart). Every field is checked before anything is
 * stored; an uploaded pack is loaded and verified exactly as a run would load it.
 * @module
 */
import type { z } from "zod";
import { sha256Hex } from "../canonical/mod.ts";
import { ReachError } from "../protocol/mod.ts";
import { acceptJsonValue, issueMessage, MAX_JSON_DEPTH, parseJsonText } from "../protocol/mod.ts";
import type { ServiceContext } from "./context.ts";
import { inspectPack, trustNow } from "./engine-adapter.ts";
import type { PackInspection } from "./engine-adapter.ts";
import { refuse } from "./http-errors.ts";
import { PackDigestSchema, SubmitRunPartSchema, SubmitRunSchema } from "./schemas.ts";
import type { RunOptions } from "./schemas.ts";
import { findPack, registerPack } from "./store-packs.ts";
import type { RunPack } from "./store-runs.ts";

/**
 * Check a value against a schema, or refuse with 400 naming every problem.
 * @param schema the zod schema
 * @param value the value
 * @param what what the value is, for the message
 * @returns the parsed value
 * @throws HttpRefusal 400 `PROTO_SCHEMA_VIOLATION`
 * @example const q = parseOrRefuse(ListRunsQuerySchema, c.req.query(), "the query");
 */
export function parseOrRefuse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => `${i.path.length === 0 ? "(top)" : i.path.join(".")}: ${issueMessage(i)}`);
  throw refuse(400, "PROTO_SCHEMA_VIOLATION", `${what} is not valid: ${issues.join("; ")}`, { issues });
}

/**
 * A run request's JSON text, parsed strictly (`parseJsonText`: a name twice in one object, a lone surrogate, a number
 * out of range are refused; the input inside may nest `MAX_JSON_DEPTH` levels, so the request one more).
 */
function requestJson(text: string, what: string): unknown {
  try {
    return parseJsonText(text, { what, code: "PROTO_INVALID_MESSAGE", maxDepth: MAX_JSON_DEPTH + 1 });
  } catch (err) {
    if (err instanceof ReachError) throw refuse(400, err.code, err.message, err.details);
    throw err;
  }
}

/**
 * The options with the input as the client sent it: the schema's `z.json()` rebuilds it without its `"__proto__"`
 * members, which the run must keep (conformance/HASHING.md "What a tool sees"); checked as the run will take it.
 * Everything a run takes (U+0000, any character, any key order) is stored as it is (`schema.ts`).
 */
function withInput(options: RunOptions, raw: unknown, what: string): RunOptions {
  const input = (raw as { input?: unknown }).input;
  if (input === undefined) return options;
  try {
    acceptJsonValue(input, { what: `the input of ${what}`, code: "PROTO_INVALID_MESSAGE" });
  } catch (err) {
    if (err instanceof ReachError) throw refuse(400, err.code, err.message, err.details);
    throw err;
  }
  return { ...options, input: input as RunOptions["input"] };
}

async function jsonBody(req: Request): Promise<unknown> {
  return requestJson(await req.text(), "the request body");
}

/**
 * A multipart body whose part names are all among `parts`, each at most once: a part that would be ignored (a name
 * misspelt, a second `pack`) is refused rather than silently leaving the run different from the one asked for.
 */
async function formOf(req: Request, parts: readonly string[]): Promise<FormData> {
  let form: FormData;
  try {
    form = await req.formData();
  } catch (err) {
    throw refuse(400, "PROTO_INVALID_MESSAGE", `the multipart body cannot be read (${(err as Error).message}); send multipart/form-data with a "pack" file part`);
  }
  const names: string[] = [];
  form.forEach((_, name) => void names.push(name));
  const bad = names.find((n, i) => !parts.includes(n) || names.indexOf(n) !== i);
  if (bad !== undefined) {
    const why = parts.includes(bad) ? "appears twice" : "is not one this route reads";
    throw refuse(400, "PROTO_INVALID_MESSAGE", `the multipart part ${JSON.stringify(bad.slice(0, 80))} ${why}; send ${parts.map((p) => JSON.stringify(p)).join(" and ")} at most once each`, { part: bad.slice(0, 80) });
  }
  return form;
}

/** The `request` part's text: a plain field, or a file part (`curl -F request=@run.json`, a Blob in a FormData). */
async function requestPart(form: FormData): Promise<string> {
  const part = form.get("request");
  if (part === null) return "";
  return typeof part === "string" ? part : await part.text();
}

async function packPart(form: FormData): Promise<Uint8Array> {
  const part = form.get("pack");
  if (part === null || typeof part === "string") throw refuse(400, "PROTO_INVALID_MESSAGE", 'the multipart body has no "pack" file part; attach the pack archive (reach-wasm pack build) as "pack"');
  return new Uint8Array(await part.arrayBuffer());
}

const PACK_CACHE_MS = 10_000;

/** A tenant's registered pack, from the context's short-lived cache or the store. */
async function registeredPack(ctx: ServiceContext, tenant: string, digest: string): Promise<RunPack | null> {
  const key = `${tenant} ${digest}`;
  const hit = ctx.packs.get(key);
  if (hit !== undefined && performance.now() - hit.at < PACK_CACHE_MS) return hit.pack;
  const pack = await findPack(ctx.db, tenant, digest);
  if (pack !== null) {
    if (ctx.packs.size > 10_000) ctx.packs.clear();
    ctx.packs.set(key, { pack, at: performance.now() });
  }
  return pack;
}

/**
 * Check an uploaded pack archive and register it for the tenant.
 * @param ctx the service
 * @param tenant the tenant
 * @param bytes the archive bytes
 * @param expectedDigest the digest the client says it uploads, if any
 * @returns the registered pack and what the check found
 * @throws HttpRefusal 400 (empty), 422 (`PACK_*`: malformed, bad signature, digest differs)
 * @example const { pack } = await registerUpload(ctx, tenant, bytes);
 */
export async function registerUpload(ctx: ServiceContext, tenant: string, bytes: Uint8Array, expectedDigest?: string): Promise<{ pack: RunPack; inspection: PackInspection; size: number }> {
  if (bytes.length === 0) throw refuse(400, "PROTO_INVALID_MESSAGE", "the pack archive is empty; send the bytes of `reach-wasm pack build`");
  let inspection: PackInspection;
  try {
    inspection = await inspectPack(ctx.env, bytes, await trustNow(ctx.trust));
  } catch (err) {
    if (err instanceof ReachError) throw refuse(422, err.code, `the uploaded pack cannot run: ${err.message}`, err.details);
    throw err;
  }
  if (expectedDigest !== undefined && inspection.digest !== expectedDigest) {
    throw refuse(422, "PACK_MALFORMED", `the uploaded pack's digest is ${inspection.digest}, not the ${expectedDigest} asked for; upload the pack you meant`, { expected: expectedDigest, actual: inspection.digest });
  }
  const pack = await registerPack(ctx.db, tenant, { bytes, sha256: sha256Hex(bytes) }, inspection);
  ctx.packs.set(`${tenant} ${pack.digest}`, { pack, at: performance.now() });
  return { pack, inspection, size: bytes.length };
}

/**
 * Read a run submission: JSON `{pack: digest, input?, seed?, requestId?, …}` for a registered pack, or
 * `multipart/form-data` with a `pack` archive part and an optional `request` part (the options as JSON text).
 * @param ctx the service
 * @param tenant the tenant submitting
 * @param req the request (its body already bounded)
 * @returns the pack to run, the options (what is stored) and the secrets' values (held in memory only), if any
 * @throws HttpRefusal 400 / 404 `PACK_NOT_FOUND` / 415 / 422
 * @example const { pack, options } = await readSubmission(ctx, tenant, c.req.raw);
 */
export async function readSubmission(ctx: ServiceContext, tenant: string, req: Request): Promise<{ pack: RunPack; options: RunOptions; secrets: Record<string, string> | null }> {
  const type = (req.headers.get("content-type") ?? "").toLowerCase();
  if (type.startsWith("application/json")) {
    const body = await jsonBody(req);
    // the secrets' values leave the options here: the options are stored, the values never are
    const { pack: digest, secrets, ...parsed } = parseOrRefuse(SubmitRunSchema, body, "the run request");
    const options = withInput(parsed, body, "the run request");
    const pack = await registeredPack(ctx, tenant, digest);
    if (pack === null) throw refuse(404, "PACK_NOT_FOUND", `no pack with digest ${digest} is registered for this tenant; register it with POST /packs (or upload it with the run as multipart)`, { digest });
    return { pack, options, secrets: secrets ?? null };
  }
  if (type.startsWith("multipart/form-data")) {
    const form = await formOf(req, ["pack", "request"]);
    const text = await requestPart(form);
    const raw: unknown = text.trim() !== "" ? requestJson(text, 'the "request" part') : {};
    const { secrets, ...parsed } = parseOrRefuse(SubmitRunPartSchema, raw, 'the "request" part');
    const options = withInput(parsed, raw, 'the "request" part');
    const { pack } = await registerUpload(ctx, tenant, await packPart(form));
    return { pack, options, secrets: secrets ?? null };
  }
  throw refuse(415, "PROTO_INVALID_MESSAGE", `a run is submitted as application/json (a registered pack's digest) or multipart/form-data (a pack archive), not ${JSON.stringify(type || "(none)")}`);
}

/**
 * Read a pack registration: the archive bytes as the body (`application/gzip` or `application/octet-stream`) or
 * as the `pack` part of `multipart/form-data`; `?digest=` optionally names the digest expected.
 * @param ctx the service
 * @param tenant the tenant registering
 * @param req the request (its body already bounded)
 * @returns the registered pack and what the check found
 * @throws HttpRefusal 400 / 415 / 422
 * @example const r = await readPackUpload(ctx, tenant, c.req.raw);
 */
export async function readPackUpload(ctx: ServiceContext, tenant: string, req: Request): Promise<{ pack: RunPack; inspection: PackInspection; size: number }> {
  const digest = new URL(req.url).searchParams.get("digest");
  const expected = digest === null ? undefined : parseOrRefuse(PackDigestSchema, digest, "the digest query parameter");
  const type = (req.headers.get("content-type") ?? "").toLowerCase();
  if (type.startsWith("multipart/form-data")) return await registerUpload(ctx, tenant, await packPart(await formOf(req, ["pack"])), expected);
  if (type.startsWith("application/gzip") || type.startsWith("application/x-gzip") || type.startsWith("application/octet-stream")) {
    return await registerUpload(ctx, tenant, new Uint8Array(await req.arrayBuffer()), expected);
  }
  throw refuse(415, "PROTO_INVALID_MESSAGE", `send the pack archive as application/gzip (or multipart/form-data with a "pack" part), not ${JSON.stringify(type || "(none)")}`);
}
