import type { WebhookLogger } from '../internal/logging/logger';
import { secretKeys } from '../verify/secret-keys';
import { secretLookupSettings } from '../verify/secret-lookup-options';
import { SecretLookup, type SecretAnswer } from '../verify/secret-resolver';
import type { SecretSource } from '../verify/secret-source';
import type { WebhookKind } from './relay-record';

/**
 * The relay's webhook secrets, as a receiver takes them: one secret, several during a rotation (one
 * a line of a file), or for many boards (bots) a JSON object of id → secret(s), looked up through
 * the receivers' cached SecretLookup. Errors name the webhook and the problem, never a secret.
 */

export interface RelaySecrets {
  readonly source: SecretSource;
  /** Every secret, so that no output of the relay shows one. */
  readonly values: readonly string[];
  /** "1 secret", "2 secrets (a rotation)", "3 boards". */
  readonly description: string;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mapOf(webhook: WebhookKind, parsed: Record<string, unknown>): Map<string, readonly string[]> {
  const map = new Map<string, readonly string[]>();
  for (const [id, answer] of Object.entries(parsed)) {
    const list = typeof answer === 'string' ? [answer] : answer;
    if (!Array.isArray(list) || list.length === 0 || !list.every((s) => typeof s === 'string'))
      throw new Error(`the ${webhook} secrets file maps ${webhook} ${id} to no secret: give a string or a list of strings`);
    secretKeys(list);
    map.set(id.toLowerCase(), list as string[]);
  }
  return map;
}

/**
 * Reads the secrets of one webhook from the text of a file or a variable: a JSON object is a map
 * by board (bot) id, anything else one secret a line.
 */
export function relaySecrets(webhook: WebhookKind, text: string, logger: WebhookLogger): RelaySecrets {
  const trimmed = text.trim();
  let parsed: unknown;
  if (trimmed.startsWith('{')) {
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new Error(`the ${webhook} secrets are not valid JSON (a map of ${webhook} id to secret)`);
    }
  }
  if (isMap(parsed)) {
    const map = mapOf(webhook, parsed);
    const lookup = new SecretLookup({
      resolve: (id): SecretAnswer => map.get(id),
      webhook,
      options: secretLookupSettings(undefined, 'relay'),
      logger,
    });
    return { source: { lookup }, values: [...map.values()].flat(), description: `${map.size} ${webhook}${map.size === 1 ? '' : 's'}, each its own secret` };
  }
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
  if (lines.length === 0) throw new Error(`the ${webhook} webhook secret is empty`);
  const keys = secretKeys(lines.length === 1 ? lines[0] : lines);
  return { source: { keys }, values: lines, description: lines.length === 1 ? '1 secret' : `${lines.length} secrets (a rotation)` };
}
