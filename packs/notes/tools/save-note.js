// save-note — a QuickJS tool (kind "js") of the notes pack.
// Input:  { "title": string, "slug": string, "text": string }
// Output: { "path": string, "words": integer, "source": { "bytes": integer } , "artifact": string }
// Reads the pack's data file, writes a Markdown note under out/notes/, remembers it in the run's memory store
// (memory://notes/) and emits it as an artifact.
export default function saveNote(input, reach) {
  if (typeof input.title !== "string" || typeof input.slug !== "string" || typeof input.text !== "string") {
    throw new TypeError('input needs string "title", "slug" and "text"');
  }
  if (!/^[a-z0-9][a-z0-9-]{0,79}$/.test(input.slug)) throw new RangeError(`"slug" ${JSON.stringify(input.slug)} is not a slug`);
  const source = reach.fs.read("data/input.txt");
  const body = input.text.trim() === "" ? source : input.text;
  const words = body.split(/\s+/).filter((w) => w !== "").length;
  const note = `# ${input.title}\n\n${body.trim()}\n\n_${words} words, written ${new Date().toISOString()}_\n`;
  const path = `out/notes/${input.slug}.md`;
  reach.fs.write(path, note);
  const previous = reach.memory.get("notes/index") ?? [];
  reach.memory.set("notes/index", [...previous, { slug: input.slug, title: input.title, words }]);
  const artifact = reach.artifact.emit(`${input.slug}.md`, "text/markdown", note);
  reach.log.info(`saved ${path} (${words} words)`);
  return { path, words, source: { bytes: source.length }, artifact: artifact.sha256 };
}
