/**
 * The pack document `reach.json` (seed 003 §5) and its manifest (§4.1, §5.3), plus reach-wasm's additions:
 * `tools` (where each declared tool's code is, and what it generates), `run` (determinism settings, the default query) and
 * `intents` (seed 004: what a query may ask for and which artifact types satisfy it).
 *
 * Everything a valid `Pack` serialises to validates against upstream `pack.schema.json`: every pattern here is
 * the upstream one or a subset of it, and our extra fields sit where upstream allows additional properties.
 * Objects are strict so that a misspelt field is an error that names the allowed ones.
 * @module
 */
import { z } from "zod";
import {
  distinct,
  ed25519PublicKey,
  ed25519Signature,
  identifier,
  jsonObject,
  relativePath,
  semver,
  strictObject,
  timestamp,
  toolName,
  uriWithScheme,
} from "./_common.ts";
import { typedSchema } from "./_lazy.ts";
import type { StrictObject } from "./_common.ts";
import { SecretsSchema } from "./secrets.ts";

/** The only manifest version (seed 003 §5.3). */
export const MANIFEST_VERSION = "1.0.0";

/** A tool the pack may invoke (seed 003 §4.1 "Capabilities", §5.3). */
export const ToolCapabilitySchema: () => StrictObject<{ name: z.ZodString; version: z.ZodOptional<z.ZodString>; optional: z.ZodOptional<z.ZodBoolean> }> = typedSchema(() => strictObject("manifest.capabilities.tools[]", {
  name: toolName(),
  version: semver().optional(),
  optional: z.boolean().optional(),
}));

/** Resource access modes. */
export const ResourceAccessSchema: () => z.ZodEnum<{ read: "read"; write: "write"; readwrite: "readwrite" }> = typedSchema(() => z.enum(["read", "write", "readwrite"]));

/**
 * A resource the pack may touch: a URI with a scheme (`workspace:///data/`, `memory://notes/`,
 * `https://api.example.com/`), read as a prefix by the policy layer (seed 003 §4.2 "Resource Boundaries").
 */
export const ResourceCapabilitySchema: () => StrictObject<{ uri: z.ZodURL; access: ReturnType<typeof ResourceAccessSchema> }> = typedSchema(() => strictObject("manifest.capabilities.resources[]", {
  uri: uriWithScheme(),
  access: ResourceAccessSchema(),
}));

/** Coarse permissions (upstream `Capabilities.permissions`). */
export const PermissionSchema: () => z.ZodEnum<{ network: "network"; filesystem: "filesystem"; execution: "execution"; env_access: "env_access" }> = typedSchema(() => z.enum(["network", "filesystem", "execution", "env_access"]));

/** Declared capabilities (seed 003 §4.1). Absent lists mean "none". */
export const CapabilitiesSchema: () => StrictObject<{
  tools: z.ZodDefault<z.ZodArray<ReturnType<typeof ToolCapabilitySchema>>>;
  resources: z.ZodDefault<z.ZodArray<ReturnType<typeof ResourceCapabilitySchema>>>;
  permissions: z.ZodDefault<z.ZodArray<ReturnType<typeof PermissionSchema>>>;
}> = typedSchema(() => strictObject("manifest.capabilities", {
  tools: z
    .array(ToolCapabilitySchema())
    .refine((tools) => distinct(tools.map((t) => t.name)), "manifest.capabilities.tools: each name may appear once")
    .default([]),
  resources: z.array(ResourceCapabilitySchema()).default([]),
  permissions: z
    .array(PermissionSchema())
    .refine(distinct, "manifest.capabilities.permissions: each permission may appear once")
    .meta({ uniqueItems: true })
    .default([]),
}));

/** Sandbox settings (upstream `Policies.sandbox`; defaults are upstream's). */
export const SandboxPolicySchema: () => StrictObject<{
  enabled: z.ZodDefault<z.ZodBoolean>;
  network: z.ZodDefault<z.ZodEnum<{ none: "none"; restricted: "restricted"; full: "full" }>>;
  filesystem: z.ZodDefault<z.ZodEnum<{ readonly: "readonly"; readwrite: "readwrite"; isolated: "isolated" }>>;
}> = typedSchema(() => strictObject("manifest.policies.sandbox", {
  enabled: z.boolean().default(true),
  network: z.enum(["none", "restricted", "full"]).default("restricted"),
  filesystem: z.enum(["readonly", "readwrite", "isolated"]).default("isolated"),
}));

/** Host pattern for `allowedHosts`: `api.example.com`, `*.example.com`, optionally with `:port`. */
const HOST_PATTERN_RE = /^(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

/** Execution constraints (seed 003 §4.1 "Policies"; defaults are upstream's). */
export const PoliciesSchema: () => StrictObject<{
  maxExecutionTime: z.ZodDefault<z.ZodInt>;
  maxToolCalls: z.ZodDefault<z.ZodInt>;
  allowedHosts: z.ZodDefault<z.ZodArray<z.ZodString>>;
  sandbox: z.ZodPrefault<ReturnType<typeof SandboxPolicySchema>>;
}> = typedSchema(() => strictObject("manifest.policies", {
  maxExecutionTime: z.int().min(1000).default(300000),
  maxToolCalls: z.int().min(1).default(100),
  allowedHosts: z
    .array(z.string().regex(HOST_PATTERN_RE, { error: "expected a host pattern such as api.example.com or *.example.com" }))
    .default([]),
  sandbox: SandboxPolicySchema().prefault({}),
}));

/** Descriptive metadata (upstream `Metadata`; seed 003 §5.3). */
export const MetadataSchema: () => StrictObject<{
  author: z.ZodOptional<z.ZodString>;
  description: z.ZodOptional<z.ZodString>;
  license: z.ZodOptional<z.ZodString>;
  homepage: z.ZodOptional<z.ZodURL>;
  repository: z.ZodOptional<z.ZodURL>;
  tags: z.ZodOptional<z.ZodArray<z.ZodString>>;
}> = typedSchema(() => strictObject("metadata", {
  author: z.string().optional(),
  description: z.string().max(1000).optional(),
  license: z.string().optional(),
  homepage: uriWithScheme().optional(),
  repository: uriWithScheme().optional(),
  tags: z.array(z.string()).max(20).optional(),
}));

/** The capability manifest (seed 003 §5.3). `policies` is filled with upstream defaults when absent. */
export const ManifestSchema: () => StrictObject<{
  manifestVersion: z.ZodLiteral<typeof MANIFEST_VERSION>;
  capabilities: ReturnType<typeof CapabilitiesSchema>;
  policies: z.ZodPrefault<ReturnType<typeof PoliciesSchema>>;
  metadata: z.ZodOptional<ReturnType<typeof MetadataSchema>>;
}> = typedSchema(() => strictObject("manifest", {
  manifestVersion: z.literal(MANIFEST_VERSION, { error: `manifest.manifestVersion: expected "${MANIFEST_VERSION}"` }),
  capabilities: CapabilitiesSchema(),
  policies: PoliciesSchema().prefault({}),
  metadata: MetadataSchema().optional(),
}));

/** A pack signature (seed 003 §5.4: Ed25519 over a SHA-256 digest; upstream `Signature`). */
export const PackSignatureSchema: () => StrictObject<{
  algorithm: z.ZodLiteral<"Ed25519">;
  digest: z.ZodLiteral<"SHA-256">;
  signature: z.ZodString;
  publicKey: z.ZodOptional<z.ZodString>;
  signedAt: z.ZodOptional<z.ZodISODateTime>;
}> = typedSchema(() => strictObject("signature", {
  algorithm: z.literal("Ed25519"),
  digest: z.literal("SHA-256"),
  signature: ed25519Signature(),
  publicKey: ed25519PublicKey().optional(),
  signedAt: timestamp().optional(),
}));

/** A dependency on another pack (upstream `Dependency`). */
export const DependencySchema: () => StrictObject<{
  id: z.ZodString;
  version: z.ZodString;
  optional: z.ZodOptional<z.ZodBoolean>;
  source: z.ZodOptional<z.ZodURL>;
}> = typedSchema(() => strictObject("dependencies[]", {
  id: identifier(),
  version: z.string().min(1),
  optional: z.boolean().optional(),
  source: uriWithScheme().optional(),
}));

/** A MIME type without parameters (`image/svg+xml`); in an intent, `image/*` stands for every subtype. */
const mimeType = (wildcard: boolean): z.ZodString =>
  z.string().max(255).regex(wildcard ? /^[a-z0-9][a-z0-9!#$&^_.+-]*\/(?:[a-z0-9][a-z0-9!#$&^_.+-]*|\*)$/ : /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/, {
    error: wildcard ? "expected a lowercase MIME type such as image/svg+xml (or image/*)" : "expected a lowercase MIME type such as image/svg+xml",
  });

/** A keyword or phrase of an intent's match rules: words separated by single spaces, matched case-insensitively. */
const keyword = (): z.ZodString => z.string().min(1).max(100).regex(/^\S+(?: \S+)*$/, { error: "expected words separated by single spaces" });

/**
 * An intent's match rules (seed 004 "Intent Classification"), deterministic: the query is split into words (Unicode
 * letters and digits, NFKC, lowercase); each keyword is a word or a phrase of consecutive words. The intent matches
 * when one of `any` (if given) and all of `all` (if given) occur, and none of `none`.
 */
export const IntentMatchSchema: () => StrictObject<{
  any: z.ZodOptional<z.ZodArray<z.ZodString>>;
  all: z.ZodOptional<z.ZodArray<z.ZodString>>;
  none: z.ZodOptional<z.ZodArray<z.ZodString>>;
}> = typedSchema(() => strictObject("intents[].match", {
  any: z.array(keyword()).min(1).max(64).optional(),
  all: z.array(keyword()).min(1).max(64).optional(),
  none: z.array(keyword()).max(64).optional(),
}).refine((m) => m.any !== undefined || m.all !== undefined, { error: "intents[].match needs \"any\" or \"all\"" }));

/**
 * An intent the router may classify a query as (seed 004). With `artifacts` it is a generation intent: a plan for it
 * must use a tool that generates one of these MIME types (`tools[name].generates`), else `PLANNING_ERROR`.
 */
export const IntentSchema: () => StrictObject<{
  name: z.ZodString;
  description: z.ZodOptional<z.ZodString>;
  match: ReturnType<typeof IntentMatchSchema>;
  artifacts: z.ZodOptional<z.ZodArray<z.ZodString>>;
}> = typedSchema(() => strictObject("intents[]", {
  name: identifier(),
  description: z.string().max(1000).optional(),
  match: IntentMatchSchema(),
  artifacts: z.array(mimeType(true)).min(1).max(16).optional(),
}));

/**
 * Where a declared tool's code lives (reach-wasm). `kind`: a WASI preview1 core module, a component (jco),
 * JavaScript run inside QuickJS, or Python (`def main(input, reach)`) run in the sandboxed MicroPython — each with its
 * `module` — or `"mcp"`: the tool `tool` of the MCP server `server` (declared in `mcpServers`), which is recorded, not
 * contained (docs/authoring.md "MCP servers"). `inputSchema` / `outputSchema` are JSON Schemas of the arguments and
 * result (of an MCP tool: the server's `inputSchema` and the `outputSchema` of its `structuredContent`, in the dialect
 * their `$schema` names; none means 2020-12).
 */
export const ToolDefinitionSchema: () => StrictObject<{
  kind: z.ZodEnum<{ wasm: "wasm"; component: "component"; js: "js"; python: "python"; mcp: "mcp" }>;
  module: z.ZodOptional<z.ZodString>;
  server: z.ZodOptional<z.ZodString>;
  tool: z.ZodOptional<z.ZodString>;
  description: z.ZodOptional<z.ZodString>;
  inputSchema: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodUnknown>>;
  outputSchema: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodUnknown>>;
  generates: z.ZodOptional<z.ZodArray<z.ZodString>>;
}> = typedSchema(() => strictObject("tools[name]", {
  kind: z.enum(["wasm", "component", "js", "python", "mcp"]),
  module: relativePath().optional(),
  /** An MCP tool's server: a key of `mcpServers`. */
  server: identifier().optional(),
  /** An MCP tool's name on its server (as its tools/list gives it). */
  tool: z.string().min(1).max(128).optional(),
  description: z.string().max(4000).optional(),
  inputSchema: jsonObject().optional(),
  outputSchema: jsonObject().optional(),
  /** The artifact MIME types the tool generates (seed 004 "generator tool"; intents' plan validation). */
  generates: z.array(mimeType(false)).min(1).max(16).optional(),
}));

/** A name of the environment: letters, digits and `_`, not starting with a digit. */
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * An MCP server a pack's `mcp` tools call, in the shape MCP clients use: `{command, args, env}` starts it as a child
 * process speaking stdio (it gets only `env` plus PATH, and a scratch working directory; `{{scratch}}` in `args` or an
 * `env` value stands for that directory's path, `{{secret:NAME}}` in an `env` value for a declared secret); `{url}`
 * reaches it over Streamable HTTP.
 */
export const McpServerSchema: () => z.ZodUnion<readonly [
  StrictObject<{
    command: z.ZodString;
    args: z.ZodDefault<z.ZodArray<z.ZodString>>;
    env: z.ZodDefault<z.ZodRecord<z.ZodString, z.ZodString>>;
  }>,
  StrictObject<{ url: z.ZodURL; headers: z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodString>> }>,
]> = typedSchema(() => z.union([
  strictObject("mcpServers[name]", {
    command: z.string().min(1).max(4096),
    args: z.array(z.string().max(4096)).max(256).default([]),
    env: z.record(z.string().regex(ENV_NAME_RE, "an environment variable name (letters, digits, _)").max(256), z.string().max(65536)).default({}),
  }),
  strictObject("mcpServers[name]", {
    url: z.url({ protocol: /^https?$/ }).max(4096),
    headers: z.record(z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "a header name").max(256), z.string().max(8192)).optional(),
  }),
]).meta({ description: "An MCP server: {command, args, env} over stdio, or {url} over Streamable HTTP" }));

/** The checks between `tools` of kind `mcp` and `mcpServers` (and `module` on every other kind). */
function checkToolSources(pack: { tools: Record<string, z.output<ReturnType<typeof ToolDefinitionSchema>>>; mcpServers?: Record<string, unknown> | undefined }, ctx: z.RefinementCtx): void {
  for (const [name, def] of Object.entries(pack.tools)) {
    const path = ["tools", name];
    if (def.kind === "mcp") {
      if (def.module !== undefined) ctx.addIssue({ code: "custom", path: [...path, "module"], message: `tool "${name}" is an MCP tool: it has no module; remove "module"` });
      if (def.server === undefined || def.tool === undefined) ctx.addIssue({ code: "custom", path, message: `tool "${name}" of kind "mcp" needs "server" (a key of mcpServers) and "tool" (the server's tool name)` });
      else if (pack.mcpServers === undefined || !Object.prototype.hasOwnProperty.call(pack.mcpServers, def.server)) ctx.addIssue({ code: "custom", path: [...path, "server"], message: `tool "${name}" names the MCP server "${def.server}", which mcpServers does not declare; add it (reach-wasm pack add-mcp) or fix the name` });
    } else {
      if (def.module === undefined) ctx.addIssue({ code: "custom", path: [...path, "module"], message: `tool "${name}" of kind "${def.kind}" needs "module": the path of its code in the pack` });
      if (def.server !== undefined || def.tool !== undefined) ctx.addIssue({ code: "custom", path, message: `tool "${name}": "server" and "tool" belong to kind "mcp" tools only` });
    }
  }
}

/**
 * Run settings (reach-wasm): the virtual clock's start, the replan budget, the plan step limit, and the query of a
 * run whose input names none (seed 004 `ProductionRun.query`; `src/engine/intent.ts`).
 */
export const RunSettingsSchema: () => StrictObject<{
  epoch: z.ZodOptional<z.ZodISODateTime>;
  maxReplans: z.ZodDefault<z.ZodInt>;
  maxSteps: z.ZodOptional<z.ZodInt>;
  query: z.ZodOptional<z.ZodString>;
}> = typedSchema(() => strictObject("run", {
  epoch: timestamp().optional(),
  maxReplans: z.int().min(0).default(0),
  maxSteps: z.int().min(1).max(100).optional(),
  query: z.string().max(4096).optional(),
}));

/** The protocol version reach-wasm implements (seed 003 §5.2); packs must share its major version. */
export const PROTOCOL_SPEC_VERSION = "1.0.0";

/**
 * The pack document `reach.json` (seed 003 §5.1). Cross-field rule: every key of `tools` must be declared in
 * `manifest.capabilities.tools` (seed 003 §4.1: only declared tools may be used). The major-version check of
 * `specVersion` is the loader's (it needs code `PROTO_VERSION_MISMATCH`), not the schema's.
 */
export const PackSchema: () => StrictObject<{
  specVersion: z.ZodString;
  id: z.ZodString;
  version: z.ZodString;
  manifest: ReturnType<typeof ManifestSchema>;
  entrypoint: z.ZodString;
  metadata: z.ZodOptional<ReturnType<typeof MetadataSchema>>;
  signature: z.ZodOptional<ReturnType<typeof PackSignatureSchema>>;
  dependencies: z.ZodOptional<z.ZodArray<ReturnType<typeof DependencySchema>>>;
  tools: z.ZodDefault<z.ZodRecord<z.ZodString, ReturnType<typeof ToolDefinitionSchema>>>;
  mcpServers: z.ZodOptional<z.ZodRecord<z.ZodString, ReturnType<typeof McpServerSchema>>>;
  run: z.ZodOptional<ReturnType<typeof RunSettingsSchema>>;
  intents: z.ZodOptional<z.ZodArray<ReturnType<typeof IntentSchema>>>;
  secrets: z.ZodOptional<ReturnType<typeof SecretsSchema>>;
}> = typedSchema(() => strictObject("reach.json", {
  specVersion: semver(),
  id: identifier(),
  version: semver(),
  manifest: ManifestSchema(),
  entrypoint: relativePath(),
  metadata: MetadataSchema().optional(),
  signature: PackSignatureSchema().optional(),
  dependencies: z.array(DependencySchema()).optional(),
  tools: z.record(toolName(), ToolDefinitionSchema()).default({}),
  /** The MCP servers the pack's `mcp` tools call, by name (the shape MCP clients use). */
  mcpServers: z.record(identifier(), McpServerSchema()).optional(),
  run: RunSettingsSchema().optional(),
  intents: z.array(IntentSchema()).max(64).optional(),
  /** Secrets the pack's tools need: name → hosts the value may go to (`./secrets.ts`). */
  secrets: SecretsSchema().optional(),
})
  .superRefine((pack, ctx) => {
    checkToolSources(pack, ctx);
    const names = new Set<string>();
    for (const [i, intent] of (pack.intents ?? []).entries()) {
      if (names.has(intent.name)) ctx.addIssue({ code: "custom", path: ["intents", i, "name"], message: `intent "${intent.name}" is declared twice; intent names are unique` });
      names.add(intent.name);
    }
    const declared = new Set(pack.manifest.capabilities.tools.map((t) => t.name));
    for (const name of Object.keys(pack.tools)) {
      if (!declared.has(name)) {
        ctx.addIssue({
          code: "custom",
          path: ["tools", name],
          message: `tool "${name}" has code but is not declared; add {"name": "${name}"} to manifest.capabilities.tools`,
        });
      }
    }
  })
  .meta({ description: "A reach-wasm pack, reach.json (Reach Protocol v1.0.0 §5)" }));

/** A parsed pack (defaults filled in). */
export type Pack = z.output<ReturnType<typeof PackSchema>>;
/** A pack as written in `reach.json` (defaults may be omitted). */
export type PackInput = z.input<ReturnType<typeof PackSchema>>;
/** A parsed manifest. */
export type Manifest = z.output<ReturnType<typeof ManifestSchema>>;
/** Declared capabilities. */
export type Capabilities = z.output<ReturnType<typeof CapabilitiesSchema>>;
/** A declared tool capability. */
export type ToolCapability = z.output<ReturnType<typeof ToolCapabilitySchema>>;
/** A declared resource capability. */
export type ResourceCapability = z.output<ReturnType<typeof ResourceCapabilitySchema>>;
/** A resource access mode. */
export type ResourceAccess = z.output<ReturnType<typeof ResourceAccessSchema>>;
/** A coarse permission. */
export type Permission = z.output<ReturnType<typeof PermissionSchema>>;
/** Execution policies with defaults filled in. */
export type Policies = z.output<ReturnType<typeof PoliciesSchema>>;
/** Sandbox settings. */
export type SandboxPolicy = z.output<ReturnType<typeof SandboxPolicySchema>>;
/** Pack metadata. */
export type Metadata = z.output<ReturnType<typeof MetadataSchema>>;
/** A pack signature. */
export type PackSignature = z.output<ReturnType<typeof PackSignatureSchema>>;
/** A pack dependency. */
export type Dependency = z.output<ReturnType<typeof DependencySchema>>;
/** Where a tool's code lives. */
export type ToolDefinition = z.output<ReturnType<typeof ToolDefinitionSchema>>;
/** An MCP server entry. */
export type McpServer = z.output<ReturnType<typeof McpServerSchema>>;
/** Run settings. */
export type RunSettings = z.output<ReturnType<typeof RunSettingsSchema>>;
/** An intent (seed 004). */
export type Intent = z.output<ReturnType<typeof IntentSchema>>;
