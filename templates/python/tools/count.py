# count — a reach-wasm tool in Python, run in MicroPython (kind "python").
#
# The tool ABI of kind "python": `main(input, reach)` is called with the input (dicts, lists, str, int, ...) and the
# host API (docs/authoring.md, "python"); it returns the output (JSON-serialisable). An exception fails the step
# with EXEC_TOOL_FAILED and the guest's traceback.
#
# Input {"text": "..."} -> output {"words": N}: N is the number of runs of characters other than space, tab,
# newline and carriage return in "text".


def main(input, reach):
    text = input["text"]
    for c in "\t\n\r":
        text = text.replace(c, " ")
    words = len([w for w in text.split(" ") if w])
    reach.log("counted %d words" % words)
    return {"words": words}
