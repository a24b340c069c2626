// Seed 004's router: where the query comes from, how it is classified, and the plan gate's generator rule.
import { describe, expect, it } from "vitest";
import { ReachError } from "../protocol/errors.ts";
import { PackSchema } from "../protocol/pack.ts";
import type { Intent } from "../protocol/pack.ts";
import { checkIntentPlan, classifyIntent, queryOf, queryWords } from "./intent.ts";
import { packFromDisk, runFiles } from "../../tests/support/pack.ts";

const INTENTS: Intent[] = [
  { name: "image_generate", match: { any: ["imagen", "image", "picture"], none: ["chart"] }, artifacts: ["image/*"] },
  { name: "pdf_generate", match: { any: ["pdf"] }, artifacts: ["application/pdf"] },
  { name: "web_search", match: { all: ["busca", "información"] } },
  { name: "slides_create", match: { any: ["una presentación", "slides"] }, artifacts: ["application/vnd.openxmlformats-officedocument.presentationml.presentation"] },
];

describe("the query", () => {
  it("is input.query, a string input, else the pack's run.query, else empty", () => {
    const pack = { run: { query: "default", maxReplans: 0 } };
    expect(queryOf({ query: "crea un pdf" }, pack)).toBe("crea un pdf");
    expect(queryOf("crea un pdf", pack)).toBe("crea un pdf");
    expect(queryOf({ text: "x" }, pack)).toBe("default");
    expect(queryOf({ query: 3 }, {})).toBe("");
  });
  it("is split into NFKC lowercase words of letters and digits", () => {
    expect(queryWords("Crea un GRÁFICO, ¡ya! ＰＤＦ2")).toEqual(["crea", "un", "gráfico", "ya", "pdf2"]);
  });
});

describe("classification (seed 004 examples)", () => {
  const cases: [string, string | null][] = [
    ["crea una imagen de un gato", "image_generate"],
    ["crea un pdf", "pdf_generate"],
    ["busca información sobre X", "web_search"],
    ["busca X", null],
    ["genera una presentación", "slides_create"],
    ["una image chart", null],
    ["hola", null],
  ];
  for (const [query, name] of cases) {
    it(`${JSON.stringify(query)} → ${name}`, () => expect(classifyIntent(INTENTS, query)?.name ?? null).toBe(name));
  }
  it("the first matching intent in the pack's order wins; no intents → null", () => {
    expect(classifyIntent(INTENTS, "an image in a pdf")?.name).toBe("image_generate");
    expect(classifyIntent(undefined, "crea un pdf")).toBeNull();
  });
});

describe("plan validation for a generation intent", () => {
  const plan = (...tools: string[]) => tools.map((tool, i) => ({ id: `s${i}`, tool, arguments: {} }));
  const generates = new Map([["pdf", ["application/pdf"]], ["png", ["image/png"]], ["sum", []]]);
  const reason = (tools: string[], intent: Intent["name"]): unknown => {
    const i = classifyIntent(INTENTS, intent === "image_generate" ? "an image" : "a pdf")!;
    try {
      checkIntentPlan(plan(...tools) as never, i, generates);
      return "ok";
    } catch (err) {
      expect(err).toBeInstanceOf(ReachError);
      expect((err as ReachError).code).toBe("PLANNING_ERROR");
      return (err as ReachError).details["reason"];
    }
  };
  it("passes when a step's tool generates a matching type (image/* covers image/png)", () => {
    expect(reason(["sum", "pdf"], "pdf_generate")).toBe("ok");
    expect(reason(["png"], "image_generate")).toBe("ok");
  });
  it("refuses a plan without a generator tool (no_generator) or with the wrong one (artifact_mismatch)", () => {
    expect(reason(["sum"], "pdf_generate")).toBe("no_generator");
    expect(reason(["png"], "pdf_generate")).toBe("artifact_mismatch");
  });
  it("does nothing without a generation intent", () => {
    expect(() => checkIntentPlan(plan("sum") as never, null, generates)).not.toThrow();
    expect(() => checkIntentPlan(plan("sum") as never, { name: "web_search", artifacts: [] }, generates)).not.toThrow();
  });
});

describe("reach.json intents", () => {
  const base = JSON.parse(new TextDecoder().decode(packFromDisk("chart").get("reach.json")!));
  it("the chart pack declares intents, a generator tool and a default query", () => {
    expect(PackSchema().safeParse(base).success).toBe(true);
  });
  it("refuses duplicate intent names, empty rules, bad MIME types", () => {
    const bad = (patch: object) => PackSchema().safeParse({ ...base, ...patch }).success;
    expect(bad({ intents: [base.intents[0], base.intents[0]] })).toBe(false);
    expect(bad({ intents: [{ name: "x", match: {} }] })).toBe(false);
    expect(bad({ intents: [{ name: "x", match: { any: ["a"] }, artifacts: ["SVG"] }] })).toBe(false);
    expect(bad({ tools: { ...base.tools, chart: { ...base.tools.chart, generates: ["image/*"] } } })).toBe(false);
  });
  it("a run records the intent in run.started; the mismatch pack fails planning with PLANNING_ERROR", async () => {
    const ok = await runFiles(packFromDisk("chart"));
    expect(ok.status).toBe("COMPLETED");
    expect(ok.events[0]!.payload["intent"]).toEqual({ name: "chart_generate", artifacts: ["image/svg+xml"] });
    expect(ok.artifacts.map((a) => a.info.mimeType)).toEqual(["image/svg+xml"]);
    const analyze = await runFiles(packFromDisk("chart"), { input: { query: "analiza las ventas" } });
    expect(analyze.events[0]!.payload["intent"]).toEqual({ name: "data_analyze", artifacts: [] });
    const bad = await runFiles(packFromDisk("intent_mismatch_fail"));
    expect([bad.status, bad.error?.code, bad.error?.details["reason"]]).toEqual(["FAILED", "PLANNING_ERROR", "no_generator"]);
  });
});
