import type * as NodeCrypto from 'node:crypto';
import { nodeBuiltin } from '../internal/runtime/node-builtins';
import { sha256Words } from './sha256';

// Only 36-character ids reach it: its anchors are equivalent, its other mutants killed (test/mutation/EQUIVALENT.core.md).
// Stryker disable next-line Regex
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * A delivery id as four 32-bit words: a UUID is its own 128 bits, any other string the first 128
 * bits of its SHA-256. Keeping words instead of strings is what makes a remembered id cost
 * 16 bytes of payload rather than a heap string and a map entry.
 */
export function idWords(id: string, out: Uint32Array): void {
  if (id.length === 36 && UUID.test(id)) {
    // Stryker disable next-line MethodExpression: parseInt stops at the first '-', the ninth character of a UUID (test/mutation/EQUIVALENT.md)
    out[0] = parseInt(id.slice(0, 8), 16);
    out[1] = parseInt(id.slice(9, 13) + id.slice(14, 18), 16);
    out[2] = parseInt(id.slice(19, 23) + id.slice(24, 28), 16);
    out[3] = parseInt(id.slice(28, 36), 16);
    return;
  }
  hashWords(id, out);
}

/** The first 128 bits of the id's SHA-256 as four words: node:crypto's where it exists, the portable one elsewhere. */
export type HashWords = (id: string, out: Uint32Array) => void;

export function nodeHashWords(crypto: typeof NodeCrypto): HashWords {
  return (id, out) => {
    const digest = crypto.createHash('sha256').update(id).digest();
    // Stryker disable next-line EqualityOperator: a write past the end of a typed array is ignored (test/mutation/EQUIVALENT.md)
    for (let i = 0; i < 4; i++) out[i] = digest.readUInt32LE(i * 4);
  };
}

/** The same words as nodeHashWords: each is read little-endian from the digest's bytes. */
export const portableHashWords: HashWords = (id, out) => {
  out.set(sha256Words(id).subarray(0, 4).map(byteSwapped));
};

function byteSwapped(word: number): number {
  return (((word & 0xff) << 24) | ((word & 0xff00) << 8) | ((word >>> 8) & 0xff00) | (word >>> 24)) >>> 0;
}

// Picked on the first id that is not a UUID, not when the module loads (node:crypto takes about 10 ms).
let hashWords: HashWords = (id, out) => {
  // Stryker disable next-line StringLiteral: without node:crypto the portable hash gives the same words (test/mutation/EQUIVALENT.core.md)
  const crypto = nodeBuiltin('node:crypto');
  // Stryker disable next-line ConditionalExpression,EqualityOperator: both give the same words (test/mutation/EQUIVALENT.core.md)
  hashWords = crypto === undefined ? portableHashWords : nodeHashWords(crypto);
  hashWords(id, out);
};

const MIN_CAPACITY = 1024;

/**
 * An insert-only set of 128-bit keys: open addressing with linear probing over one Uint32Array,
 * grown by doubling at 3/4 load. The all-zero key marks an empty slot, so it is kept in a flag.
 *
 * A key's slot comes from a hash keyed with random multipliers drawn when the table is made: the
 * ids are chosen by whoever can sign a delivery, and with a fixed hash they could choose ids that
 * all land in one run of slots, turning each lookup into a walk over all of them.
 */
export class IdTable {
  private slots = new Uint32Array(MIN_CAPACITY * 4);
  private mask = MIN_CAPACITY - 1;
  private hasZero = false;
  private readonly seed = randomSeed();
  size = 0;

  /** Bytes held by the table's storage. */
  get bytes(): number {
    return this.slots.byteLength;
  }

  has(w: Uint32Array): boolean {
    if (isZero(w)) return this.hasZero;
    const slots = this.slots;
    for (let i = this.slotOf(w, this.mask); ; i = (i + 1) & this.mask) {
      const o = i * 4;
      if (slots[o] === w[0] && slots[o + 1] === w[1] && slots[o + 2] === w[2] && slots[o + 3] === w[3]) return true;
      if (slots[o] === 0 && slots[o + 1] === 0 && slots[o + 2] === 0 && slots[o + 3] === 0) return false;
    }
  }

  /** How many slots a lookup of `w` reads (1: its own slot). A long run is a pile-up. */
  probes(w: Uint32Array): number {
    const slots = this.slots;
    let read = 1;
    for (let i = this.slotOf(w, this.mask); ; i = (i + 1) & this.mask, read++) {
      const o = i * 4;
      if (slots[o] === w[0] && slots[o + 1] === w[1] && slots[o + 2] === w[2] && slots[o + 3] === w[3]) return read;
      if (slots[o] === 0 && slots[o + 1] === 0 && slots[o + 2] === 0 && slots[o + 3] === 0) return read;
    }
  }

  add(w: Uint32Array): void {
    if (isZero(w)) {
      if (!this.hasZero) this.size++;
      this.hasZero = true;
      return;
    }
    if ((this.size + 1) * 4 > (this.mask + 1) * 3) this.grow();
    if (this.insert(this.slots, this.mask, w)) this.size++;
  }

  private insert(slots: Uint32Array, mask: number, w: ArrayLike<number>): boolean {
    for (let i = this.slotOf(w, mask); ; i = (i + 1) & mask) {
      const o = i * 4;
      if (slots[o] === 0 && slots[o + 1] === 0 && slots[o + 2] === 0 && slots[o + 3] === 0) {
        slots[o] = w[0]!;
        slots[o + 1] = w[1]!;
        slots[o + 2] = w[2]!;
        slots[o + 3] = w[3]!;
        return true;
      }
      if (slots[o] === w[0] && slots[o + 1] === w[1] && slots[o + 2] === w[2] && slots[o + 3] === w[3]) return false;
    }
  }

  private grow(): void {
    const old = this.slots;
    const capacity = (this.mask + 1) * 2;
    const slots = new Uint32Array(capacity * 4);
    const mask = capacity - 1;
    // Stryker disable next-line EqualityOperator: one step past the end inserts zeros into an empty slot (test/mutation/EQUIVALENT.md)
    for (let o = 0; o < old.length; o += 4) {
      if (old[o] !== 0 || old[o + 1] !== 0 || old[o + 2] !== 0 || old[o + 3] !== 0) {
        this.insert(slots, mask, old.subarray(o, o + 4));
      }
    }
    this.slots = slots;
    this.mask = mask;
  }

  /**
   * Multiply-add-shift over the four words with the table's random odd multipliers: two ids not
   * chosen against the table (svc's random UUIDs) share a slot with a chance of about 2 / capacity.
   * In 32-bit arithmetic it is no universal hash: ids whose words differ by 2^31 in two words share
   * a slot under every seed. Only verified deliveries reach the table, so only the holder of the
   * secret could choose such ids. The slot is the top bits of the sum (its low bits depend on the
   * low bits of the words only).
   */
  private slotOf(w: ArrayLike<number>, mask: number): number {
    const s = this.seed;
    // Stryker disable next-line ArithmeticOperator: a subtraction is the sum with another random odd seed (test/mutation/EQUIVALENT.core.md)
    const h = Math.imul(w[0]!, s[0]!) + Math.imul(w[1]!, s[1]!) + Math.imul(w[2]!, s[2]!) + Math.imul(w[3]!, s[3]!) + s[4]!;
    return (h >>> (Math.clz32(mask + 1) + 1)) & mask;
  }
}

function isZero(w: Uint32Array): boolean {
  return w[0] === 0 && w[1] === 0 && w[2] === 0 && w[3] === 0;
}

/** Four odd multipliers and an addend, from the runtime's cryptographic random source. */
function randomSeed(): Uint32Array {
  const seed = globalThis.crypto.getRandomValues(new Uint32Array(5));
  // Stryker disable next-line EqualityOperator: an odd addend is one of the seeds drawn anyway (test/mutation/EQUIVALENT.core.md)
  for (let i = 0; i < 4; i++) seed[i]! |= 1;
  return seed;
}
