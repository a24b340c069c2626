/** Bundle the CLI into `outdir` (scripts/bundle/bundle.mjs). `train`: make the code cache with a run of packs/hello. */
export function bundleCli(options: { outdir: string; minify?: boolean; train?: boolean }): Promise<void>;
