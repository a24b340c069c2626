// `npm run build`, after `tsc`: bundle the CLI into dist/cli (see scripts/bundle/bundle.mjs for what and why).
// `dist/mod.js` (the library) stays tsc's unbundled output; Deno runs `src/` directly. tsc's own output for src/cli/
// goes first: the bundle is the CLI, and its folder is CommonJS (dist/cli/package.json), where ES modules end in .mjs.
// REACH_BUNDLE_MINIFY=0 keeps names and lines readable in CPU profiles.
import { rmSync } from "node:fs";
import process from "node:process";
import { bundleCli } from "./bundle/bundle.mjs";

rmSync("dist/cli", { recursive: true, force: true });
await bundleCli({ outdir: "dist/cli", minify: process.env.REACH_BUNDLE_MINIFY !== "0" });
