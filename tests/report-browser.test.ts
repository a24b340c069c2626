// The HTML report in a real browser (headless Chromium, Debian's `chromium`, driven by playwright-core): the page of a
// packs/notes run renders without a console error or a network request, shows every step, opens a step from its
// summary and from the plan graph, and its layout (element positions and sizes, with a tolerance; not pixels)
// matches tests/report-layout.json (UPDATE_LAYOUT=1 rewrites it). A run whose tool returns markup shows it as text
// and runs none of it. Skipped, saying so, only when /usr/bin/chromium is missing outside CI; CI installs it.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, ROOT, runNotes } from "./_test-report.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const LAYOUT_FILE = join(ROOT, "tests/report-layout.json");
const VIEWPORT = { width: 1280, height: 900 };
const STEPS = ["checksum", "stats", "slug", "save", "index"];
const present = existsSync(CHROMIUM);
if (!present && process.env["CI"] === "true") throw new Error(`${CHROMIUM} is missing: CI must install Debian's chromium (.ci/run)`);
if (!present) console.warn(`report-browser.test.ts: SKIPPED — ${CHROMIUM} is missing; install it with \`apt-get install -y chromium\` to run the browser checks`);

type Box = { x: number; y: number; width: number; height: number };
/** Elements whose boxes make the layout: the page's landmarks, each step's summary, each plan node. */
const LAYOUT_SELECTORS = ["#summary", "nav#toc", "#timeline-svg", "#plan-graph", "#steps .toolbar", ...STEPS.map((_, i) => `#step-${i + 1} > summary`), "#workspace table", "#artifacts li.artifact", "#verification table", "footer"];

const scratch = mkdtempSync(join(tmpdir(), "reach-browser-"));
let context: BrowserContext;
let notesPage = "";

/** Open `file` with network access refused and every console message, page error and request recorded. */
async function open(file: string): Promise<{ page: Page; errors: string[]; requests: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  page.on("console", (m) => void (m.type() === "error" || m.type() === "warning" ? errors.push(`${m.type()}: ${m.text()}`) : undefined));
  page.on("pageerror", (e) => void errors.push(`pageerror: ${e.message}`));
  page.on("request", (r) => void requests.push(r.url()));
  page.on("dialog", (d) => void errors.push(`dialog: ${d.message()}`));
  await page.goto(`file://${file}`, { waitUntil: "load" });
  return { page, errors, requests };
}

async function boxes(page: Page): Promise<Record<string, Box>> {
  const out: Record<string, Box> = {};
  for (const sel of LAYOUT_SELECTORS) {
    const b = await page.locator(sel).first().boundingBox();
    if (b === null) throw new Error(`${sel} is not laid out`);
    out[sel] = { x: Math.round(b.x), y: Math.round(b.y), width: Math.round(b.width), height: Math.round(b.height) };
  }
  return out;
}

/** Position tolerance grows down the page (font metrics add up); sizes get 10 % or 12 px. */
function near(actual: Box, expected: Box): string | null {
  const tolY = Math.max(24, expected.y * 0.06);
  const size = (a: number, e: number) => Math.abs(a - e) <= Math.max(12, e * 0.1);
  if (Math.abs(actual.x - expected.x) > 16) return `x ${actual.x} vs ${expected.x}`;
  if (Math.abs(actual.y - expected.y) > tolY) return `y ${actual.y} vs ${expected.y} (±${Math.round(tolY)})`;
  if (!size(actual.width, expected.width)) return `width ${actual.width} vs ${expected.width}`;
  if (!size(actual.height, expected.height)) return `height ${actual.height} vs ${expected.height}`;
  return null;
}

describe.skipIf(!present)("the HTML report in headless Chromium", () => {
  beforeAll(async () => {
    const run = await runNotes(join(scratch, "out"));
    notesPage = join(scratch, "notes.html");
    const r = await cli(["report", run.capsule, "--out", notesPage]);
    if (r.code !== 0) throw new Error(r.stderr);
    context = await chromium.launchPersistentContext(join(scratch, "profile"), { executablePath: CHROMIUM, args: ARGS, headless: true, viewport: VIEWPORT, offline: true });
    await context.route("**/*", (route) => (route.request().url().startsWith("file://") ? route.continue() : route.abort()));
  }, 120_000);
  afterAll(async () => {
    await context?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("renders without console errors or network requests and shows every step of packs/notes", async () => {
    const { page, errors, requests } = await open(notesPage);
    expect(await page.locator("details.step").evaluateAll((els) => els.map((e) => e.getAttribute("data-step-id")))).toEqual(STEPS);
    for (const s of STEPS) await expect(page.locator(`details.step[data-step-id="${s}"] > summary`).isVisible()).resolves.toBe(true);
    expect(await page.locator("#plan-graph .graph-node").count()).toBe(5);
    expect(await page.locator("#timeline-svg rect.bar").count()).toBe(5);
    expect(await page.locator(".badge.ok").textContent()).toBe("verified");
    expect(errors).toEqual([]);
    expect(requests).toEqual([`file://${notesPage}`]);
    await page.close();
  });

  it("expands a step from its summary and from the plan graph; Expand all opens every step", async () => {
    const { page, errors } = await open(notesPage);
    const save = page.locator("#step-4");
    expect(await save.getAttribute("open")).toBeNull();
    expect(await page.getByText("Tape (7 host calls)").isVisible()).toBe(false);
    await page.click("#step-4 > summary");
    expect(await save.getAttribute("open")).not.toBeNull();
    expect(await page.getByText("Tape (7 host calls)").isVisible()).toBe(true);
    expect(await save.locator("table.tape tbody tr").count()).toBe(7);
    await page.click('#plan-graph a[href="#step-5"]');
    await page.waitForFunction(() => (document.getElementById("step-5") as HTMLDetailsElement).open);
    await page.click('button[data-expand="all"]');
    expect(await page.locator("details.step[open]").count()).toBe(5);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("lays out like tests/report-layout.json (positions and sizes within a tolerance)", async () => {
    const { page } = await open(notesPage);
    const shot = await page.screenshot({ fullPage: true, path: join(scratch, "notes.png") });
    expect(shot.readUInt32BE(16)).toBe(VIEWPORT.width); // PNG IHDR width
    const actual = await boxes(page);
    if (process.env["UPDATE_LAYOUT"] === "1") writeFileSync(LAYOUT_FILE, JSON.stringify({ viewport: VIEWPORT, boxes: actual }, null, 2) + "\n");
    const expected = JSON.parse(readFileSync(LAYOUT_FILE, "utf8")) as { boxes: Record<string, Box> };
    const off = LAYOUT_SELECTORS.map((sel) => [sel, near(actual[sel]!, expected.boxes[sel]!)] as const).filter(([, d]) => d !== null);
    expect(off, `layout differs (UPDATE_LAYOUT=1 after a deliberate change): ${JSON.stringify(off)}`).toEqual([]);
    await page.close();
  });

  it("a tool output holding </script> and markup is shown as text; nothing in it runs", async () => {
    const pack = join(scratch, "evil-pack");
    mkdirSync(join(pack, "tools"), { recursive: true });
    writeFileSync(join(pack, "reach.json"), JSON.stringify({
      specVersion: "1.0.0", id: "evil", version: "1.0.0", entrypoint: "plan.json",
      manifest: { manifestVersion: "1.0.0", capabilities: { tools: [{ name: "evil" }], permissions: ["filesystem"] }, policies: { maxToolCalls: 5 } },
      metadata: { description: "markup in outputs" }, tools: { evil: { kind: "js", module: "tools/evil.js" } },
    }));
    writeFileSync(join(pack, "plan.json"), JSON.stringify({
      contract_version: "S2-B-05.v1", plan_id: "p1", goal_id: "g1", created_at: "1970-01-01T00:00:00.000Z", planner: "static", status: "APPROVED",
      risk: { level: 0 }, scope: { allowed: ["evil"] }, success_criteria: ["shown as text"],
      steps: [{ id: "s1", tool: "evil", arguments: {}, return_spec: { type: "object", required: ["html"], properties: { html: { type: "string" } } } }],
    }));
    writeFileSync(join(pack, "tools/evil.js"), [
      "const PNG = [137,80,78,71,13,10,26,10,0,0,0,13,73,72,68,82,0,0,0,1,0,0,0,1,8,6,0,0,0,31,21,196,137,0,0,0,13,73,68,65,84,120,218,99,100,248,207,80,15,0,3,134,1,128,90,52,125,107,0,0,0,0,73,69,78,68,174,66,96,130];",
      "export default (input, reach) => {",
      "  reach.log.info('<img src=x onerror=\"window.__pwned = 1\">');",
      "  reach.artifact.emit('pixel.png', 'image/png', new Uint8Array(PNG));",
      "  reach.artifact.emit('page.html', 'text/html', '<script>window.__pwned = 2</script>');",
      "  return { html: '</script><script>window.__pwned = 3</script><b>bold</b>' };",
      "};",
    ].join("\n"));
    const r = await cli(["run", pack, "--unrestricted", "--json", "--out", join(scratch, "evil-out")]);
    expect(r.code, r.stderr).toBe(0);
    const html = join(scratch, "evil.html");
    expect((await cli(["report", JSON.parse(r.stdout).capsule, "--out", html])).code).toBe(0);
    const { page, errors, requests } = await open(html);
    await page.click("#step-1 > summary");
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator("#step-1 pre.value").allTextContents()).toContain(JSON.stringify({ html: "</script><script>window.__pwned = 3</script><b>bold</b>" }, null, 2));
    expect(await page.locator("b:text('bold')").count()).toBe(0);
    expect(await page.locator("#artifacts img.artifact-image").evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1);
    expect(await page.locator("#artifacts a.download").count()).toBe(2);
    expect(errors).toEqual([]);
    expect(requests).toEqual([`file://${html}`]);
    await page.close();
  });
});
