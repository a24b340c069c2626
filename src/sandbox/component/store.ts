/**
 * The glue store's type (the platform's is `src/platform/component-store.ts`, handed in as
 * `EngineEnvironment.componentGlue`), apart from `load.ts` so that naming it does not load jco's glue checker (acorn).
 * @module
 */

/** Where glue documents may be kept between processes (the platform supplies one; any failure is a miss). */
export type ComponentGlueStore = {
  get(key: string): Promise<Uint8Array | null>;
  set(key: string, bytes: Uint8Array): Promise<void>;
};
