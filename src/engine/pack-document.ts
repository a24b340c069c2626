/**
 * Reading a pack's declaration (seed 003 §5): `reach.json` decoded as strict UTF-8 JSON, its specVersion major
 * checked (`PROTO_VERSION_MISMATCH`; a newer minor reads with a warning), its deprecated forms read as their current
 * ones (seed 003 §9.2), then validated against `PackSchema` and deeply frozen. Loading the rest of the pack (its tools,
 * entrypoint, workspace files, dependencies) is `pack.ts`.
 * @module
 */
import { ReachError } from "../protocol/mod.ts";
import { parseJsonText } from "../protocol/mod.ts";
import { upgradePackDocument } from "../protocol/mod.ts";
import type { DeprecationNotice } from "../protocol/mod.ts";
import { PackSchema, PROTOCOL_SPEC_VERSION } from "../protocol/mod.ts";
import type { Pack } from "../protocol/mod.ts";
import { parseOrThrow } from "../protocol/mod.ts";
import { validatedDocument } from "./document-cache.ts";
import type { DocumentStore } from "./document-cache.ts";

/** The pack document's file name. */
export const PACK_FILE = "reach.json";
/** Largest `reach.json` accepted. */
export const MAX_PACK_DOCUMENT_BYTES = 1024 * 1024;

/** A `PACK_MALFORMED` error with its details. */
export function malformed(message: string, details: Record<string, unknown> = {}): ReachError {
  return new ReachError("PACK_MALFORMED", message, { details });
}

/** Deep-freeze a JSON value so the locked manifest cannot change during the run. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const v of Object.values(value as object)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * Decode a pack file as strict UTF-8 JSON.
 * @param bytes the file
 * @param what the file's name, for the error
 * @param code the error code when it is not UTF-8 JSON
 * @returns the parsed value
 * @throws ReachError `code` when the bytes are not UTF-8 or not JSON (a duplicate name included)
 * @example const plan = decodeJson(bytes, "plan.json", "PLAN_INVALID");
 */
export function decodeJson(bytes: Uint8Array, what: string, code: "PACK_MALFORMED" | "PLAN_INVALID"): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new ReachError(code, `${what} is not valid UTF-8; save it as UTF-8 JSON`);
  }
  // Strictly (`parseJsonText`): a name twice in one object would make the pack mean one thing to this parser and
  // another to a reader of the capsule's copy; a "__proto__" member is a member.
  return parseJsonText(text, { what, code });
}

/**
 * Check a specVersion against the protocol version this build implements (seed 003 §5.2).
 * @param specVersion the pack's `specVersion`
 * @returns a warning for a newer minor version, or null
 * @throws ReachError `PROTO_VERSION_MISMATCH` for another major version or a malformed version
 */
export function checkSpecVersion(specVersion: unknown): string | null {
  const m = typeof specVersion === "string" ? /^(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})$/.exec(specVersion) : null;
  const [major, minor] = PROTOCOL_SPEC_VERSION.split(".").map(Number) as [number, number];
  if (m === null) {
    throw new ReachError("PROTO_VERSION_MISMATCH", `reach.json: "specVersion" must be a version such as "${PROTOCOL_SPEC_VERSION}", got ${JSON.stringify(specVersion)}`, {
      details: { supported: PROTOCOL_SPEC_VERSION, got: specVersion === undefined ? null : String(specVersion) },
    });
  }
  if (Number(m[1]) !== major) {
    throw new ReachError(
      "PROTO_VERSION_MISMATCH",
      `reach.json: specVersion ${String(specVersion)} is not supported: this reach-wasm implements protocol ${PROTOCOL_SPEC_VERSION} ` +
        `(major version ${major}); rebuild the pack for ${major}.x or use a reach-wasm that supports ${m[1]}.x`,
      { details: { supported: PROTOCOL_SPEC_VERSION, got: specVersion as string } },
    );
  }
  if (Number(m[2]) > minor) {
    return `reach.json: specVersion ${String(specVersion)} is newer than the protocol ${PROTOCOL_SPEC_VERSION} this reach-wasm implements; running it, but features of ${m[1]}.${m[2]} are not understood`;
  }
  return null;
}

/** A pack's declaration, read and checked: what {@link readPackDocument} gives. */
export type PackDocument = {
  /** The pack document (deprecated forms read as their current ones, defaults filled; deeply frozen). */
  pack: Pack;
  /** A newer minor specVersion, said for stderr. */
  warnings: string[];
  /** The deprecated forms the document uses (seed 003 §9.2). */
  deprecations: readonly DeprecationNotice[];
};

/**
 * Read and check a pack's declaration (`reach.json`) as a run reads it, and nothing else of the pack: the one path
 * that reads what a pack declares (its tools, permissions, sandbox), for a run and for anyone deciding about one.
 * @param files the pack's files by relative path
 * @param documents where validated documents are kept (default: validate every time)
 * @returns the document, its warnings and deprecations
 * @throws ReachError `PACK_NOT_FOUND` (no reach.json), `PACK_MALFORMED` (too large, not UTF-8 JSON, not an object),
 *   `PROTO_VERSION_MISMATCH`, `PACK_INVALID_MANIFEST`
 * @example const { pack } = await readPackDocument(files);
 */
export async function readPackDocument(files: ReadonlyMap<string, Uint8Array>, documents?: DocumentStore): Promise<PackDocument> {
  const doc = files.get(PACK_FILE);
  if (doc === undefined) throw new ReachError("PACK_NOT_FOUND", `the pack has no ${PACK_FILE} at its root; create one (see packs/hello/reach.json)`);
  if (doc.length > MAX_PACK_DOCUMENT_BYTES) throw malformed(`${PACK_FILE} is larger than ${MAX_PACK_DOCUMENT_BYTES} bytes`);
  const raw = decodeJson(doc, PACK_FILE, "PACK_MALFORMED");
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw malformed(`${PACK_FILE} must hold a JSON object`);
  const warnings: string[] = [];
  const warning = checkSpecVersion((raw as { specVersion?: unknown }).specVersion);
  if (warning !== null) warnings.push(warning);
  const id = (raw as { id?: unknown }).id;
  const upgraded = upgradePackDocument(raw, `${PACK_FILE}${typeof id === "string" ? ` of pack ${JSON.stringify(id.slice(0, 100))}` : ""}`); // seed 003 §9.2
  const document = upgraded.document;
  const pack = deepFreeze(await validatedDocument("pack", document, () => parseOrThrow(PackSchema(), document, "PACK_INVALID_MANIFEST", PACK_FILE), documents));
  return { pack, warnings, deprecations: upgraded.deprecations };
}
