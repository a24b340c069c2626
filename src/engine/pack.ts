/**
 * Loading a pack (seed 003 §5): `reach.json` parsed and checked (`pack-document.ts`: the specVersion major checked,
 * `PROTO_VERSION_MISMATCH`; a newer minor loads with a warning), its dependencies resolved, every declared tool's code
 * present and loadable, every schema compilable, the workspace seed files placed under declared roots, then
 * everything frozen and the manifest hash computed: the capabilities are locked for the run.
 *
 * Pack layout (paths relative to the pack root, `/`-separated):
 * - `reach.json` — the pack document (`PackSchema`).
 * - the entrypoint — `*.json`: a static plan (OrchestrationBlueprint); `*.js`: a planner module run in QuickJS.
 * - each tool's `module` — `.wasm` (WASI preview1 core module), a component, or `.js` (QuickJS).
 * - `workspace/<root>/…` — initial files of the declared resource `workspace:///<root>/`.
 * - `.reach/signature` — the pack signature (seed 003 §5.4), not part of the pack digest.
 *
 * Input is an in-memory file map (the CLI reads the directory or archive), so loading is the same on every runtime.
 * @module
 */
import { hashCanonical } from "../canonical/mod.ts";
import { sha256Hex } from "../canonical/mod.ts";
import { capabilityPolicy } from "../policy/mod.ts";
import type { CapabilityPolicy } from "../policy/mod.ts";
import { ReachError, toReachError } from "../protocol/mod.ts";
import type { DeprecationNotice } from "../protocol/mod.ts";
import type { Pack, ToolDefinition } from "../protocol/mod.ts";
import { packDigest, PACK_SIGNATURE_PATH, parsePackSignature, verifyPackSignature } from "../trust/mod.ts";
import type { TrustStore } from "../trust/mod.ts";
import { isInfraTool } from "../sandbox/mod.ts";
import type { ComponentGlueStore } from "../sandbox/mod.ts";
import type { DocumentStore } from "./document-cache.ts";
import type { JsonObject } from "../protocol/mod.ts";
import { resolveDependencies } from "./dependencies.ts";
import type { ResolvedDependency } from "./dependencies.ts";
import { compileSchema, isLiteSchema, loadFullValidator } from "./schema-check.ts";
import { decodeJson, deepFreeze, malformed, PACK_FILE, readPackDocument } from "./pack-document.ts";

export { checkSpecVersion, deepFreeze, MAX_PACK_DOCUMENT_BYTES, PACK_FILE, readPackDocument } from "./pack-document.ts";
export type { PackDocument } from "./pack-document.ts";

/** Where a pack keeps its signature (excluded from the pack digest). */
export const SIGNATURE_FILE = PACK_SIGNATURE_PATH;
/** The folder of workspace seed files. */
export const WORKSPACE_DIR = "workspace/";

/** The definition of an infrastructure tool (no module: it is built in; `infra-tools.ts`). */
export type InfraDefinition = { kind: "infra"; module: string; description: string; inputSchema: JsonObject; outputSchema: JsonObject };

/** A declared tool with its code. */
export type PackTool = {
  readonly name: string;
  readonly definition: ToolDefinition | InfraDefinition;
  readonly code: Uint8Array;
  /** SHA-256 of the code. */
  readonly codeHash: string;
};

/** How the plan is made. */
export type PackEntrypoint =
  | { readonly kind: "plan"; readonly path: string; readonly document: unknown }
  | { readonly kind: "planner"; readonly path: string; readonly source: Uint8Array };

/** A loaded, checked and locked pack. */
export type LoadedPack = {
  /** The parsed pack document (defaults filled; deeply frozen). */
  readonly pack: Pack;
  /** Every file of the pack by relative path. */
  readonly files: ReadonlyMap<string, Uint8Array>;
  /** SHA-256 of the canonical manifest (defaults filled): the capability lock of seed 003 §3.1. */
  readonly manifestHash: string;
  /** The pack digest over every file but the signature (src/trust `packDigest`). */
  readonly packDigest: string;
  /** The declared tools that have code, by name. */
  readonly tools: ReadonlyMap<string, PackTool>;
  /** The plan source. */
  readonly entrypoint: PackEntrypoint;
  /** Initial workspace files per declared root. */
  readonly workspaceFiles: Readonly<Record<string, Record<string, Uint8Array>>>;
  /** Non-fatal findings (a newer minor specVersion, an unresolved optional dependency, …), for stderr. */
  readonly warnings: readonly string[];
  /**
   * Deprecated forms the pack document uses (seed 003 §9.2), read as their current ones; a run warns about each and
   * records it (absent in packs loaded by older code).
   */
  readonly deprecations?: readonly DeprecationNotice[];
  /** The dependencies, resolved against the packs vendored under `deps/` and locked by digest (seed 003 §4.1). */
  readonly dependencies: readonly ResolvedDependency[];
};

/** Options of {@link loadPack}. */
export type LoadPackOptions = {
  /**
   * Make a component tool runnable, or throw why it cannot run (default: `prepareComponent` of
   * `src/sandbox/component/load.ts` — jco transpiles it, its glue is checked, the result is cached).
   */
  prepareComponent?: (code: Uint8Array, toolName: string) => Promise<void>;
  /** Where validated `reach.json` documents are kept (`document-cache.ts`; default: validate every time). */
  documents?: DocumentStore;
  /** Where the default `prepareComponent` keeps component glue (default: memory only). */
  componentGlue?: ComponentGlueStore;
};

/** The component-model preamble: `\0asm`, version 0x0d, layer 1. */
const COMPONENT_PREAMBLE = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

/** A component tool's glue, made at load time: any failure is the pack's (`PACK_MALFORMED`, naming the tool). */
async function prepareComponentTool(name: string, def: ToolDefinition, code: Uint8Array, options: LoadPackOptions): Promise<void> {
  const glue = options.componentGlue ?? null;
  const prepare: (code: Uint8Array, tool: string) => Promise<void> =
    options.prepareComponent ?? (await import("../sandbox/component/load.ts").then((m) => (c: Uint8Array, tool: string) => m.prepareComponent(c, tool, glue)));
  try {
    await prepare(code, name);
  } catch (err) {
    const e = toReachError(err, "PACK_MALFORMED");
    if (e.code === "EXEC_RESOURCE_UNAVAILABLE" || e.code === "PACK_MALFORMED") throw e;
    throw new ReachError("PACK_MALFORMED", `${e.message.startsWith(`tool "${name}"`) ? "" : `tool "${name}": `}${e.message} (${def.module})`, { details: { ...e.details, tool: name }, cause: e });
  }
}

function normalisePath(p: string): string {
  return p.startsWith("./") ? p.slice(2) : p;
}

/**
 * Another build of one of a loaded pack's tools (a fork's `--tool`: `branch.ts`): the same declaration, other code,
 * checked as the pack's own would be.
 * @param loaded the pack
 * @param name the tool
 * @param code the other build
 * @param options component preparation, as for {@link loadPack}
 * @returns the tool
 * @throws ReachError `PROTO_INVALID_ARGUMENT` when the pack has no such tool; `PACK_MALFORMED` when the code is not
 *   a valid module of the tool's kind
 */
export async function toolBuild(loaded: LoadedPack, name: string, code: Uint8Array, options: LoadPackOptions = {}): Promise<PackTool> {
  const tool = loaded.tools.get(name);
  if (tool === undefined || tool.definition.kind === "infra") {
    throw new ReachError("PROTO_INVALID_ARGUMENT", `the pack has no tool "${name.slice(0, 64)}" with code to replace; its tools are ${[...loaded.tools.keys()].join(", ")}`, { details: { tool: name.slice(0, 64) } });
  }
  const def = tool.definition;
  const codeHash = checkToolCode(name, def, code);
  if (def.kind === "component") await prepareComponentTool(name, def, code, options);
  return Object.freeze({ name, definition: def, code, codeHash });
}

function checkToolCode(name: string, def: ToolDefinition, code: Uint8Array): string {
  const codeHash = sha256Hex(code);
  if (def.kind === "wasm") {
    const isCore = code.length >= 8 && code[0] === 0 && code[1] === 0x61 && code[2] === 0x73 && code[3] === 0x6d && code[4] === 1 && code[5] === 0;
    if (!isCore || !WebAssembly.validate(code as Uint8Array<ArrayBuffer>)) {
      throw malformed(`tool "${name}": ${def.module} is not a valid WebAssembly core module; rebuild it for wasm32-wasi (WASI preview1)`, { tool: name });
    }
  } else if (def.kind === "js" || def.kind === "python") {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(code);
    } catch {
      throw malformed(`tool "${name}": ${def.module} is not valid UTF-8 ${def.kind === "js" ? "JavaScript" : "Python"}`, { tool: name });
    }
  } else if (code.length < 8 || COMPONENT_PREAMBLE.some((b, i) => code[i] !== b)) {
    throw malformed(`tool "${name}": ${def.module} is not a WebAssembly component; build it as one (jco new, componentize-js) or declare kind "wasm"`, { tool: name, sha256: codeHash });
  }
  checkSchemas(name, def);
  return codeHash;
}

const EMPTY_CODE = new Uint8Array(0);

/** Every schema of a tool compiles (in the dialect its `$schema` names), or the pack is refused. */
function checkSchemas(name: string, def: ToolDefinition): void {
  for (const which of ["inputSchema", "outputSchema"] as const) {
    const schema = def[which];
    if (schema === undefined) continue;
    try {
      compileSchema(schema);
    } catch (err) {
      throw new ReachError("PACK_INVALID_MANIFEST", `tool "${name}": ${which}: ${(err as Error).message}`, { details: { tool: name } });
    }
  }
}

/**
 * Load and lock a pack.
 * @param files the pack's files by relative path
 * @param options what this build can run
 * @returns the loaded pack
 * @throws ReachError `PACK_NOT_FOUND` (no reach.json), `PACK_MALFORMED`, `PACK_INVALID_MANIFEST`, `PROTO_VERSION_MISMATCH`,
 *   `PACK_DEPENDENCY_UNRESOLVED`
 * @example const loaded = await loadPack(new Map([["reach.json", bytes], …]));
 */
export async function loadPack(files: ReadonlyMap<string, Uint8Array>, options: LoadPackOptions = {}): Promise<LoadedPack> {
  const { pack, warnings, deprecations } = await readPackDocument(files, options.documents);
  const deps = resolveDependencies(pack.dependencies ?? [], files); // seed 003 §4.1, offline (dependencies.ts)
  warnings.push(...deps.warnings);
  const schemas = Object.values(pack.tools).flatMap((d) => [d.inputSchema, d.outputSchema]).filter((x) => x !== undefined);
  if (schemas.some((x) => !isLiteSchema(x))) await loadFullValidator();

  let policy: CapabilityPolicy;
  try {
    policy = capabilityPolicy(pack.manifest);
  } catch (err) {
    throw new ReachError("PACK_INVALID_MANIFEST", `${PACK_FILE}: ${(err as Error).message}`);
  }

  const tools = packTools(pack, files);
  const entrypoint = packEntrypoint(pack, files);
  const workspaceFiles = packWorkspaceFiles(policy, files);
  // Last, as it may take seconds the first time: every component gets its glue (jco), checked and cached.
  for (const tool of tools.values()) {
    if (tool.definition.kind === "component") await prepareComponentTool(tool.name, tool.definition, tool.code, options);
  }

  return Object.freeze({
    pack,
    files,
    manifestHash: hashCanonical(pack.manifest),
    packDigest: (() => {
      try {
        return packDigest(files);
      } catch (err) {
        throw malformed(`the pack's files cannot be listed: ${(err as Error).message}`);
      }
    })(),
    tools,
    entrypoint,
    workspaceFiles,
    warnings,
    deprecations,
    dependencies: deps.resolved,
  });
}

/** The pack's tools by name: every declared tool with its code, except the built-in infrastructure tools. */
function packTools(pack: Pack, files: ReadonlyMap<string, Uint8Array>): Map<string, PackTool> {
  const tools = new Map<string, PackTool>();
  for (const cap of pack.manifest.capabilities.tools) {
    const def = Object.prototype.hasOwnProperty.call(pack.tools, cap.name) ? pack.tools[cap.name] : undefined;
    if (isInfraTool(cap.name)) {
      // seed 002: the infrastructure tools are built in; declaring one is allowed, shipping code for one is not.
      if (def !== undefined) throw new ReachError("PACK_INVALID_MANIFEST", `tool "${cap.name}" is a built-in infrastructure tool (seed 002); remove its "tools" entry or rename your tool`, { details: { tool: cap.name } });
      continue;
    }
    if (def?.kind === "mcp") {
      // An MCP tool has no code: its identity is its definition (server, tool, schemas), which the pack digest covers.
      checkSchemas(cap.name, def);
      tools.set(cap.name, Object.freeze({ name: cap.name, definition: def, code: EMPTY_CODE, codeHash: hashCanonical(def) }));
      continue;
    }
    if (def === undefined) {
      if (cap.optional === true) continue;
      throw new ReachError("EXEC_TOOL_NOT_FOUND", `tool "${cap.name}" is declared in manifest.capabilities.tools but has no code; add it to "tools" with its kind and module, or mark it optional`, {
        details: { tool: cap.name },
      });
    }
    const path = normalisePath(def.module ?? "");
    const code = files.get(path);
    if (code === undefined) {
      throw new ReachError("EXEC_TOOL_NOT_FOUND", `tool "${cap.name}": module ${def.module} is not in the pack; build it or fix the path`, { details: { tool: cap.name, module: def.module } });
    }
    const codeHash = checkToolCode(cap.name, def, code);
    tools.set(cap.name, Object.freeze({ name: cap.name, definition: def, code, codeHash }));
  }
  return tools;
}

/** The pack's entrypoint: a static plan (`*.json`) or a planner module (`*.js`, `*.mjs`). */
function packEntrypoint(pack: Pack, files: ReadonlyMap<string, Uint8Array>): PackEntrypoint {
  const entryPath = normalisePath(pack.entrypoint);
  const entryBytes = files.get(entryPath);
  if (entryBytes === undefined) throw malformed(`the entrypoint ${pack.entrypoint} is not in the pack; add a plan.json or a planner.js`);
  if (entryPath.endsWith(".json")) return { kind: "plan", path: entryPath, document: deepFreeze(decodeJson(entryBytes, entryPath, "PLAN_INVALID")) };
  if (entryPath.endsWith(".js") || entryPath.endsWith(".mjs")) return { kind: "planner", path: entryPath, source: entryBytes };
  throw malformed(`the entrypoint ${pack.entrypoint} must be a static plan (*.json) or a planner module (*.js)`);
}

/** The pack's `workspace/` files by declared root, each under the longest root it sits under. */
function packWorkspaceFiles(
  policy: CapabilityPolicy,
  files: ReadonlyMap<string, Uint8Array>,
): Record<string, Record<string, Uint8Array>> {
  const roots = new Set(policy.workspaceRoots.map((r) => r.root));
  const workspaceFiles: Record<string, Record<string, Uint8Array>> = {};
  for (const root of roots) workspaceFiles[root] = {};
  for (const [path, bytes] of files) {
    if (!path.startsWith(WORKSPACE_DIR)) continue;
    const rest = path.slice(WORKSPACE_DIR.length);
    let root: string | undefined;
    for (const r of roots) if (rest.startsWith(`${r}/`) && (root === undefined || r.length > root.length)) root = r;
    if (root === undefined) {
      const first = rest.split("/")[0] ?? "";
      throw malformed(`${path}: workspace files must sit under a declared root; declare {"uri": "workspace:///${first}/"} in manifest.capabilities.resources or move the file`, { path });
    }
    workspaceFiles[root]![rest.slice(root.length + 1)] = bytes;
  }
  return workspaceFiles;
}

/** What the pack's signature says about it. */
export type PackTrust = {
  /** The pack carries `.reach/signature` and it verified. */
  readonly signed: boolean;
  /** The signing key is in the trust store. */
  readonly trusted: boolean;
  /** Hex public key of the signer. */
  readonly publicKey: string | null;
  /** The trust store's name for the key. */
  readonly keyName: string | null;
};

/**
 * Verify a pack's signature, when it has one (seed 003 §5.4: before execution; a bad signature is a hard failure).
 * @param loaded the pack
 * @param store the trust store (null: nothing is trusted)
 * @returns whether it is signed and by a trusted key
 * @throws ReachError `PACK_INVALID_SIGNATURE` when the signature is malformed, does not verify, or the files changed
 */
export function packTrust(loaded: LoadedPack, store: TrustStore | null): PackTrust {
  const sig = loaded.files.get(SIGNATURE_FILE);
  if (sig === undefined) return { signed: false, trusted: false, publicKey: null, keyName: null };
  const doc = parsePackSignature(sig);
  const v = verifyPackSignature(loaded.files, doc, store ?? undefined);
  return { signed: true, trusted: v.trusted, publicKey: v.publicKey, keyName: v.keyName ?? null };
}
