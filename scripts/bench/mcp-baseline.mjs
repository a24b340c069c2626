// The MCP baseline of `scripts/bench-mcp.ts`: an MCP server on the same SDK (the low-level Server, as reach-wasm's)
// offering `packs/hello`'s tool, whose handler does the same work in plain JavaScript: no sandbox, no checks, no record.
// Plain JavaScript so that Node and Deno run it as it is (`mcp-baseline-server.mjs` serves it over stdio).
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const wordcount = {
  name: "wordcount",
  description: "Counts words, characters and lines of {text}",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
  outputSchema: {
    type: "object",
    properties: { words: { type: "integer", minimum: 0 }, chars: { type: "integer", minimum: 0 }, lines: { type: "integer", minimum: 0 } },
    required: ["words", "chars", "lines"],
  },
};

function count(text) {
  const words = text.split(/\s+/).filter((w) => w.length > 0).length;
  const lines = (text.match(/\n/g) ?? []).length;
  return { words, chars: text.length, lines };
}

/** The baseline server (connect it to a transport). */
export function baselineServer() {
  const server = new Server({ name: "baseline", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [wordcount] }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const output = count(String(request.params.arguments?.text ?? ""));
    return { content: [{ type: "text", text: JSON.stringify(output) }], structuredContent: output };
  });
  return server;
}
