/**
 * The slot for the platform's glue store (`src/platform/component-store.ts`), apart from `load.ts` so that installing
 * a store does not load jco's glue checker (acorn) into a process that never meets a component.
 * @module
 */

/** Where glue documents may be kept between processes (the platform supplies one; any failure is a miss). */
export type ComponentGlueStore = {
  get(key: string): Promise<Uint8Array | null>;
  set(key: string, bytes: Uint8Array): Promise<void>;
};

let store: ComponentGlueStore | null = null;

/**
 * Use `next` to keep glue documents between processes (null: memory only).
 * @param next the store
 * @example
 * ```ts
 * setComponentGlueStore(null); // memory only
 * ```
 */
export function setComponentGlueStore(next: ComponentGlueStore | null): void {
  store = next;
}

/**
 * The store in use, if any.
 * @returns the store, or null
 * @example
 * ```ts
 * const where = glueStore() === null ? "memory only" : "disk";
 * ```
 */
export function glueStore(): ComponentGlueStore | null {
  return store;
}
