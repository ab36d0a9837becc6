import type { IncomingMessage } from 'node:http';
import type { ChildLoggerOptions } from 'pino';
import { redactingLogOptions } from './log-redaction';

/**
 * With a secret resolver the logger cannot know every board's secret; a handler's `ctx.log` is made
 * to drop the secrets of the board (or bot) its delivery was verified with.
 */
const verifiedWith = new WeakMap<IncomingMessage, () => readonly string[]>();

export function noteVerifiedSecrets(req: IncomingMessage, secrets: () => readonly string[]): void {
  verifiedWith.set(req, secrets);
}

/** Child-logger options for a delivery's `ctx.log`, or undefined when the parent logger already knows the secrets. */
export function deliveryLogOptions(req: IncomingMessage): ChildLoggerOptions | undefined {
  const secrets = verifiedWith.get(req)?.();
  return secrets === undefined || secrets.length === 0 ? undefined : (redactingLogOptions(secrets) as ChildLoggerOptions);
}
