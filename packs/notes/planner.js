// The notes pack's planner: a pure function of (context, objective, seed), run inside QuickJS with no host access.
// Objective: { "title"?: string, "text"?: string } (defaults make the pack runnable without --input).
export default function plan({ context, objective }) {
  const title = typeof objective?.title === "string" && objective.title.trim() !== "" ? objective.title : "What reach-wasm does";
  const text = typeof objective?.text === "string" ? objective.text : "";
  const declared = new Set(context.tools.map((t) => t.name));
  for (const t of ["checksum", "stats", "slugify", "save-note", "index-notes"]) {
    if (!declared.has(t)) throw new Error(`the pack does not declare tool ${t}`);
  }
  const object = (properties, required = Object.keys(properties)) => ({ type: "object", properties, required });
  return {
    contract_version: "S2-B-05.v1",
    plan_id: "notes-1",
    goal_id: "write-note",
    created_at: "1970-01-01T00:00:00.000Z",
    planner: "packs/notes/planner.js",
    status: "APPROVED",
    risk: { level: 1, rationale: "writes only under out/ and memory://notes/" },
    scope: { allowed: ["checksum", "stats", "slugify", "save-note", "index-notes"] },
    steps: [
      { id: "checksum", tool: "checksum", description: "hash the source text (C, WASI)", arguments: {},
        return_spec: object({ path: { type: "string" }, size: { type: "integer" }, sha256: { type: "string", pattern: "^[0-9a-f]{64}$" } }) },
      { id: "stats", tool: "stats", description: "size and lines of the note text (Rust, WASI)", arguments: { text: text === "" ? title : text },
        return_spec: object({ bytes: { type: "integer" }, lines: { type: "integer" } }) },
      { id: "slug", tool: "slugify", description: "a file name for the note (QuickJS)", arguments: { text: title, maxLength: 40 },
        return_spec: object({ slug: { type: "string", minLength: 1 } }) },
      { id: "save", tool: "save-note", description: "write the note, remember it, emit it as an artifact", depends_on: ["slug"],
        arguments: { title, slug: slugOf(title), text },
        return_spec: object({ path: { type: "string" }, words: { type: "integer", minimum: 1 } }) },
      { id: "index", tool: "index-notes", description: "index the notes from memory", depends_on: ["save"], arguments: {},
        return_spec: object({ count: { type: "integer", minimum: 1 }, files: { type: "array", items: { type: "string" } } }) },
    ],
    success_criteria: ["the note is written under out/notes/", "out/index.json lists it"],
  };
}

// The planner cannot call tools, so it derives the slug the same way the slugify tool does (ASCII subset).
function slugOf(title) {
  const words = title.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase().split(/[^a-z0-9]+/).filter((w) => w !== "");
  let slug = "";
  for (const w of words) {
    const next = slug === "" ? w : `${slug}-${w}`;
    if (next.length > 40) break;
    slug = next;
  }
  return slug === "" ? "note" : slug;
}
