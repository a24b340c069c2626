/**
 * The session's workspace as MCP resources (read-only): each regular file is `workspace:///<path>` (the URI scheme of
 * a pack's declared workspace resources, each path segment percent-encoded), listed with its size and a MIME type
 * from its extension, read as `text` when it is UTF-8 and textual, else as a base64 `blob`.
 * @module
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { ListResourcesResult, ReadResourceResult, Resource } from "@modelcontextprotocol/sdk/types.js";
import type { WorkspaceFile } from "../engine/mod.ts";
import { bytesToBase64 } from "../canonical/mod.ts";

/** The URI prefix of workspace files. */
export const WORKSPACE_URI = "workspace:///";

/** Resources per `resources/list` page. */
export const RESOURCES_PAGE = 500;

/** JSON-RPC error code of an unknown resource (MCP specification, "Resources": Error Handling). */
export const RESOURCE_NOT_FOUND = -32002;

const MIME: Readonly<Record<string, string>> = {
  txt: "text/plain", md: "text/markdown", csv: "text/csv", tsv: "text/tab-separated-values", html: "text/html",
  htm: "text/html", css: "text/css", js: "text/javascript", mjs: "text/javascript", ts: "text/x-typescript",
  py: "text/x-python", c: "text/x-c", h: "text/x-c", rs: "text/x-rust", log: "text/plain", yaml: "application/yaml",
  yml: "application/yaml", toml: "application/toml", json: "application/json", jsonl: "application/jsonl",
  xml: "application/xml", svg: "image/svg+xml", png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg",
  gif: "image/gif", webp: "image/webp", pdf: "application/pdf", wasm: "application/wasm", gz: "application/gzip",
  zip: "application/zip", tar: "application/x-tar",
};

const TEXTUAL = /^(text\/|application\/(json|jsonl|xml|yaml|toml)$|image\/svg\+xml$)/;

/**
 * The MIME type of a workspace path, from its extension (`application/octet-stream` when unknown).
 * @param path a workspace path
 * @returns the MIME type
 * @example mimeOf("out/report.md") // "text/markdown"
 */
export function mimeOf(path: string): string {
  const dot = path.lastIndexOf(".");
  const ext = dot > path.lastIndexOf("/") ? path.slice(dot + 1).toLowerCase() : "";
  return MIME[ext] ?? "application/octet-stream";
}

/**
 * The resource URI of a workspace path.
 * @param path a workspace path (`/`-separated, relative)
 * @returns `workspace:///` and the percent-encoded segments
 * @example workspaceUri("temp/a b.txt") // "workspace:///temp/a%20b.txt"
 */
export function workspaceUri(path: string): string {
  return WORKSPACE_URI + path.split("/").map(encodeURIComponent).join("/");
}

/**
 * The workspace path a resource URI names.
 * @param uri the URI of `resources/read`
 * @returns the workspace path
 * @throws McpError `InvalidParams` for a URI that is not a workspace file's
 * @example pathOfUri("workspace:///temp/a%20b.txt") // "temp/a b.txt"
 */
export function pathOfUri(uri: string): string {
  if (!uri.startsWith(WORKSPACE_URI) || uri.length === WORKSPACE_URI.length) {
    throw new McpError(ErrorCode.InvalidParams, `${JSON.stringify(uri.slice(0, 200))} is not a workspace file: resource URIs are workspace:///<path>, as resources/list gives them`);
  }
  try {
    return uri.slice(WORKSPACE_URI.length).split("/").map(decodeURIComponent).join("/");
  } catch {
    throw new McpError(ErrorCode.InvalidParams, `${JSON.stringify(uri.slice(0, 200))} is not a well-formed URI (bad percent-encoding); use the URI resources/list gives`);
  }
}

/**
 * One page of `resources/list`.
 * @param files the workspace's files, sorted
 * @param cursor the `nextCursor` of the previous page (a decimal offset), or undefined for the first
 * @returns the page, with `nextCursor` when more files follow
 * @throws McpError `InvalidParams` for a cursor this server did not give
 * @example listPage([{ path: "temp/a.txt", size: 1 }], undefined).resources[0].uri // "workspace:///temp/a.txt"
 */
export function listPage(files: readonly WorkspaceFile[], cursor: string | undefined): ListResourcesResult {
  const start = cursor === undefined ? 0 : /^(0|[1-9]\d{0,8})$/.test(cursor) ? Number(cursor) : -1;
  if (start < 0 || start > files.length) throw new McpError(ErrorCode.InvalidParams, `cursor ${JSON.stringify((cursor ?? "").slice(0, 40))} is not one resources/list gave; start again without a cursor`);
  const resources: Resource[] = files.slice(start, start + RESOURCES_PAGE).map((f) => ({
    uri: workspaceUri(f.path),
    name: f.path,
    mimeType: mimeOf(f.path),
    size: f.size,
  }));
  const next = start + RESOURCES_PAGE;
  return next < files.length ? { resources, nextCursor: String(next) } : { resources };
}

/**
 * The `resources/read` answer for a file's bytes: text when the type is textual (or unknown) and the bytes are UTF-8,
 * else a base64 blob.
 * @param uri the resource URI
 * @param path its workspace path
 * @param bytes the file's bytes, or null when there is no such file
 * @returns the contents
 * @throws McpError `-32002` (resource not found) when `bytes` is null
 * @example readContents("workspace:///a.txt", "a.txt", new TextEncoder().encode("hi")).contents[0].text // "hi"
 */
export function readContents(uri: string, path: string, bytes: Uint8Array | null): ReadResourceResult {
  if (bytes === null) throw new McpError(RESOURCE_NOT_FOUND, `no workspace file ${JSON.stringify(path.slice(0, 200))}; resources/list names the workspace's files`, { uri });
  const mimeType = mimeOf(path);
  if (mimeType === "application/octet-stream" || TEXTUAL.test(mimeType)) {
    try {
      return { contents: [{ uri, mimeType: mimeType === "application/octet-stream" ? "text/plain" : mimeType, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) }] };
    } catch {
      // not UTF-8: a blob
    }
  }
  return { contents: [{ uri, mimeType, blob: bytesToBase64(bytes) }] };
}
