import type * as NodeBuffer from 'node:buffer';
import { SvcWebhookError } from '../errors';
import { nodeBuiltin } from '../internal/runtime/node-builtins';

/**
 * Parses the verified body. Keys that can poison prototypes when a handler merges the payload are
 * refused, however they are spelled in the text (`\u` escapes included), by walking the parsed keys.
 */
export function parseJson(body: Uint8Array): unknown {
  const text = decode(body);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new SvcWebhookError('invalid_json', 'request body is not valid JSON', { cause: err });
  }
  if (hasForbiddenKey(value)) {
    throw new SvcWebhookError('forbidden_key', 'request body contains a __proto__ or constructor key');
  }
  return value;
}

/** The body as text: JSON on the wire is UTF-8, and a body that is not is refused (invalid_utf8). */
export type Utf8Decoder = (body: Uint8Array) => string;

// Below this size the decoders differ by a microsecond or two either way.
// Stryker disable next-line ArithmeticOperator: only picks the decoder, never the text (test/mutation/EQUIVALENT.core.md)
const TRANSCODE_MIN_BYTES = 16 * 1024;

function notUtf8(): SvcWebhookError {
  return new SvcWebhookError('invalid_utf8', 'request body is not valid UTF-8');
}

/**
 * The decoder on Node (and Bun, Deno): a body that is not UTF-8 would reach handlers with U+FFFD in
 * place of the bytes that were signed, so it is refused. Node 20's UTF-8 decoder slows down once
 * text holds non-ASCII characters: a large body of such text converts to UTF-16 with ICU and is
 * copied into a string faster (the 250 KB bench event: about 330 µs against 520 µs; mostly-ASCII
 * text with one late accent is about 10 % slower).
 */
export function nodeUtf8Decoder(buffer: typeof NodeBuffer): Utf8Decoder {
  const { Buffer, isAscii, isUtf8, transcode } = buffer;
  // Stryker disable all: which decoder runs changes the speed, never the text (test/mutation/EQUIVALENT.md)
  /** Node without ICU has no transcode(); the body is then decoded the usual way. */
  const canTranscode = ((): boolean => {
    try {
      return transcode(Buffer.from('é'), 'utf8', 'ucs2').toString('ucs2') === 'é';
    } catch {
      return false;
    }
  })();
  // Stryker restore all
  return (bytes) => {
    // A view of the same memory: the Fetch and verifier paths hand plain Uint8Arrays.
    const body = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // Stryker disable next-line ConditionalExpression: the cheaper decoder, the same text (test/mutation/EQUIVALENT.core.md)
    if (isAscii(body)) return body.toString('latin1'); // ASCII is its own Latin-1: the cheapest decode
    if (!isUtf8(body)) throw notUtf8();
    // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,StringLiteral: which decoder runs changes the speed, never the text (test/mutation/EQUIVALENT.md)
    if (body.length >= TRANSCODE_MIN_BYTES && canTranscode) return transcode(body, 'utf8', 'ucs2').toString('ucs2');
    return body.toString('utf8');
  };
}

/**
 * The decoder where there is no node:buffer (workerd, Vercel's Edge runtime): TextDecoder, fatal on
 * a byte that is not UTF-8, and keeping a byte order mark as Node's decoder does (JSON.parse then
 * refuses it, as it does on Node).
 */
export function webUtf8Decoder(): Utf8Decoder {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  return (body) => {
    try {
      return decoder.decode(body);
    } catch {
      throw notUtf8();
    }
  };
}

/** The runtime's decoder, picked once. */
export function runtimeUtf8Decoder(): Utf8Decoder {
  // Stryker disable next-line StringLiteral: without node:buffer the portable decoder gives the same text (test/mutation/EQUIVALENT.core.md)
  const buffer = nodeBuiltin('node:buffer');
  // Stryker disable next-line ConditionalExpression,EqualityOperator: both decoders give the same text and refuse the same bytes (test/mutation/EQUIVALENT.core.md)
  return buffer === undefined ? webUtf8Decoder() : nodeUtf8Decoder(buffer);
}

const decode = runtimeUtf8Decoder();

/**
 * Walking every key costs less than searching the text for the names: a delivery has far fewer keys
 * than bytes (a 250 KB event: about 8 µs against 200 µs). The walk keeps its own stack, so a deeply
 * nested body cannot overflow the call stack. for-in is the fastest way to list the keys of objects
 * made by JSON.parse, and it lists an own `__proto__` key; it would also list enumerable keys that
 * some other module added to Object.prototype, so those are skipped when there are any.
 */
function hasForbiddenKey(root: unknown): boolean {
  // Stryker disable next-line ConditionalExpression,LogicalOperator: a value without keys walks to false as well (test/mutation/EQUIVALENT.core.md)
  if (typeof root !== 'object' || root === null) return false;
  const inherited = hasInheritedKeys();
  const stack: object[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    // The array branch is the faster walk: for-in reaches the same items (test/mutation/EQUIVALENT.core.md)
    // Stryker disable next-line ConditionalExpression,BlockStatement
    if (Array.isArray(node)) {
      // Stryker disable next-line EqualityOperator
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        // Stryker disable next-line ConditionalExpression,LogicalOperator
        if (typeof item === 'object' && item !== null) stack.push(item);
      }
      continue;
    }
    for (const key in node) {
      if (inherited && !Object.hasOwn(node, key)) continue;
      if (key === '__proto__' || key === 'constructor') return true;
      const item: unknown = (node as Record<string, unknown>)[key];
      // Stryker disable next-line ConditionalExpression: a null on the stack has no keys (test/mutation/EQUIVALENT.core.md)
      if (typeof item === 'object' && item !== null) stack.push(item);
    }
  }
  return false;
}

function hasInheritedKeys(): boolean {
  for (const _ in {}) return true;
  // Stryker disable next-line BooleanLiteral: the own-key test then always runs, and a parsed node's keys are its own (test/mutation/EQUIVALENT.core.md)
  return false;
}
