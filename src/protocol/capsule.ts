/**
 * The capsule index `capsule.json` (seed 003 §8.1; upstream `capsule.schema.json`; ARCHITECTURE "Capsule").
 *
 * Upstream allows events, tool recordings and snapshots inline; reach-wasm keeps each in its own tar entry
 * (`events.jsonl`, the tape, blobs, snapshots) and lists every entry with its digest in `files`, so there is
 * exactly one copy of each. The inline upstream fields are therefore rejected rather than silently ignored.
 * @module
 */
import { z } from "zod";
import { distinct, entryPath, nonEmpty, sha256Hex, strictObject, timestamp, uuid } from "./_common.ts";
import type { StrictObject } from "./_common.ts";
import type { Same } from "./_lazy.ts";

/** The capsule format (upstream `CapsuleManifest.format`). */
export const CAPSULE_FORMAT = "reach.capsule.v1";

/**
 * What `reach-wasm redact` removed (conformance/HASHING.md "Redaction"): `files` keeps every entry's original digest
 * (the run hash commits to them through `contents`); `entries` are absent from the archive; `rewritten` are present
 * with values removed (`events.jsonl`: the `steps`' arguments and outputs with their salts), checked against the
 * digest given here and, through the chain, against the run hash. Outside the digest a run proof signs.
 */
function redactionSchema(): RedactionShape {
  return strictObject("capsule.redacted", {
    steps: z.array(nonEmpty()),
    entries: z.array(strictObject("capsule.redacted.entries[]", { path: entryPath(), by: z.enum(["step", "entry", "blob"]) })),
    rewritten: z.array(strictObject("capsule.redacted.rewritten[]", { path: entryPath(), sha256: sha256Hex(), size: z.int().min(0) })),
  });
}

/**
 * Builds the capsule's schemas. They are built on first use ({@link capsuleSchemas}): a run writes capsules without
 * parsing one, and building zod schemas is a measurable part of a short run's start-up.
 */
function build() {
  /** What the capsule contains (upstream `CapsuleManifest.contents`). */
  const CapsuleContentSchema = z.enum(["events", "tool_recordings", "state_snapshots", "pack_archive", "proof"]);

  /** The capsule manifest: always gzip and deterministic (seed 003 §8.1, §8.2). */
  const CapsuleManifestSchema = strictObject("capsule.manifest", {
    format: z.literal(CAPSULE_FORMAT),
    compression: z.literal("gzip"),
    contents: z
      .array(CapsuleContentSchema)
      .refine(distinct, "capsule.manifest.contents: each kind may appear once")
      .meta({ uniqueItems: true }),
    deterministic: z.literal(true),
  });

  /** One tar entry of the capsule, other than `capsule.json` itself. */
  const CapsuleFileSchema = strictObject("capsule.files[]", {
    path: entryPath(),
    sha256: sha256Hex(),
    size: z.int().min(0),
  });

  /** One file of the pack as archived in the capsule (upstream `PackArchive.files`). */
  const PackArchiveFileSchema = strictObject("capsule.packArchive.files[]", {
    path: entryPath(),
    hash: sha256Hex(),
    size: z.int().min(0),
  });

  /** The pack's files; `hash` is the pack digest (upstream `PackArchive`). */
  const PackArchiveSchema = strictObject("capsule.packArchive", {
    hash: sha256Hex(),
    files: z.array(PackArchiveFileSchema),
  });

  /** A signature over the proof value by a node (upstream `ExecutionProof.attestations`). */
  const AttestationSchema = strictObject("capsule.proof.attestations[]", {
    nodeId: nonEmpty(),
    signature: z.string().min(1),
    signedAt: timestamp(),
  });

  /** The run proof (seed 003 §8.3; upstream `ExecutionProof`). */
  const ExecutionProofSchema = strictObject("capsule.proof", {
    type: z.enum(["run_hash", "merkle_root", "signed_attestation"]),
    algorithm: z.literal("SHA-256"),
    value: sha256Hex(),
    attestations: z.array(AttestationSchema).optional(),
  });

  /** Strictly ascending by UTF-16 code unit, which for the ASCII-only entry paths is byte order. */
  function ascending(paths: readonly string[]): boolean {
    for (let i = 1; i < paths.length; i++) if (!(paths[i - 1]! < paths[i]!)) return false;
    return true;
  }

  /**
   * The capsule index. `createdAt` is the run's virtual epoch time, so that the same run gives the same bytes.
   * `files` lists every other entry in lexicographic order with its digest and size.
   */
  const CapsuleIndexSchema = strictObject("capsule.json", {
    specVersion: z.literal("1.0.0"),
    capsuleId: uuid(),
    runId: uuid(),
    runHash: sha256Hex(),
    createdAt: timestamp(),
    manifest: CapsuleManifestSchema,
    files: z
      .array(CapsuleFileSchema)
      .refine(
        (files) => ascending(files.map((f) => f.path)),
        "capsule.files: paths must be unique and in lexicographic order",
      ),
    packArchive: PackArchiveSchema,
    proof: ExecutionProofSchema.optional(),
    redacted: redactionSchema().optional(),
  }).meta({ description: "A reach-wasm capsule index, capsule.json (Reach Protocol v1.0.0 §8)" });
  return { CapsuleContentSchema, CapsuleManifestSchema, CapsuleFileSchema, PackArchiveFileSchema, PackArchiveSchema, AttestationSchema, ExecutionProofSchema, CapsuleIndexSchema };
}

/** A capsule content kind, as its schema takes it. */
type ContentKinds = z.ZodEnum<{ events: "events"; tool_recordings: "tool_recordings"; state_snapshots: "state_snapshots"; pack_archive: "pack_archive"; proof: "proof" }>;
type CapsuleManifestShape = StrictObject<{
  format: z.ZodLiteral<typeof CAPSULE_FORMAT>;
  compression: z.ZodLiteral<"gzip">;
  contents: z.ZodArray<ContentKinds>;
  deterministic: z.ZodLiteral<true>;
}>;
type CapsuleFileShape = StrictObject<{ path: z.ZodString; sha256: z.ZodString; size: z.ZodInt }>;
type RedactionShape = StrictObject<{
  steps: z.ZodArray<z.ZodString>;
  entries: z.ZodArray<StrictObject<{ path: z.ZodString; by: z.ZodEnum<{ step: "step"; entry: "entry"; blob: "blob" }> }>>;
  rewritten: z.ZodArray<CapsuleFileShape>;
}>;
type PackArchiveFileShape = StrictObject<{ path: z.ZodString; hash: z.ZodString; size: z.ZodInt }>;
type PackArchiveShape = StrictObject<{ hash: z.ZodString; files: z.ZodArray<PackArchiveFileShape> }>;
type AttestationShape = StrictObject<{ nodeId: z.ZodString; signature: z.ZodString; signedAt: z.ZodISODateTime }>;
type ExecutionProofShape = StrictObject<{
  type: z.ZodEnum<{ run_hash: "run_hash"; merkle_root: "merkle_root"; signed_attestation: "signed_attestation" }>;
  algorithm: z.ZodLiteral<"SHA-256">;
  value: z.ZodString;
  attestations: z.ZodOptional<z.ZodArray<AttestationShape>>;
}>;

/** The capsule's schemas, as {@link capsuleSchemas} returns them. */
export interface CapsuleSchemas {
  /** What the capsule contains (upstream `CapsuleManifest.contents`). */
  CapsuleContentSchema: ContentKinds;
  /** The capsule manifest (upstream `CapsuleManifest`). */
  CapsuleManifestSchema: CapsuleManifestShape;
  /** One tar entry of the capsule, other than `capsule.json` itself. */
  CapsuleFileSchema: CapsuleFileShape;
  /** One file of the archived pack (upstream `PackArchive.files`). */
  PackArchiveFileSchema: PackArchiveFileShape;
  /** The archived pack (upstream `PackArchive`). */
  PackArchiveSchema: PackArchiveShape;
  /** A node's signature over the proof value (upstream `ExecutionProof.attestations`). */
  AttestationSchema: AttestationShape;
  /** The run proof (upstream `ExecutionProof`). */
  ExecutionProofSchema: ExecutionProofShape;
  /** `capsule.json`. */
  CapsuleIndexSchema: StrictObject<{
    specVersion: z.ZodLiteral<"1.0.0">;
    capsuleId: z.ZodString;
    runId: z.ZodString;
    runHash: z.ZodString;
    createdAt: z.ZodISODateTime;
    manifest: CapsuleManifestShape;
    files: z.ZodArray<CapsuleFileShape>;
    packArchive: PackArchiveShape;
    proof: z.ZodOptional<ExecutionProofShape>;
    redacted: z.ZodOptional<RedactionShape>;
  }>;
}
// The written types are exactly the built schemas' (see `typedSchema` in ./_lazy.ts).
const _exact: Same<CapsuleSchemas, ReturnType<typeof build>> = true;
void _exact;

let built: CapsuleSchemas | undefined;

/**
 * The capsule's schemas (upstream `CapsuleManifest`, `PackArchive`, `ExecutionProof`; `CapsuleIndexSchema` is
 * `capsule.json`), built once on first use.
 * @returns the schemas
 * @example capsuleSchemas().CapsuleIndexSchema.safeParse(JSON.parse(text)).success
 */
export function capsuleSchemas(): CapsuleSchemas {
  return (built ??= build());
}

type Schemas = CapsuleSchemas;
/** A capsule index. */
export type CapsuleIndex = z.output<Schemas["CapsuleIndexSchema"]>;
/** The capsule manifest. */
export type CapsuleManifest = z.output<Schemas["CapsuleManifestSchema"]>;
/** One capsule entry. */
export type CapsuleFile = z.output<Schemas["CapsuleFileSchema"]>;
/** The archived pack. */
export type PackArchive = z.output<Schemas["PackArchiveSchema"]>;
/** The run proof. */
export type ExecutionProof = z.output<Schemas["ExecutionProofSchema"]>;
/** A node attestation. */
export type Attestation = z.output<Schemas["AttestationSchema"]>;
/** A capsule content kind. */
export type CapsuleContent = z.output<Schemas["CapsuleContentSchema"]>;
