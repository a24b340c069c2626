// count — a reach-wasm tool in JavaScript, run in QuickJS (kind "js").
//
// The tool ABI of kind "js": the module's default export is called as (input, reach) with the input object and the
// host API (docs/authoring.md, "js"); it returns the output (a JSON value, or a Promise of one). A thrown error
// fails the step with EXEC_TOOL_FAILED. Date and Math.random are the run's virtual clock and seeded stream.
//
// Input {"text": "..."} -> output {"words": N}: N is the number of runs of characters other than space, tab,
// newline and carriage return in "text".
export default function count(input, reach) {
  const words = input.text.split(/[ \t\n\r]+/).filter((w) => w !== "").length;
  reach.log.info(`counted ${words} words`);
  return { words };
}
