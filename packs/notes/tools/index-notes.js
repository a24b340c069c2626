// index-notes — a QuickJS tool (kind "js") of the notes pack.
// Input:  {}
// Output: { "count": integer, "notes": [{ "slug", "title", "words" }], "files": [string] }
// Reads the note list from the run's memory store, lists out/notes/ and writes out/index.json.
export default function indexNotes(_input, reach) {
  const notes = reach.memory.get("notes/index") ?? [];
  const files = reach.fs.list("out/notes").map((e) => e.name);
  reach.fs.write("out/index.json", JSON.stringify({ notes, files }, null, 2) + "\n");
  return { count: notes.length, notes, files };
}
