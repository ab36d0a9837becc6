import { SvcWebhookError } from '../errors';

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor']);
// Bytes that must be present for a forbidden key to appear: its name, or a \u escape that could spell it.
const SUSPECT_MARKERS = ['__proto__', 'constructor', '\\u'];

/**
 * Parses the verified body. Keys that can poison prototypes when a handler merges the payload are
 * refused; the whole tree is only walked when the raw text contains something that could spell them.
 */
export function parseJson(body: Buffer): unknown {
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new SvcWebhookError('invalid_json', 'request body is not valid JSON', { cause: err });
  }
  if (SUSPECT_MARKERS.some((m) => text.includes(m)) && hasForbiddenKey(value)) {
    throw new SvcWebhookError('forbidden_key', 'request body contains a __proto__ or constructor key');
  }
  return value;
}

function hasForbiddenKey(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      for (const item of node) stack.push(item);
      continue;
    }
    for (const key of Object.keys(node)) {
      if (FORBIDDEN_KEYS.has(key)) return true;
      stack.push((node as Record<string, unknown>)[key]);
    }
  }
  return false;
}
