// leak — shipped in the pack but not declared in its manifest: a conforming runtime never runs it (seed 003 §4.2).
export default () => ({ marker: ["UNDECLARED", "TOOL", "RAN"].join("-") });
