/* count — a reach-wasm tool as a WebAssembly component of the world reach:tool/tool (wit/tool.wit), written in C
 * without libc; the canonical ABI is lowered by hand below, so nothing but clang and jco is needed.
 *
 * The tool ABI of kind "component": `invoke(input)` gets the input as JSON text and returns ok(output JSON text) or
 * err(message) (reported as EXEC_TOOL_FAILED). The host API is the import `reach:tool/host` `call(op, request)`
 * (docs/authoring.md, "component"): here one `log` call.
 *
 * Input {"text": "..."} -> output {"words": N}: N is the number of runs of characters other than space, tab,
 * newline and carriage return in "text" (JSON escapes \n \t \r count as those).
 *
 * Canonical ABI (32-bit memory, UTF-8 strings): result<string, string> goes through a 12-byte return area
 * (u8 discriminant at 0: 0 ok, 1 err; u32 pointer at 4; u32 length at 8).
 *   export invoke(ptr, len) -> retptr; export cabi_post_invoke(retptr) frees; export cabi_realloc allocates
 *   import reach:tool/host call(op_ptr, op_len, req_ptr, req_len, retptr)
 */
typedef unsigned char u8;
typedef unsigned int u32;

extern u8 __heap_base;
static u32 heap_top;

/* A bump allocator above __heap_base, reset after every invocation; traps when memory cannot grow. */
static void *bump(u32 align, u32 size) {
  if (heap_top == 0) heap_top = (u32)(unsigned long)&__heap_base;
  if (align == 0 || (align & (align - 1)) != 0) __builtin_trap();
  u32 p = (heap_top + align - 1) & ~(align - 1);
  if (p < heap_top || p + size < p) __builtin_trap();
  u32 have = (u32)__builtin_wasm_memory_size(0) * 65536u;
  if (p + size > have && __builtin_wasm_memory_grow(0, (p + size - have + 65535u) / 65536u) == (unsigned long)-1) __builtin_trap();
  heap_top = p + size;
  return (void *)(unsigned long)p;
}

__attribute__((export_name("cabi_realloc")))
void *cabi_realloc(void *old, u32 old_size, u32 align, u32 new_size) {
  if (old != 0 && new_size <= old_size) return old;
  u8 *p = bump(align, new_size);
  for (u32 i = 0; old != 0 && i < old_size; i++) p[i] = ((u8 *)old)[i];
  return p;
}

__attribute__((import_module("reach:tool/host"), import_name("call")))
void host_call(const u8 *op, u32 op_len, const u8 *req, u32 req_len, u8 *ret);

static u32 host_ret[3];
static u32 ret_area[3];

/* Append the text s to out at *n (out has room: every caller writes less than its size). */
static void append(u8 *out, u32 *n, const char *s) {
  while (*s) out[(*n)++] = (u8)*s++;
}

static void append_u32(u8 *out, u32 *n, u32 v) {
  char d[10];
  u32 k = 0;
  do { d[9 - k++] = (char)('0' + v % 10); v /= 10; } while (v);
  for (u32 i = 10 - k; i < 10; i++) out[(*n)++] = (u8)d[i];
}

static int is_space(u8 c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* The words of the string value of "text", counted as it is scanned; -1 when there is no string "text". */
static long count_words(const u8 *s, u32 len) {
  static const char key[] = "\"text\"";
  u32 i = 0;
  for (;; i++) {
    if (i + 6 > len) return -1;
    u32 j = 0;
    while (j < 6 && s[i + j] == (u8)key[j]) j++;
    if (j == 6) break;
  }
  for (i += 6; i < len && (is_space(s[i]) || s[i] == ':'); i++) {}
  if (i >= len || s[i] != '"') return -1;
  long words = 0;
  int in_word = 0;
  for (i++; i < len && s[i] != '"'; i++) {
    int space = is_space(s[i]);
    if (s[i] == '\\' && i + 1 < len) {
      i++;
      space = s[i] == 'n' || s[i] == 't' || s[i] == 'r';
    }
    if (!space && !in_word) words++;
    in_word = !space;
  }
  return words;
}

static u8 *result(u32 is_err, u8 *text, u32 len) {
  ((u8 *)ret_area)[0] = (u8)is_err;
  ret_area[1] = (u32)(unsigned long)text;
  ret_area[2] = len;
  return (u8 *)ret_area;
}

__attribute__((export_name("invoke")))
u8 *invoke(const u8 *input, u32 len) {
  long words = count_words(input, len);
  if (words < 0) {
    u8 *msg = bump(1, 64);
    u32 n = 0;
    append(msg, &n, "{\"message\":\"the input has no string text\"}");
    return result(1, msg, n);
  }
  u8 *request = bump(1, 96);
  u32 n = 0;
  append(request, &n, "{\"level\":\"info\",\"message\":\"counted ");
  append_u32(request, &n, (u32)words);
  append(request, &n, " words\"}");
  host_call((const u8 *)"log", 3, request, n, (u8 *)host_ret);
  u8 *out = bump(1, 32);
  n = 0;
  append(out, &n, "{\"words\":");
  append_u32(out, &n, (u32)words);
  append(out, &n, "}");
  return result(0, out, n);
}

__attribute__((export_name("cabi_post_invoke")))
void cabi_post_invoke(u8 *ret) {
  (void)ret;
  heap_top = 0;
}
