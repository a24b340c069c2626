/**
 * Runtime adapters (the only place besides `src/cli/` that may import `node:` modules or use `Deno`).
 * @module
 */
export { nativeSha256Backend } from "./native-sha256.ts";
export { readQuickJsEngineWasm } from "./quickjs-engine.ts";
export { readPythonWasm } from "./python-engine.ts";
export { readDirTree, readHostFile } from "./files.ts";
export { terminalInfo } from "./terminal.ts";
export type { TerminalInfo } from "./terminal.ts";
export type { HostTree, TreeLimits } from "./files.ts";
