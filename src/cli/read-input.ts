import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CliError, usageError } from './cli-error';
import type { CliIo } from './cli-io';

/** Reads a file named on the command line, relative to the working directory. */
export function readInputFile(io: CliIo, path: string, what: string): Buffer {
  try {
    return readFileSync(resolve(io.cwd, path));
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : typeof code === 'string' ? code : 'unreadable';
    throw new CliError(`cannot read ${what} ${path}: ${why}`);
  }
}

/** A secret kept in a file: its final newline (added by editors and `echo`) is not part of it. */
function secretFromFile(io: CliIo, path: string, what: string): string {
  return readInputFile(io, path, what)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

export interface SecretSources {
  value?: string | undefined;
  file?: string | undefined;
  /** An environment variable to fall back on. */
  envName?: string;
  /** The webhook's own variable, as its receiver reads it (`SVC_BOARD_WEBHOOK_SECRET`): read after `envName`. */
  webhookEnvName?: string;
}

/** A secret from --secret, --secret-file or an environment variable, in that order; undefined when none is given. */
export function optionalSecret(io: CliIo, sources: SecretSources): string | undefined {
  if (sources.value !== undefined && sources.file !== undefined) throw usageError('give either --secret or --secret-file, not both');
  const secret = sources.value ?? (sources.file === undefined ? undefined : secretFromFile(io, sources.file, 'secret file'));
  // An empty file (or --secret=) is a mistake, not a request for no secret: svc would generate one.
  if (secret === '') throw usageError(`the webhook secret ${sources.value === undefined ? `in ${sources.file}` : 'given'} is empty`);
  if (secret !== undefined) return held(io, secret);
  for (const name of [sources.envName, sources.webhookEnvName]) {
    const fromEnv = name === undefined ? undefined : io.env[name];
    if (fromEnv !== undefined && fromEnv !== '') return held(io, fromEnv);
  }
  return undefined;
}

/** Every secret and token the CLI reads is marked, so its output never shows it. */
export function held(io: CliIo, value: string): string {
  return io.holdSecret?.(value) ?? value;
}

export function requiredSecret(io: CliIo, sources: SecretSources): string {
  const secret = optionalSecret(io, sources);
  if (secret === undefined) {
    const names = [sources.webhookEnvName, sources.envName].filter((n) => n !== undefined);
    const env = names.length === 0 ? '' : `, or set ${names.join(' or ')}`;
    const flags = 'value' in sources ? '--secret or --secret-file' : '--secret-file <file>';
    throw usageError(`the webhook secret is required: pass ${flags}${env}`);
  }
  return secret;
}

/** A token from --token-file or an environment variable; never from the command line itself. */
export function requiredToken(io: CliIo, file: string | undefined, envName: string): string {
  if (file !== undefined) return held(io, secretFromFile(io, file, 'token file'));
  const token = io.env[envName];
  if (token === undefined || token === '') throw usageError(`a token is required: set ${envName} or pass --token-file <file>`);
  return held(io, token);
}

export function requiredBaseUrl(io: CliIo, value: string | undefined): string {
  const baseUrl = value ?? io.env.SVC_BASE_URL;
  if (baseUrl === undefined || baseUrl === '') throw usageError('the svc base url is required: pass --base-url or set SVC_BASE_URL');
  return baseUrl;
}
