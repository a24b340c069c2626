/**
 * Artifacts emitted by tools (`artifact.emit`; seed 004 "Artifact Structure"; ArtifactInfo of protocol/evidence.ts).
 *
 * Decision: artifact bytes are kept in memory by the sink, not written into the workspace. The workspace is confined
 * to the pack's declared roots (there is no `artifacts` root to write into, and a read-only pack must still be able
 * to emit). Each artifact's `path` is `artifacts/<invocationId>/<name>`: the place a capsule writer stores it (seed
 * 003 §8.2 "Normalized Paths"), unique per invocation so that two steps may emit the same name. The sink is
 * staged per step like the workspace: artifacts of a failed step are dropped (seed 003 §4.3).
 * `artifactId = deriveId("reach-wasm/artifact", invocationId, name, sha256)`; `createdAt` is the virtual clock's
 * current time (not advanced).
 * @module
 */
import { deriveId } from "../../canonical/mod.ts";
import { sha256Hex } from "../../canonical/mod.ts";
import { ReachError } from "../../protocol/mod.ts";
import type { ArtifactInfo } from "../../protocol/mod.ts";

/** One stored artifact: its info and bytes. */
export type StoredArtifact = { info: ArtifactInfo; bytes: Uint8Array };

/** Default most artifacts per run. */
export const DEFAULT_MAX_ARTIFACTS = 1000;
/** Default most artifact bytes per run: 256 MiB. */
export const DEFAULT_MAX_ARTIFACT_BYTES = 256 * 1024 * 1024;

/** MIME type as ArtifactInfo requires it. */
export const MIME_RE = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(?:;[\x20-\x7e]*)?$/;

/**
 * The seed 004 `type` of an artifact, from its MIME type.
 * @param mimeType e.g. `image/png`
 * @returns `"image"`, `"audio"`, `"video"`, `"spreadsheet"`, `"data"` or `"document"`
 * @example artifactType("image/png") // "image"
 */
export function artifactType(mimeType: string): string {
  const m = mimeType.toLowerCase();
  if (m.startsWith("image/")) return "image";
  if (m.startsWith("audio/")) return "audio";
  if (m.startsWith("video/")) return "video";
  if (m.includes("spreadsheet") || m.startsWith("text/csv")) return "spreadsheet";
  if (m.startsWith("application/json") || m.includes("+json") || m.startsWith("application/octet-stream")) return "data";
  return "document";
}

/**
 * The run's artifacts.
 * @example const stage = sink.beginStep(); stage.emit(id, "r.txt", "text/plain", bytes, iso); stage.commit();
 */
export class ArtifactSink {
  #items: StoredArtifact[] = [];
  #bytes = 0;
  readonly #usedCount: number;
  #open: ArtifactStage | null = null;
  readonly maxArtifacts: number;
  readonly maxBytes: number;

  /**
   * @param options limits; `used`: artifacts the run already holds elsewhere (a step that runs apart counts those of
   *   the steps it depends on against the limits)
   * @throws RangeError when a limit is not a positive safe integer
   */
  constructor(options?: { maxArtifacts?: number; maxBytes?: number; used?: { count: number; bytes: number } }) {
    const { used, ...limits } = options ?? {};
    this.#usedCount = used?.count ?? 0;
    this.#bytes = used?.bytes ?? 0;
    for (const [k, v] of Object.entries(limits)) {
      if (v !== undefined && (!Number.isSafeInteger(v) || v <= 0)) throw new RangeError(`"${k}" expected a positive safe integer, got ${v}`);
    }
    this.maxArtifacts = limits.maxArtifacts ?? DEFAULT_MAX_ARTIFACTS;
    this.maxBytes = limits.maxBytes ?? DEFAULT_MAX_ARTIFACT_BYTES;
  }

  /** Committed artifacts, in emission order. */
  get artifacts(): readonly StoredArtifact[] {
    return this.#items;
  }

  /**
   * Add artifacts a step committed apart (on another thread, `src/engine/step-job.ts`), after the ones held.
   * @param items the step's committed artifacts
   * @example sink.adopt(result.artifacts)
   */
  adopt(items: readonly StoredArtifact[]): void {
    if (this.#open !== null) throw new ReachError("PROTO_SEQUENCE_ERROR", "an artifact stage is open; commit or roll it back first");
    this.#items = [...this.#items, ...items];
    for (const a of items) this.#bytes += a.bytes.length;
  }

  /**
   * Open the staging of one step.
   * @returns the stage
   * @throws ReachError `PROTO_SEQUENCE_ERROR` when one is open
   */
  beginStep(): ArtifactStage {
    if (this.#open !== null) throw new ReachError("PROTO_SEQUENCE_ERROR", "an artifact stage is already open; commit or roll it back first");
    const stage = new ArtifactStage(this.#usedCount + this.#items.length, this.#bytes, this, (s, staged) => {
      if (this.#open !== s) return;
      if (staged !== null) {
        this.#items = [...this.#items, ...staged];
        for (const a of staged) this.#bytes += a.bytes.length;
      }
      this.#open = null;
    });
    this.#open = stage;
    return stage;
  }
}

/** The artifacts of one step, staged. Made by {@link ArtifactSink.beginStep}. */
export class ArtifactStage {
  #staged: StoredArtifact[] = [];
  #open = true;
  readonly #count: number;
  #bytes: number;
  readonly #sink: ArtifactSink;
  readonly #close: (s: ArtifactStage, staged: StoredArtifact[] | null) => void;

  /** @internal */
  constructor(count: number, bytes: number, sink: ArtifactSink, close: (s: ArtifactStage, staged: StoredArtifact[] | null) => void) {
    this.#count = count;
    this.#bytes = bytes;
    this.#sink = sink;
    this.#close = close;
  }

  /** Artifacts staged by this step. */
  get staged(): readonly StoredArtifact[] {
    return this.#staged;
  }

  /**
   * Stage an artifact. The caller has validated `name` (one path segment) and `mimeType` (see {@link MIME_RE}).
   * @param invocationId the invocation emitting it
   * @param name the artifact's file name
   * @param mimeType its MIME type
   * @param bytes its content (copied)
   * @param createdAt ISO time from the virtual clock
   * @returns the ArtifactInfo
   * @throws ReachError `PROTO_INVALID_ARGUMENT` when the invocation already emitted this name; `EXEC_DISK_EXCEEDED`
   *   over the sink's limits; `PROTO_SEQUENCE_ERROR` when closed
   */
  emit(invocationId: string, name: string, mimeType: string, bytes: Uint8Array, createdAt: string): ArtifactInfo {
    if (!this.#open) throw new ReachError("PROTO_SEQUENCE_ERROR", "this artifact stage is closed; begin a new step");
    const path = `artifacts/${invocationId}/${name}`;
    if (this.#staged.some((a) => a.info.path === path)) {
      throw new ReachError("PROTO_INVALID_ARGUMENT", `artifact.emit: this invocation already emitted ${JSON.stringify(name)}; ` +
        `use a different name`, { details: { field: "name", name } });
    }
    const n = this.#count + this.#staged.length + 1;
    const total = this.#bytes + bytes.length;
    if (n > this.#sink.maxArtifacts || total > this.#sink.maxBytes) {
      throw new ReachError("EXEC_DISK_EXCEEDED", `artifact.emit would keep ${n} artifacts / ${total} bytes, over the ` +
        `limit of ${this.#sink.maxArtifacts} / ${this.#sink.maxBytes}; emit fewer or smaller artifacts`,
        { details: { operation: "artifact.emit", artifacts: n, bytes: total } });
    }
    const sha256 = sha256Hex(bytes);
    const info: ArtifactInfo = {
      artifactId: deriveId("reach-wasm/artifact", invocationId, name, sha256),
      name,
      type: artifactType(mimeType),
      mimeType,
      path,
      sizeBytes: bytes.length,
      sha256,
      createdAt,
    };
    this.#staged.push({ info, bytes: bytes.slice() });
    this.#bytes = total;
    return { ...info };
  }

  /** Keep the staged artifacts. @throws ReachError `PROTO_SEQUENCE_ERROR` when closed */
  commit(): void {
    if (!this.#open) throw new ReachError("PROTO_SEQUENCE_ERROR", "this artifact stage is closed; begin a new step");
    this.#open = false;
    this.#close(this, this.#staged);
  }

  /** Drop the staged artifacts. Idempotent. */
  rollback(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#staged = [];
    this.#close(this, null);
  }
}
