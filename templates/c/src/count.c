/* count — a reach-wasm tool in C (WASI preview1, wasi-libc).
 *
 * The tool ABI of kind "wasm": the input arrives as JSON on stdin, the output is JSON on stdout, exit code 0 means
 * success (anything else fails the step with EXEC_TOOL_FAILED), stderr is the tool's log. The host API is the
 * optional import module "reach" (docs/authoring.md, "wasm"): here one `log` call.
 *
 * Input {"text": "..."} -> output {"words": N}: N is the number of runs of characters other than space, tab,
 * newline and carriage return in "text" (JSON escapes \n \t \r count as those).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

__attribute__((import_module("reach"), import_name("call")))
int32_t reach_call(const char *op, int32_t op_len, const char *req, int32_t req_len,
                   char *resp, int32_t resp_cap, uint32_t *resp_len_out);

/* Call a host operation; returns the status (0 OK, 1 buffer too small, 2 invalid, 3 unknown op, 4 error). */
static int32_t host(const char *op, const char *request, char *resp, int32_t cap, uint32_t *len) {
  return reach_call(op, (int32_t)strlen(op), request, (int32_t)strlen(request), resp, cap, len);
}

static char input[1 << 20];

/* The value of "text" in the input object, counted as it is scanned; -1 when there is no string "text". */
static long count_words(const char *json, size_t n) {
  const char *key = strstr(json, "\"text\"");
  if (key == NULL) return -1;
  const char *p = key + 6;
  while (p < json + n && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ':')) p++;
  if (p >= json + n || *p != '"') return -1;
  long words = 0;
  int in_word = 0;
  for (p++; p < json + n && *p != '"'; p++) {
    int space = *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r';
    if (*p == '\\' && p + 1 < json + n) {
      p++;
      space = *p == 'n' || *p == 't' || *p == 'r';
    }
    if (!space && !in_word) words++;
    in_word = !space;
  }
  return words;
}

int main(void) {
  size_t n = fread(input, 1, sizeof input - 1, stdin);
  input[n] = 0;
  long words = count_words(input, n);
  if (words < 0) {
    fprintf(stderr, "count: the input has no string \"text\"\n");
    return 1;
  }
  char request[128], response[256];
  uint32_t len = 0;
  snprintf(request, sizeof request, "{\"level\":\"info\",\"message\":\"counted %ld words\"}", words);
  host("log", request, response, sizeof response, &len);
  printf("{\"words\":%ld}\n", words);
  return 0;
}
