// The capsule's gzip writer (src/capsule/_deflate.ts), compiled to WebAssembly by build.sh: the same bytes as fflate
// 0.8's `gzipSync` (deflate `dflt`, `wblk`, `hTree`, `lc`, `hMap`; gzip header and CRC-32), written out again in C.
// Why: the capsule format pins those bytes (ARCHITECTURE "Capsule"), and fflate's JavaScript, run once per CLI
// process, is interpreted and then optimized on a second thread: ~20-25 ms of CPU for a 38 KB capsule, the largest
// single cost of a short `reach-wasm run`. Compiled code runs it in well under a millisecond.
// Identity with fflate is tested on every level and many inputs (src/capsule/deflate.test.ts). The one intended
// difference: bit positions here are 64-bit, where fflate's `(p / 8) | 0` wraps past 256 MiB of output.
// No libc: clang --target=wasm32-unknown-unknown -nostdlib (build.sh). Exports: alloc, gzip, result.

typedef unsigned char u8;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef unsigned long long u64;

extern unsigned char __heap_base;

// ---- memory: one bump allocator per instance (the glue makes a fresh instance for every archive) ----

static u32 heap_top = 0;

// Zeroes [start, end): a buffer handed out again after reset() holds the last archive's bytes.
static void zero(u32 start, u64 end) {
  u64 *w = (u64 *)start;
  for (u64 k = 0, n = (end - start + 7) / 8; k < n; ++k) w[k] = 0;
}

// A zeroed buffer of n bytes, 8-aligned, or 0 when memory cannot grow. Buffers are never freed one by one: reset()
// starts over (the glue calls it before every archive, and drops the instance once its memory has grown large).
static void *alloc_bytes(u32 n) {
  if (heap_top == 0) heap_top = (u32)&__heap_base;
  u32 start = (heap_top + 7u) & ~7u;
  u64 end = (u64)start + n;
  u64 have = (u64)__builtin_wasm_memory_size(0) * 65536u;
  if (end > have) {
    u64 pages = (end - have + 65535u) / 65536u;
    if (__builtin_wasm_memory_grow(0, (unsigned long)pages) == (unsigned long)-1) return 0;
  }
  zero(start, end < have ? end : have); // pages just grown are zero already
  heap_top = (u32)end;
  return (void *)start;
}

__attribute__((export_name("alloc"))) u8 *alloc(u32 n) { return (u8 *)alloc_bytes(n); }

__attribute__((export_name("reset"))) void reset(void) { heap_top = 0; }

// ---- tables (fflate's, built the same way) ----

static const u8 fleb[32] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0, 0, 0, 0};
static const u8 fdeb[32] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 0, 0};
static const u8 clim[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
static const i32 deo[9] = {65540, 131080, 131088, 131104, 262176, 1048704, 1048832, 2114560, 2117632};

static u16 fl[31], fd[31];
static i32 revfl[261], revfd[32769];
static u16 rev[32768];
static u8 flt[288], fdt[32];
static u16 flm[288], fdm[32];
static i32 crct[256];
static i32 tables_ready = 0;

// fflate `freb`: base values and the reverse index map from extra bits (b[i] = start += 1 << eb[i - 1]; eb[-1] is
// undefined there, a shift by 0).
static void freb(const u8 *eb, i32 start, u16 *b, i32 *r, u32 rlen) {
  for (i32 i = 0; i < 31; ++i) b[i] = (u16)(start += 1 << (i == 0 ? 0 : eb[i - 1]));
  for (i32 i = 1; i < 30; ++i)
    for (i32 j = b[i]; j < b[i + 1]; ++j)
      if ((u32)j < rlen) r[j] = ((j - b[i]) << 5) | i;
}

// fflate `hMap` with r = 0: the code of each symbol from its code length, bits reversed.
__attribute__((noinline)) static void hmap(const u8 *cd, u32 s, i32 mb, u16 *co) {
  u16 l[16] = {0}, le[16] = {0};
  for (u32 i = 0; i < s; ++i)
    if (cd[i]) ++l[cd[i] - 1];
  for (i32 i = 1; i < mb; ++i) le[i] = (u16)((le[i - 1] + l[i - 1]) << 1);
  for (u32 i = 0; i < s; ++i) {
    co[i] = 0;
    if (cd[i]) {
      u32 k = le[cd[i] - 1]++;
      co[i] = (u16)((k < 32768 ? rev[k] : 0) >> (15 - cd[i]));
    }
  }
}

__attribute__((noinline)) static void init_tables(void) {
  if (tables_ready) return;
  freb(fleb, 2, fl, revfl, 261);
  fl[28] = 258, revfl[258] = 28;
  freb(fdeb, 0, fd, revfd, 32769);
  for (i32 i = 0; i < 32768; ++i) {
    i32 x = ((i & 0xAAAA) >> 1) | ((i & 0x5555) << 1);
    x = ((x & 0xCCCC) >> 2) | ((x & 0x3333) << 2);
    x = ((x & 0xF0F0) >> 4) | ((x & 0x0F0F) << 4);
    rev[i] = (u16)((((x & 0xFF00) >> 8) | ((x & 0x00FF) << 8)) >> 1);
  }
  for (i32 i = 0; i < 144; ++i) flt[i] = 8;
  for (i32 i = 144; i < 256; ++i) flt[i] = 9;
  for (i32 i = 256; i < 280; ++i) flt[i] = 7;
  for (i32 i = 280; i < 288; ++i) flt[i] = 8;
  for (i32 i = 0; i < 32; ++i) fdt[i] = 5;
  hmap(flt, 288, 9, flm);
  hmap(fdt, 32, 5, fdm);
  for (i32 i = 0; i < 256; ++i) {
    i32 c = i, k = 9;
    while (--k) c = ((c & 1) ? -306674912 : 0) ^ (i32)((u32)c >> 1);
    crct[i] = c;
  }
  tables_ready = 1;
}

// ---- bit writer (fflate `wbits`, `wbits16`); bit positions are 64-bit ----

static void wbits(u8 *d, u64 p, u32 v) {
  v <<= p & 7;
  u64 o = p >> 3;
  d[o] |= (u8)v;
  d[o + 1] |= (u8)(v >> 8);
}

static void wbits16(u8 *d, u64 p, u32 v) {
  v <<= p & 7;
  u64 o = p >> 3;
  d[o] |= (u8)v;
  d[o + 1] |= (u8)(v >> 8);
  d[o + 2] |= (u8)(v >> 16);
}

static u64 shft(u64 p) { return (p + 7) >> 3; }

// ---- Huffman code lengths (fflate `hTree`, `ln`) ----

typedef struct { i32 s, f, l, r; } Node;
typedef struct { i32 s, f; } Leaf;

static Node pool[2 * 288 + 4];
static i32 tix[290];
static Leaf leaves[288], t2[288];
static u16 trl[288];

static i32 ln(i32 n, u16 *l, i32 d) {
  if (pool[n].s == -1) {
    i32 a = ln(pool[n].l, l, d + 1), b = ln(pool[n].r, l, d + 1);
    return a > b ? a : b;
  }
  l[pool[n].s] = (u16)d;
  return d;
}

// Stable insertion sorts: JavaScript's Array.prototype.sort is stable, and ties decide code lengths.
static void sort_by_f(Leaf *a, i32 n) {
  for (i32 i = 1; i < n; ++i) {
    Leaf x = a[i];
    i32 j = i - 1;
    while (j >= 0 && a[j].f > x.f) a[j + 1] = a[j], --j;
    a[j + 1] = x;
  }
}

static i32 by_len_then_f(Leaf a, Leaf b) { // a before b (strictly) for fflate's t2 comparator
  i32 c = (i32)trl[b.s] - (i32)trl[a.s];
  if (c == 0) c = a.f - b.f;
  return c;
}

static void sort_t2(Leaf *a, i32 n) {
  for (i32 i = 1; i < n; ++i) {
    Leaf x = a[i];
    i32 j = i - 1;
    while (j >= 0 && by_len_then_f(a[j], x) > 0) a[j + 1] = a[j], --j;
    a[j + 1] = x;
  }
}

// Code lengths for the frequencies d[0..n) with at most mb bits: written to out (length *olen), returns the max bits.
__attribute__((noinline)) static i32 htree(const u16 *d, i32 n, i32 mb, u8 *out, i32 *olen) {
  i32 s = 0;
  for (i32 i = 0; i < n; ++i)
    if (d[i]) leaves[s].s = i, leaves[s].f = d[i], t2[s] = leaves[s], ++s;
  if (!s) return *olen = 0, 0;
  if (s == 1) {
    i32 len = leaves[0].s + 1;
    for (i32 i = 0; i < len; ++i) out[i] = 0;
    out[leaves[0].s] = 1;
    return *olen = len, 1;
  }
  sort_by_f(leaves, s);
  i32 np = 0;
  for (i32 i = 0; i < s; ++i) pool[np] = (Node){leaves[i].s, leaves[i].f, 0, 0}, tix[i] = np++;
  pool[np] = (Node){-1, 25001, 0, 0}, tix[s] = np++;
  i32 l = tix[0], r = tix[1], i0 = 0, i1 = 1, i2 = 2;
  pool[np] = (Node){-1, pool[l].f + pool[r].f, l, r}, tix[0] = np++;
  while (i1 != s - 1) {
    l = tix[pool[tix[i0]].f < pool[tix[i2]].f ? i0++ : i2++];
    r = tix[i0 != i1 && pool[tix[i0]].f < pool[tix[i2]].f ? i0++ : i2++];
    pool[np] = (Node){-1, pool[l].f + pool[r].f, l, r}, tix[i1++] = np++;
  }
  i32 maxSym = t2[0].s;
  for (i32 i = 1; i < s; ++i)
    if (t2[i].s > maxSym) maxSym = t2[i].s;
  for (i32 i = 0; i <= maxSym; ++i) trl[i] = 0;
  i32 mbt = ln(tix[i1 - 1], trl, 0);
  if (mbt > mb) {
    i32 i = 0, dt = 0;
    i32 lft = mbt - mb, cst = 1 << lft;
    sort_t2(t2, s);
    for (; i < s; ++i) {
      i32 k = t2[i].s;
      if (trl[k] > mb) {
        dt += cst - (1 << (mbt - trl[k]));
        trl[k] = (u16)mb;
      } else break;
    }
    dt >>= lft;
    while (dt > 0) {
      i32 k = t2[i].s;
      if (trl[k] < mb) dt -= 1 << (mb - trl[k]++ - 1);
      else ++i;
    }
    for (; i >= 0 && dt; --i) {
      i32 k = t2[i].s;
      if (trl[k] == mb) {
        --trl[k];
        ++dt;
      }
    }
    mbt = mb;
  }
  for (i32 i = 0; i <= maxSym; ++i) out[i] = (u8)trl[i];
  *olen = maxSym + 1;
  return mbt;
}

// Run-length code lengths (fflate `lc`): writes cl, returns its length; *n = the number of lengths coded.
__attribute__((noinline)) static i32 lcodes(const u8 *c, i32 len, u16 *cl, i32 *n) {
  i32 s = len;
  while (s && !c[--s]) {
  }
  ++s;
  i32 cli = 0, cln = len > 0 ? c[0] : 0, cls = 1;
  for (i32 i = 1; i <= s; ++i) {
    if (i != s && c[i] == cln) ++cls;
    else {
      if (!cln && cls > 2) {
        for (; cls > 138; cls -= 138) cl[cli++] = 32754;
        if (cls > 2) {
          cl[cli++] = (u16)(cls > 10 ? ((cls - 11) << 5) | 28690 : ((cls - 3) << 5) | 12305);
          cls = 0;
        }
      } else if (cls > 3) {
        cl[cli++] = (u16)cln, --cls;
        for (; cls > 6; cls -= 6) cl[cli++] = 8304;
        if (cls > 2) cl[cli++] = (u16)(((cls - 3) << 5) | 8208), cls = 0;
      }
      while (cls--) cl[cli++] = (u16)cln;
      cls = 1;
      cln = i < len ? c[i] : 0;
    }
  }
  *n = s;
  return cli;
}

static i32 clen(const u16 *cf, const u8 *cl, i32 n) {
  i32 l = 0;
  for (i32 i = 0; i < n; ++i) l += cf[i] * cl[i];
  return l;
}

static u8 at(const u8 *a, i32 len, i32 i) { return i < len ? a[i] : 0; }

// Stored block (fflate `wfblk`).
static u64 wfblk(u8 *out, u64 pos, const u8 *dat, u32 s) {
  u64 o = shft(pos + 2);
  out[o] = (u8)s;
  out[o + 1] = (u8)(s >> 8);
  out[o + 2] = out[o] ^ 255;
  out[o + 3] = out[o + 1] ^ 255;
  for (u32 i = 0; i < s; ++i) out[o + i + 4] = dat[i];
  return (o + 4 + s) * 8;
}

static u8 dlt[288], ddt[32], lct[19];
static u16 lclt[290], lcdt[34], dlm[288], ddm[32], llm[19], lcfreq[19];

// One block (fflate `wblk`): stored, fixed or dynamic, whichever is shortest.
__attribute__((noinline)) static u64 wblk(const u8 *dat, u8 *out, i32 final, const i32 *syms, u16 *lf, u16 *df, i32 eb, i32 li, u32 bs, u32 bl, u64 p) {
  wbits(out, p++, (u32)final);
  ++lf[256];
  i32 ndlt, nddt, nlct;
  i32 mlb = htree(lf, 288, 15, dlt, &ndlt);
  i32 mdb = htree(df, 32, 15, ddt, &nddt);
  i32 nlc, ndc;
  i32 nlclt = lcodes(dlt, ndlt, lclt, &nlc);
  i32 nlcdt = lcodes(ddt, nddt, lcdt, &ndc);
  for (i32 i = 0; i < 19; ++i) lcfreq[i] = 0;
  for (i32 i = 0; i < nlclt; ++i) ++lcfreq[lclt[i] & 31];
  for (i32 i = 0; i < nlcdt; ++i) ++lcfreq[lcdt[i] & 31];
  i32 mlcb = htree(lcfreq, 19, 7, lct, &nlct);
  i32 nlcc = 19;
  for (; nlcc > 4 && !at(lct, nlct, clim[nlcc - 1]); --nlcc) {
  }
  i32 flen = (i32)((bl + 5) << 3);
  i32 ftlen = clen(lf, flt, 288) + clen(df, fdt, 32) + eb;
  i32 dtlen = clen(lf, dlt, ndlt) + clen(df, ddt, nddt) + eb + 14 + 3 * nlcc + clen(lcfreq, lct, nlct) + 2 * lcfreq[16] + 3 * lcfreq[17] + 7 * lcfreq[18];
  if (flen <= ftlen && flen <= dtlen) return wfblk(out, p, dat + bs, bl);
  const u16 *lm;
  const u8 *ll;
  const u16 *dm;
  const u8 *dl;
  wbits(out, p, 1 + (dtlen < ftlen)), p += 2;
  if (dtlen < ftlen) {
    hmap(dlt, (u32)ndlt, mlb, dlm), hmap(ddt, (u32)nddt, mdb, ddm), hmap(lct, (u32)nlct, mlcb, llm);
    lm = dlm, ll = dlt, dm = ddm, dl = ddt;
    wbits(out, p, (u32)(nlc - 257));
    wbits(out, p + 5, (u32)(ndc - 1));
    wbits(out, p + 10, (u32)(nlcc - 4));
    p += 14;
    for (i32 i = 0; i < nlcc; ++i) wbits(out, p + 3 * (u64)i, at(lct, nlct, clim[i]));
    p += 3 * (u64)nlcc;
    for (i32 it = 0; it < 2; ++it) {
      const u16 *clct = it == 0 ? lclt : lcdt;
      i32 n = it == 0 ? nlclt : nlcdt;
      for (i32 i = 0; i < n; ++i) {
        i32 len = clct[i] & 31;
        wbits(out, p, llm[len]), p += lct[len];
        if (len > 15) wbits(out, p, (u32)((clct[i] >> 5) & 127)), p += clct[i] >> 12;
      }
    }
  } else {
    lm = flm, ll = flt, dm = fdm, dl = fdt;
  }
  for (i32 i = 0; i < li; ++i) {
    i32 sym = syms[i];
    if (sym > 255) {
      i32 len = (sym >> 18) & 31;
      wbits16(out, p, lm[len + 257]), p += ll[len + 257];
      if (len > 7) wbits(out, p, (u32)((sym >> 23) & 31)), p += fleb[len];
      i32 dst = sym & 31;
      wbits16(out, p, dm[dst]), p += dl[dst];
      if (dst > 3) wbits16(out, p, (u32)((sym >> 5) & 8191)), p += fdeb[dst];
    } else {
      wbits16(out, p, lm[sym]), p += ll[sym];
    }
  }
  wbits16(out, p, lm[256]);
  return p + ll[256];
}

static i32 min32(i32 a, i32 b) { return a < b ? a : b; }

// Raw DEFLATE of dat[0..s) at level lvl (1-9) with a 2^plvl-entry hash table (fflate `dflt`, one-shot: the last block
// is final), written from w[0]; returns the end in bits.
__attribute__((noinline)) static u64 dflt(const u8 *dat, u32 s, i32 lvl, i32 plvl, u8 *w, u16 *prev, u16 *head, i32 *syms) {
  u64 pos = 0;
  i32 opt = deo[lvl - 1];
  i32 n = opt >> 13, c = opt & 8191;
  i32 msk = (1 << plvl) - 1;
  i32 bs1 = (plvl + 2) / 3, bs2 = 2 * bs1;
#define HSH(k) ((dat[k] ^ (dat[(k) + 1] << bs1) ^ (dat[(k) + 2] << bs2)) & msk)
  static u16 lf[288], df[32];
  for (i32 j = 0; j < 288; ++j) lf[j] = 0;
  for (i32 j = 0; j < 32; ++j) df[j] = 0;
  i32 lc1 = 0, eb = 0, li = 0;
  u32 i = 0, wi = 0, bs = 0;
  for (; (u64)i + 2 < s; ++i) {
    i32 hv = HSH(i);
    i32 imod = (i32)(i & 32767), pimod = head[hv];
    prev[imod] = (u16)pimod;
    head[hv] = (u16)imod;
    if (wi <= i) {
      u32 rem = s - i;
      if ((lc1 > 7000 || li > 24576) && rem > 423) {
        pos = wblk(dat, w, 0, syms, lf, df, eb, li, bs, i - bs, pos);
        li = lc1 = eb = 0, bs = i;
        for (i32 j = 0; j < 286; ++j) lf[j] = 0;
        for (i32 j = 0; j < 30; ++j) df[j] = 0;
      }
      i32 l = 2, d = 0, ch = c, dif = (imod - pimod) & 32767;
      if (rem > 2 && hv == HSH(i - dif)) {
        i32 maxn = min32(n, rem > 0x7fffffff ? 0x7fffffff : (i32)rem) - 1;
        i32 maxd = i < 32767 ? (i32)i : 32767;
        i32 ml = rem < 258 ? (i32)rem : 258;
        while (dif <= maxd && --ch && imod != pimod) {
          if ((u64)i + l < s && dat[i + l] == dat[i + l - dif]) {
            i32 nl = 0;
            for (; nl < ml && dat[i + nl] == dat[i + nl - dif]; ++nl) {
            }
            if (nl > l) {
              l = nl, d = dif;
              if (nl > maxn) break;
              i32 mmd = min32(dif, nl - 2);
              i32 md = 0;
              for (i32 j = 0; j < mmd; ++j) {
                i32 ti = (i32)((i - dif + j) & 32767);
                i32 pti = prev[ti];
                i32 cd = (ti - pti) & 32767;
                if (cd > md) md = cd, pimod = ti;
              }
            }
          }
          imod = pimod, pimod = prev[imod];
          dif += (imod - pimod) & 32767;
        }
      }
      if (d) {
        syms[li++] = 268435456 | (revfl[l] << 18) | revfd[d];
        i32 lin = revfl[l] & 31, din = revfd[d] & 31;
        eb += fleb[lin] + fdeb[din];
        ++lf[257 + lin];
        ++df[din];
        wi = i + (u32)l;
        ++lc1;
      } else {
        syms[li++] = dat[i];
        ++lf[dat[i]];
      }
    }
  }
  for (i = i > wi ? i : wi; i < s; ++i) {
    syms[li++] = dat[i];
    ++lf[dat[i]];
  }
  return wblk(dat, w, 1, syms, lf, df, eb, li, bs, i - bs, pos);
#undef HSH
}

__attribute__((noinline)) static u32 crc32(const u8 *dat, u32 s) {
  i32 cr = -1;
  for (u32 k = 0; k < s; ++k) cr = crct[(cr & 255) ^ dat[k]] ^ (i32)((u32)cr >> 8);
  return (u32)~cr;
}

static u8 *result_ptr = 0;

__attribute__((export_name("result"))) u8 *result(void) { return result_ptr; }

// gzip of dat[0..s) (fflate `gzipSync` with { level, mem, mtime: 0 }): the bytes are at result(); returns their
// length, or 0 when memory ran out.
__attribute__((export_name("gzip"))) u32 gzip(const u8 *dat, u32 s, i32 lvl, i32 mem) {
  if (lvl < 1 || lvl > 9 || mem < 0 || mem > 12) return 0;
  init_tables();
  i32 plvl = 12 + mem;
  u64 cap = 10 + (u64)s + 5 * (1 + ((u64)s + 6999) / 7000) + 8 + 8; // fflate's bound, +8 spare for wbits16 past the end
  if (cap > 0xffff0000u) return 0;
  u8 *o = alloc_bytes((u32)cap);
  u16 *prev = alloc_bytes(32768 * 2);
  u16 *head = alloc_bytes(((u32)1 << plvl) * 2);
  i32 *syms = alloc_bytes(25000 * 4);
  if (!o || !prev || !head || !syms) return 0;
  u64 end = dflt(dat, s, lvl, plvl, o + 10, prev, head, syms);
  u64 len = 10 + shft(end) + 8;
  o[0] = 31, o[1] = 139, o[2] = 8, o[8] = (u8)(lvl < 2 ? 4 : lvl == 9 ? 2 : 0), o[9] = 3;
  u32 crc = crc32(dat, s);
  u8 *t = o + len - 8;
  for (i32 k = 0; k < 4; ++k) t[k] = (u8)(crc >> (8 * k)), t[4 + k] = (u8)(s >> (8 * k));
  result_ptr = o;
  return (u32)len;
}
