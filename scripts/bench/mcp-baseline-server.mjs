// The MCP baseline of `scripts/bench-mcp.ts` over stdio (see `mcp-baseline.mjs`).
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { baselineServer } from "./mcp-baseline.mjs";

await baselineServer().connect(new StdioServerTransport());
