import { parseBotToken } from '../client/bot-token';
import { redactSecrets } from '../internal/logging/redact-secrets';
import { SvcClient } from '../client/svc-client';
import { usageError } from './cli-error';
import type { CliIo } from './cli-io';
import { requiredBaseUrl, requiredToken } from './read-input';

export interface SetupClient {
  readonly client: SvcClient;
  /** Who is calling, safe to print: for a bot token its id and `tokenPrefix`, never the secret part. */
  readonly caller: string;
}

/** Where the setup client's address and token come from: options, or the named environment variable. */
export interface SetupSource {
  readonly baseUrl: string | undefined;
  readonly tokenFile: string | undefined;
  readonly tokenEnv: string;
  readonly allowInsecureHttp?: boolean;
}

/**
 * The client for the setup commands, built from --base-url / SVC_BASE_URL and a token from
 * --token-file or the named environment variable. The CLI's fetch is used so tests can watch it.
 */
export function setupClient(io: CliIo, { baseUrl, tokenFile, tokenEnv, allowInsecureHttp = false }: SetupSource): SetupClient {
  const token = requiredToken(io, tokenFile, tokenEnv);
  const client = new SvcClient({ baseUrl: requiredBaseUrl(io, baseUrl), token, fetch: io.fetch, allowInsecureHttp });
  const bot = parseBotToken(token);
  return { client, caller: bot === undefined ? '' : ` (bot ${bot.botId}, token ${redactSecrets(token)})` };
}

/** The options both webhook setup commands take. */
export const SETUP_OPTIONS = {
  'base-url': { type: 'string' },
  'token-file': { type: 'string' },
  url: { type: 'string' },
  'secret-file': { type: 'string' },
  json: { type: 'boolean' },
  'allow-insecure-http': { type: 'boolean' },
} as const;

/** --url and --secret-file configure a webhook, so only `set` takes them. */
export function refuseSetOnlyOptions(command: string, action: string, values: { url?: unknown; 'secret-file'?: unknown }): void {
  if (action !== 'set' && (values.url !== undefined || values['secret-file'] !== undefined)) {
    throw usageError(`--url and --secret-file belong to ${command} set, not ${action}`);
  }
}
