/**
 * CRC-32 (ISO-HDLC: polynomial 0xEDB88320 reflected, init and final XOR 0xFFFFFFFF), as used by the gzip trailer
 * (RFC 1952 §2.3.1). fflate checks no CRC when inflating, so the capsule reader computes it itself. Slice-by-8.
 * @module
 */

const TABLES: Uint32Array = (() => {
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    for (let s = 1; s < 8; s++) t[s * 256 + n] = (t[(s - 1) * 256 + n]! >>> 8) ^ t[t[(s - 1) * 256 + n]! & 0xff]!;
  }
  return t;
})();

/**
 * Continue a CRC-32 over more bytes.
 * @param crc the CRC so far (0 to start)
 * @param data the next bytes
 * @returns the updated CRC, an unsigned 32-bit integer
 * @example crc32Update(0, new TextEncoder().encode("123456789")) // 0xcbf43926
 */
export function crc32Update(crc: number, data: Uint8Array): number {
  const t = TABLES;
  let c = ~crc;
  let i = 0;
  const end8 = data.length - (data.length & 7);
  for (; i < end8; i += 8) {
    const a = (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24)) ^ c;
    c = t[1792 + (a & 0xff)]! ^ t[1536 + ((a >>> 8) & 0xff)]! ^ t[1280 + ((a >>> 16) & 0xff)]! ^ t[1024 + (a >>> 24)]! ^
      t[768 + data[i + 4]!]! ^ t[512 + data[i + 5]!]! ^ t[256 + data[i + 6]!]! ^ t[data[i + 7]!]!;
  }
  for (; i < data.length; i++) c = t[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}
