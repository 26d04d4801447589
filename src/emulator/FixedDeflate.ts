// A raw deflate writer (RFC 1951) with the fixed Huffman codes, for data whose repeats
// the caller already knows (the caption panel of a result image: rows equal to earlier
// rows, glyph cells equal to earlier cells, runs of one colour): the caller says
// "literal" or "copy n bytes from d back", so encoding costs one step per run, not per
// byte, and no general compressor scans the bytes. Also the Adler-32 (RFC 1950) of such
// runs in closed form, so the checksum needs no bytes either.

/** Base lengths of length codes 257..285 and their extra bits. */
const LENGTH_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
/** Base distances of distance codes 0..29 and their extra bits. */
const DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];

/** The deflate window: a copy reaches at most this far back. */
export const MAX_DISTANCE = 32_768;
const MAX_MATCH = 258;

const reverse = (code: number, bits: number): number => {
  let r = 0;
  for (let i = 0; i < bits; i++) r |= ((code >> i) & 1) << (bits - 1 - i);
  return r;
};

/** Fixed literal/length codes 0..287, bit-reversed (deflate sends Huffman codes most significant bit first). */
const LIT_CODE = new Uint16Array(288);
const LIT_BITS = new Uint8Array(288);
for (let v = 0; v < 288; v++) {
  const [code, bits] = v < 144 ? [0x30 + v, 8] : v < 256 ? [0x190 + v - 144, 9] : v < 280 ? [v - 256, 7] : [0xc0 + v - 280, 8];
  LIT_CODE[v] = reverse(code, bits);
  LIT_BITS[v] = bits;
}
/** Length 3..258 -> code index (0..28). */
const LENGTH_INDEX = new Uint8Array(MAX_MATCH + 1);
for (let i = 0; i < LENGTH_BASE.length; i++) {
  const top = i + 1 < LENGTH_BASE.length ? LENGTH_BASE[i + 1]! : MAX_MATCH + 1;
  for (let l = LENGTH_BASE[i]!; l < top && l <= MAX_MATCH; l++) LENGTH_INDEX[l] = i;
}
LENGTH_INDEX[MAX_MATCH] = 28;

/** Distance 1..32768 -> code index (0..29). */
const DIST_INDEX = new Uint8Array(MAX_DISTANCE + 1);
for (let i = 0; i < DIST_BASE.length; i++) {
  const top = i + 1 < DIST_BASE.length ? DIST_BASE[i + 1]! : MAX_DISTANCE + 1;
  for (let d = DIST_BASE[i]!; d < top; d++) DIST_INDEX[d] = i;
}
/** Distance code index -> its 5-bit code, bit-reversed. */
const DIST_CODE = Uint8Array.from({ length: 30 }, (_, i) => reverse(i, 5));

/**
 * Writes one fixed-Huffman block, not final, then an empty stored block that brings the
 * stream to a byte boundary (as zlib's Z_SYNC_FLUSH does), so more deflate data made
 * elsewhere can follow it.
 */
export class FixedDeflateWriter {
  private out: Uint8Array;
  private length = 0;
  private bitBuf = 0;
  private bitCount = 0;
  /** Bytes the data decodes to so far. */
  position = 0;

  constructor(capacity = 4096) {
    this.out = new Uint8Array(capacity);
    this.bits(0, 1); // BFINAL 0
    this.bits(1, 2); // BTYPE 01: fixed codes
  }

  private bits(value: number, count: number): void {
    this.bitBuf |= value << this.bitCount;
    this.bitCount += count;
    while (this.bitCount >= 8) {
      if (this.length === this.out.length) {
        const bigger = new Uint8Array(this.out.length * 2);
        bigger.set(this.out);
        this.out = bigger;
      }
      this.out[this.length++] = this.bitBuf & 0xff;
      this.bitBuf >>>= 8;
      this.bitCount -= 8;
    }
  }

  literal(byte: number): void {
    this.bits(LIT_CODE[byte]!, LIT_BITS[byte]!);
    this.position += 1;
  }

  /** Copies `length` (>= 3) bytes from `distance` (1..32768) bytes back; overlapping copies repeat. */
  copy(length: number, distance: number): void {
    if (!(length >= 3) || !(distance >= 1 && distance <= MAX_DISTANCE && distance <= this.position)) {
      throw new RangeError(`deflate copy of ${length} bytes from ${distance} back at ${this.position}`);
    }
    const di = DIST_INDEX[distance]!;
    for (let left = length; left > 0; ) {
      // Pieces of at most 258 bytes, none shorter than 3.
      const l = left > MAX_MATCH ? (left - MAX_MATCH < 3 ? left - 3 : MAX_MATCH) : left;
      const li = LENGTH_INDEX[l]!;
      this.bits(LIT_CODE[257 + li]!, LIT_BITS[257 + li]!);
      if (LENGTH_EXTRA[li]! > 0) this.bits(l - LENGTH_BASE[li]!, LENGTH_EXTRA[li]!);
      this.bits(DIST_CODE[di]!, 5);
      if (DIST_EXTRA[di]! > 0) this.bits(distance - DIST_BASE[di]!, DIST_EXTRA[di]!);
      left -= l;
    }
    this.position += length;
  }

  /** Ends the block and aligns to a byte (an empty stored block); the writer is done. */
  finish(): Uint8Array {
    this.bits(LIT_CODE[256]!, LIT_BITS[256]!); // end of block
    this.bits(0, 3); // BFINAL 0, BTYPE 00: stored
    if (this.bitCount > 0) this.bits(0, 8 - this.bitCount);
    this.bits(0x0000, 16); // LEN 0
    this.bits(0xffff, 16); // NLEN
    return this.out.subarray(0, this.length);
  }
}

// ---------------------------------------------------------------- Adler-32 in closed form

const BASE = 65521;

/** Running Adler-32 sums: a = 1 + the bytes, b = the sum of the a's after each byte (mod 65521). */
export interface Adler {
  a: number;
  b: number;
}

export const adlerStart = (): Adler => ({ a: 1, b: 0 });

export const adlerValue = (s: Adler): number => (s.b * 65536 + s.a) >>> 0;

/** Appends `n` (< 2^16) pixels of the colour (p0, p1, p2), bytes in that order. */
export const adlerPixels = (s: Adler, p0: number, p1: number, p2: number, n: number): void => {
  const sum = p0 + p1 + p2;
  // Byte i of L = 3n counts (L - i + 1) times in b: sum x (1.5 n (n + 1)) - n (p1 + 2 p2).
  const weighted = sum * ((3 * n * (n + 1)) / 2) - n * (p1 + 2 * p2);
  s.b = (s.b + ((3 * n) % BASE) * s.a + (weighted % BASE)) % BASE;
  s.a = (s.a + ((n * sum) % BASE)) % BASE;
};

/** Appends one byte. */
export const adlerByte = (s: Adler, v: number): void => {
  s.a = (s.a + v) % BASE;
  s.b = (s.b + s.a) % BASE;
};

/** Appends a block of `length` bytes whose own Adler-32 sums (from the start) are `block`. */
export const adlerBlock = (s: Adler, block: Adler, length: number): void => {
  const a = s.a;
  s.a = (a + block.a - 1 + BASE) % BASE;
  s.b = (s.b + (length % BASE) * a + block.b - (length % BASE) + BASE) % BASE;
};

/** The Adler-32 of `bytes` (RFC 1950), summed in runs short enough that no sum passes 2^53 before its modulo. */
export const adler32 = (bytes: Uint8Array): number => {
  let a = 1;
  let b = 0;
  for (let i = 0; i < bytes.length; ) {
    const end = Math.min(bytes.length, i + 5552);
    for (; i < end; i++) {
      a += bytes[i]!;
      b += a;
    }
    a %= BASE;
    b %= BASE;
  }
  return (b * 65536 + a) >>> 0;
};

/** The Adler-32 of A followed by B, from A's, B's and B's length (zlib's adler32_combine). */
export const adler32Combine = (adlerA: number, adlerB: number, lengthB: number): number => {
  const s = { a: adlerA & 0xffff, b: adlerA >>> 16 };
  adlerBlock(s, { a: adlerB & 0xffff, b: adlerB >>> 16 }, lengthB);
  return adlerValue(s);
};
