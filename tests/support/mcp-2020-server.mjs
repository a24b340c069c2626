// An MCP server over stdio (the official SDK's low-level Server) whose tools publish JSON Schema 2020-12 with
// `$schema`, as servers built on newer SDKs and other languages do: `prefixItems`, `$defs`/`$ref` and
// `dependentRequired`, which draft-07 reads differently or not at all. `pair` echoes its arguments as structured
// content; `bad-output` answers structured content its own output schema refuses.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const D2020 = "https://json-schema.org/draft/2020-12/schema";
const input = {
  $schema: D2020,
  type: "object",
  $defs: { label: { type: "string", minLength: 1 } },
  properties: {
    pair: { type: "array", prefixItems: [{ $ref: "#/$defs/label" }, { type: "integer" }], items: false },
    unit: { type: "string" },
    scale: { type: "number" },
  },
  required: ["pair"],
  dependentRequired: { scale: ["unit"] },
  additionalProperties: false,
};
const output = {
  $schema: D2020,
  type: "object",
  properties: { label: { type: "string" }, value: { type: "integer" } },
  required: ["label", "value"],
};
const server = new Server({ name: "schema-2020", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    { name: "pair", description: "Echoes a [label, integer] pair as structured content", inputSchema: input, outputSchema: output },
    { name: "bad-output", description: "Answers structured content its output schema refuses", inputSchema: { $schema: D2020, type: "object" }, outputSchema: output },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, (request) => {
  const args = request.params.arguments ?? {};
  const structured = request.params.name === "pair" ? { label: args.pair[0], value: args.pair[1] } : { label: 7 };
  return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
});
await server.connect(new StdioServerTransport());
