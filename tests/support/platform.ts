// The platform as the tests of the inner rooms and the faces use it (the QuickJS and Python engines read from the
// installed packages, native SHA-256, packs and trust stores on disk, the SQL database, the run queue, the HTTP
// server). Those rooms import no platform (tests/arrows.test.ts), their tests included: they take it from here.
export { readQuickJsEngineWasm } from "../../src/platform/quickjs-engine.ts";
export { readPythonWasm } from "../../src/platform/python-engine.ts";
export { nativeSha256Backend } from "../../src/platform/native-sha256.ts";
export { readPackFiles } from "../../src/host/pack-files.ts";
export { watchTrustStore } from "../../src/platform/trust-file.ts";
export { openDatabase } from "../../src/platform/postgres.ts";
export { openRunQueue } from "../../src/platform/job-queue.ts";
export { serveHttp } from "../../src/platform/http-server.ts";
export { launchMcpStdio } from "../../src/platform/mcp-stdio.ts";
