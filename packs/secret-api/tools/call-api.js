// call-api — a QuickJS tool (kind "js") of the secret-api pack.
// Input:  { "url": string, "headers"?: { [name]: string } }
// Output: { "status": integer, "url": string, "answer": any, "echoed": string | null }
// The tool never sees the token: reach.secret("API_TOKEN") gives the placeholder "{{secret:API_TOKEN}}", which the
// host replaces with the value only for the secret's hosts, and puts back wherever the value comes back in the answer.
// Extra headers (the "headers" step's output) may hold placeholders too.
export default async function callApi(input, reach) {
  if (typeof input.url !== "string") throw new TypeError('input needs a string "url"');
  const response = await reach.http.fetch(input.url, {
    headers: { ...(input.headers ?? {}), accept: "application/json", authorization: `Bearer ${reach.secret("API_TOKEN")}` },
  });
  let answer = null;
  try {
    answer = response.json();
  } catch {
    answer = null;
  }
  reach.log.info(`${response.status} from ${response.url}: ${response.text()}`);
  return { status: response.status, url: response.url, answer, echoed: response.headers["x-echo"] ?? null };
}
