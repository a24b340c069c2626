// js-slugify — a QuickJS tool (kind "js") for reach-wasm.
//
// Input:  { "text": string, "maxLength"?: integer 1..200 (default 80), "separator"?: "-" | "_" | "." (default "-") }
// Output: { "slug": string, "length": integer }
//
// Lower-cases, strips diacritics (NFKD), keeps [a-z0-9], joins the words with the separator and cuts at a word
// boundary. Pure: no host calls except one log line, so its output and tape are identical on every run.
const SEPARATORS = ["-", "_", "."];

export default function slugify(input, reach) {
  if (typeof input !== "object" || input === null || typeof input.text !== "string") {
    throw new TypeError('input must be an object with a string "text"');
  }
  const maxLength = input.maxLength ?? 80;
  if (!Number.isInteger(maxLength) || maxLength < 1 || maxLength > 200) throw new RangeError('"maxLength" must be an integer 1..200');
  const separator = input.separator ?? "-";
  if (!SEPARATORS.includes(separator)) throw new RangeError('"separator" must be one of "-", "_", "."');

  const words = input.text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/ß/g, "ss")
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);

  let slug = "";
  for (const word of words) {
    const next = slug === "" ? word : slug + separator + word;
    if (next.length > maxLength) {
      if (slug === "") slug = word.slice(0, maxLength);
      break;
    }
    slug = next;
  }
  reach.log.debug(`slugified ${input.text.length} characters into ${slug.length}`);
  return { slug, length: slug.length };
}
