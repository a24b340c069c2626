// fetch-json — a QuickJS tool (kind "js") of the http pack.
// Input:  { "url": string }
// Output: { "status": integer, "url": string, "bytes": integer, "keys": [string], "title": string | null }
// Fetches a JSON document from an allowed host (the response is recorded on the tape, so replay needs no network)
// and summarises it.
export default async function fetchJson(input, reach) {
  if (typeof input.url !== "string") throw new TypeError('input needs a string "url"');
  const response = await reach.http.fetch(input.url, { headers: { accept: "application/json" } });
  if (response.status !== 200) throw new Error(`${input.url} answered HTTP ${response.status}`);
  const doc = response.json();
  const keys = doc !== null && typeof doc === "object" && !Array.isArray(doc) ? Object.keys(doc).sort() : [];
  const title = typeof doc?.title === "string" ? doc.title : null;
  reach.log.info(`fetched ${response.body.length} bytes from ${response.url}`);
  return { status: response.status, url: response.url, bytes: response.body.length, keys, title };
}
