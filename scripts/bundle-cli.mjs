// `npm run build`, after `tsc`: bundle the CLI into dist/cli (see scripts/bundle/bundle.mjs for what and why).
// `dist/mod.js` (the library) stays tsc's unbundled output; Deno runs `src/` directly.
// REACH_BUNDLE_MINIFY=0 keeps names and lines readable in CPU profiles.
import process from "node:process";
import { bundleCli } from "./bundle/bundle.mjs";

await bundleCli({ outdir: "dist/cli", minify: process.env.REACH_BUNDLE_MINIFY !== "0" });
