/* c-wordcount: a WebAssembly component of the world reach:tool/tool (wasm-tools/component/wit/tool.wit) written in
 * C without libc, its canonical ABI lowered by hand (src/sandbox/component/README.md, "The C example").
 *
 *   invoke('{"text": "..."}') -> ok('{"words":W,"lines":L,"chars":C,"bytes":B,"at":"<iso>"}')
 *
 * words: runs of non-whitespace (space, \t, \n, \v, \f, \r); lines: "\n" count (like wc -l); chars: Unicode code
 * points; bytes: UTF-8 bytes of the text (a lone surrogate counts as U+FFFD, 3 bytes, as TextEncoder encodes it);
 * at: the host's virtual clock (one reach:tool/host call, "clock.now", recorded on the tape). Input that is not a
 * JSON object with a string "text" gives err('{"message":"..."}'). Everything is deterministic.
 *
 * Canonical ABI (component model, 32-bit memory, UTF-8 strings):
 *   export invoke(ptr, len) -> retptr        result<string,string> in a 12-byte return area:
 *                                            u8 discriminant at 0 (0 ok, 1 err), u32 ptr at 4, u32 len at 8
 *   export cabi_post_invoke(retptr)          after the host copied the result out: frees everything
 *   export cabi_realloc(old, old_size, align, new_size) -> ptr
 *   import reach:tool/host call(op_ptr, op_len, req_ptr, req_len, retptr)   the same return area layout
 * Memory is a bump allocator above __heap_base, reset by cabi_post_invoke; it grows memory when needed and traps
 * (unreachable) when it cannot.
 */
typedef unsigned char u8;
typedef unsigned int u32;

extern u8 __heap_base;

static u32 heap_top;

static u32 heap_start(void) { return (u32)(unsigned long)&__heap_base; }

static void *bump(u32 align, u32 size) {
  if (heap_top == 0) heap_top = heap_start();
  if (align == 0 || (align & (align - 1)) != 0) __builtin_trap();
  u32 p = (heap_top + align - 1) & ~(align - 1);
  if (p < heap_top || p + size < p) __builtin_trap();
  u32 end = p + size;
  u32 have = (u32)__builtin_wasm_memory_size(0) * 65536u;
  if (end > have) {
    u32 pages = (end - have + 65535u) / 65536u;
    if (__builtin_wasm_memory_grow(0, pages) == (unsigned long)-1) __builtin_trap();
  }
  heap_top = end;
  return (void *)(unsigned long)p;
}

static void copy(u8 *dst, const u8 *src, u32 n) {
  for (u32 i = 0; i < n; i++) dst[i] = src[i];
}

__attribute__((export_name("cabi_realloc")))
void *cabi_realloc(void *old, u32 old_size, u32 align, u32 new_size) {
  if (old != 0 && new_size <= old_size) return old;
  u8 *p = bump(align, new_size);
  if (old != 0) copy(p, old, old_size);
  return p;
}

__attribute__((import_module("reach:tool/host"), import_name("call")))
void host_call(const u8 *op, u32 op_len, const u8 *req, u32 req_len, u8 *ret);

/* ---- output ---- */

typedef struct { u8 *p; u32 len, cap; } buf;

static void put(buf *b, const char *s, u32 n) {
  if (b->len + n > b->cap) __builtin_trap();
  copy(b->p + b->len, (const u8 *)s, n);
  b->len += n;
}

static void puts_(buf *b, const char *s) {
  u32 n = 0;
  while (s[n]) n++;
  put(b, s, n);
}

static void putu(buf *b, u32 v) {
  char d[10];
  u32 n = 0;
  do { d[9 - n++] = (char)('0' + v % 10); v /= 10; } while (v);
  put(b, d + 10 - n, n);
}

static u32 ret_area[3];

static u8 *result(u32 is_err, buf *b) {
  u8 *r = (u8 *)ret_area;
  r[0] = (u8)is_err;
  ret_area[1] = (u32)(unsigned long)b->p;
  ret_area[2] = b->len;
  return r;
}

static u8 *fail(const char *message) {
  buf b = { bump(1, 256), 0, 256 };
  puts_(&b, "{\"message\":\"");
  puts_(&b, message);
  puts_(&b, "\"}");
  return result(1, &b);
}

/* ---- a small JSON scanner over the input (valid UTF-8; bounds-checked, no recursion) ---- */

typedef struct { const u8 *s; u32 pos, len; } scan;

static u32 peek(scan *j) { return j->pos < j->len ? j->s[j->pos] : 0x100; }

static void ws(scan *j) {
  for (u32 c = peek(j); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = peek(j)) j->pos++;
}

/* Skips a string at j->pos (its opening quote); 0 when unterminated. */
static int skip_string(scan *j) {
  j->pos++;
  while (j->pos < j->len) {
    u8 c = j->s[j->pos++];
    if (c == '"') return 1;
    if (c == '\\') j->pos++;
  }
  return 0;
}

/* Skips one value: strings, containers by bracket depth, primitives up to the next delimiter. */
static int skip_value(scan *j) {
  u32 c = peek(j);
  if (c == '"') return skip_string(j);
  if (c == '{' || c == '[') {
    u32 depth = 0;
    while (j->pos < j->len) {
      c = j->s[j->pos];
      if (c == '"') { if (!skip_string(j)) return 0; continue; }
      j->pos++;
      if (c == '{' || c == '[') depth++;
      else if ((c == '}' || c == ']') && --depth == 0) return 1;
    }
    return 0;
  }
  u32 start = j->pos;
  for (c = peek(j); c != 0x100 && c != ',' && c != '}' && c != ']' && c != ' ' && c != '\t' && c != '\n' && c != '\r';
       c = peek(j))
    j->pos++;
  return j->pos > start;
}

static int hex4(const u8 *s, u32 *out) {
  u32 v = 0;
  for (int i = 0; i < 4; i++) {
    u32 c = s[i], d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return 0;
    v = v * 16 + d;
  }
  *out = v;
  return 1;
}

typedef struct { u32 words, lines, chars, bytes, in_word; } counts;

static void count_cp(counts *k, u32 cp, u32 utf8_bytes) {
  k->chars++;
  k->bytes += utf8_bytes;
  if (cp == '\n') k->lines++;
  if (cp == ' ' || (cp >= '\t' && cp <= '\r')) k->in_word = 0;
  else if (!k->in_word) { k->in_word = 1; k->words++; }
}

static u32 utf8_len(u32 cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

/* Counts the raw contents s[0..n) of a JSON string (escapes decoded); 0 on a malformed escape. */
static int count_text(const u8 *s, u32 n, counts *k) {
  for (u32 i = 0; i < n;) {
    u8 c = s[i];
    if (c != '\\') {
      i++;
      if ((c & 0xc0) == 0x80) k->bytes++; /* continuation byte: the same code point */
      else count_cp(k, c < 0x80 ? c : 0x80, 1); /* a lead byte >= 0x80 starts a non-space code point */
      continue;
    }
    if (i + 1 >= n) return 0;
    u8 e = s[i + 1];
    i += 2;
    u32 cp;
    switch (e) {
      case 'n': cp = '\n'; break;
      case 't': cp = '\t'; break;
      case 'r': cp = '\r'; break;
      case 'b': cp = 8; break;
      case 'f': cp = 12; break;
      case '"': case '\\': case '/': cp = e; break;
      case 'u':
        if (i + 4 > n || !hex4(s + i, &cp)) return 0;
        i += 4;
        if (cp >= 0xd800 && cp <= 0xdbff && i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u') {
          u32 lo;
          if (hex4(s + i + 2, &lo) && lo >= 0xdc00 && lo <= 0xdfff) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            i += 6;
          }
        }
        if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd; /* lone surrogate */
        break;
      default: return 0;
    }
    count_cp(k, cp, utf8_len(cp));
  }
  return 1;
}

/* Copies the string value of "key" from the JSON object text s[0..n) into b; 0 when absent or too long. */
static int copy_field(const u8 *s, u32 n, const char *key, buf *b) {
  u32 kl = 0;
  while (key[kl]) kl++;
  for (u32 i = 0; i + kl + 3 < n; i++) {
    if (s[i] != '"') continue;
    u32 k = 0;
    while (k < kl && s[i + 1 + k] == (u8)key[k]) k++;
    if (k < kl || s[i + 1 + kl] != '"' || s[i + 2 + kl] != ':' || s[i + 3 + kl] != '"') continue;
    u32 start = i + 4 + kl, end = start;
    while (end < n && s[end] != '"' && s[end] != '\\') end++;
    if (end >= n || s[end] != '"' || end - start > 64) return 0;
    put(b, (const char *)s + start, end - start);
    return 1;
  }
  return 0;
}

__attribute__((export_name("invoke")))
u8 *invoke(const u8 *input, u32 input_len) {
  scan j = { input, 0, input_len };
  ws(&j);
  if (peek(&j) != '{') return fail("input must be a JSON object {\\\"text\\\": string}");
  j.pos++;
  ws(&j);
  u32 text_start = 0, text_end = 0;
  int found = 0;
  if (peek(&j) == '}') j.pos++;
  else {
    for (;;) {
      if (peek(&j) != '"') return fail("malformed input object");
      u32 key = j.pos + 1;
      if (!skip_string(&j)) return fail("malformed input object");
      int is_text = j.pos - 1 - key == 4 && input[key] == 't' && input[key + 1] == 'e' && input[key + 2] == 'x' &&
                    input[key + 3] == 't';
      ws(&j);
      if (peek(&j) != ':') return fail("malformed input object");
      j.pos++;
      ws(&j);
      if (is_text) {
        if (peek(&j) != '"') return fail("\\\"text\\\" must be a string");
        text_start = j.pos + 1;
        if (!skip_string(&j)) return fail("malformed input object");
        text_end = j.pos - 1;
        found = 1;
      } else if (!skip_value(&j)) {
        return fail("malformed input object");
      }
      ws(&j);
      if (peek(&j) == ',') { j.pos++; ws(&j); continue; }
      if (peek(&j) == '}') { j.pos++; break; }
      return fail("malformed input object");
    }
  }
  ws(&j);
  if (j.pos != j.len) return fail("trailing data after the input object");
  if (!found) return fail("input must have a string \\\"text\\\"");
  counts k = { 0, 0, 0, 0, 0 };
  if (!count_text(input + text_start, text_end - text_start, &k)) return fail("malformed escape in \\\"text\\\"");

  /* One host call: the virtual clock (recorded on the tape). */
  static const char op[] = "clock.now", req[] = "{}";
  u32 hr[3];
  host_call((const u8 *)op, sizeof op - 1, (const u8 *)req, sizeof req - 1, (u8 *)hr);
  if ((hr[0] & 0xff) != 0) return fail("clock.now failed");

  buf b = { bump(1, 256), 0, 256 };
  puts_(&b, "{\"words\":");
  putu(&b, k.words);
  puts_(&b, ",\"lines\":");
  putu(&b, k.lines);
  puts_(&b, ",\"chars\":");
  putu(&b, k.chars);
  puts_(&b, ",\"bytes\":");
  putu(&b, k.bytes);
  puts_(&b, ",\"at\":\"");
  if (!copy_field((const u8 *)(unsigned long)hr[1], hr[2], "iso", &b)) return fail("clock.now gave no iso time");
  puts_(&b, "\"}");
  return result(0, &b);
}

__attribute__((export_name("cabi_post_invoke")))
void cabi_post_invoke(u8 *ret) {
  (void)ret;
  heap_top = heap_start();
}
