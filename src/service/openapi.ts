/**
 * `/openapi.json`: the run service's OpenAPI 3.1 document, generated from the zod schemas of `schemas.ts` (the same
 * schemas that check requests), never written by hand.
 * @module
 */
import { z } from "zod";
import { ErrorDocumentSchema } from "../protocol/mod.ts";
import {
  ListRunsQuerySchema,
  PackRegisteredSchema,
  RunAcceptedSchema,
  RunListSchema,
  RunRecordSchema,
  ServiceEventSchema,
  SubmitRunMultipartSchema,
  SubmitRunSchema,
} from "./schemas.ts";

type Body = { json?: z.ZodType; multipart?: z.ZodType; binary?: string };
type Route = { method: "get" | "post"; path: string; summary: string; auth: boolean; body?: Body; query?: z.ZodObject; ok: Record<number, { description: string; json?: z.ZodType; type?: string }> };

const ACCEPTED = { 202: { description: "queued", json: RunAcceptedSchema }, 200: { description: "a run of this requestId and the same request already exists (the first run)", json: RunAcceptedSchema } };
const SUBMIT: Body = { json: SubmitRunSchema, multipart: SubmitRunMultipartSchema };

/** Every route of the API (the handlers in `http-api.ts` implement exactly these). */
export const ROUTES: readonly Route[] = [
  { method: "post", path: "/agent/run", summary: "submit a run (seed 002's entry point; same as POST /runs)", auth: true, body: SUBMIT, ok: ACCEPTED },
  { method: "post", path: "/runs", summary: "submit a run: a registered pack by digest (JSON) or a pack archive upload (multipart)", auth: true, body: SUBMIT, ok: ACCEPTED },
  { method: "get", path: "/runs", summary: "the tenant's runs, newest first, paged", auth: true, query: ListRunsQuerySchema, ok: { 200: { description: "a page", json: RunListSchema } } },
  { method: "get", path: "/runs/{id}", summary: "a run record, live; ?wait=S waits up to S seconds (≤ 60) for it to end", auth: true, query: z.strictObject({ wait: z.number().int().min(0).max(60).optional() }), ok: { 200: { description: "the record", json: RunRecordSchema } } },
  { method: "get", path: "/runs/{id}/events", summary: "the run's events as Server-Sent Events, from the first (or after Last-Event-ID), then live", auth: true, ok: { 200: { description: "text/event-stream; each data: is one event", json: ServiceEventSchema, type: "text/event-stream" } } },
  { method: "get", path: "/runs/{id}/capsule", summary: "the run's capsule ({runHash}.capsule.tar.gz)", auth: true, ok: { 200: { description: "the capsule bytes", type: "application/gzip" } } },
  { method: "post", path: "/runs/{id}/cancel", summary: "cancel a run: a queued run ends at once, a running one within a second", auth: true, ok: { 202: { description: "cancelled or asked to stop", json: z.strictObject({ runId: z.uuid(), outcome: z.enum(["cancelled", "requested"]) }) } } },
  { method: "post", path: "/packs", summary: "register a pack (signed or not) by its digest; ?digest= checks the upload is that pack", auth: true, body: { binary: "application/gzip", multipart: z.object({ pack: z.string().meta({ format: "binary" }) }) }, ok: { 201: { description: "registered", json: PackRegisteredSchema } } },
  { method: "get", path: "/openapi.json", summary: "this document", auth: false, ok: { 200: { description: "OpenAPI 3.1" } } },
  { method: "get", path: "/healthz", summary: "liveness: the store answers", auth: false, ok: { 200: { description: "ok", json: z.strictObject({ ok: z.literal(true), store: z.enum(["postgres", "pglite"]) }) } } },
];

function schemaOf(s: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { target: "draft-2020-12", io, unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

const ERRORS = { 400: "bad request", 401: "missing or unknown bearer token", 404: "no such run or pack for this tenant", 409: "the run is in the wrong state, or the requestId was already used for a different request", 413: "request body too large", 415: "unsupported content type", 422: "the pack cannot run", 500: "internal error", 503: "the store is unavailable" };

function operation(r: Route): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, res] of Object.entries(r.ok)) {
    const content = res.json !== undefined ? { [res.type ?? "application/json"]: { schema: schemaOf(res.json, "output") } } : res.type !== undefined ? { [res.type]: {} } : undefined;
    responses[status] = { description: res.description, ...(content === undefined ? {} : { content }) };
  }
  for (const [status, description] of Object.entries(ERRORS)) responses[status] = { description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
  const op: Record<string, unknown> = { summary: r.summary, responses };
  if (!r.auth) op["security"] = [];
  const params: unknown[] = r.path.includes("{id}") ? [{ name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } }] : [];
  if (r.query !== undefined) {
    for (const [name, s] of Object.entries(r.query.shape)) params.push({ name, in: "query", required: false, schema: schemaOf(s as z.ZodType, "input") });
  }
  if (params.length > 0) op["parameters"] = params;
  if (r.body !== undefined) {
    const content: Record<string, unknown> = {};
    if (r.body.json !== undefined) content["application/json"] = { schema: schemaOf(r.body.json, "input") };
    if (r.body.multipart !== undefined) content["multipart/form-data"] = { schema: schemaOf(r.body.multipart, "input") };
    if (r.body.binary !== undefined) content[r.body.binary] = { schema: { type: "string", format: "binary" } };
    op["requestBody"] = { required: true, content };
  }
  return op;
}

/**
 * The OpenAPI document.
 * @param version the reach-wasm version
 * @returns the document
 * @example const doc = openApiDocument("0.1.0"); doc.paths["/runs"].post
 */
export function openApiDocument(version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of ROUTES) (paths[r.path] ??= {})[r.method] = operation(r);
  return {
    openapi: "3.1.0",
    info: { title: "reach-wasm run service", version, description: "Submit, watch, cancel and fetch verifiable runs (capsules). Every refusal is a ReachError document." },
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "a token from `reach-wasm tokens create --tenant NAME`" } },
      schemas: { Error: schemaOf(ErrorDocumentSchema(), "output") },
    },
  };
}
