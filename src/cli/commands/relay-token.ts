import { openTokens } from '../../relay/relay-backend';
import { createToken, isListenerName, revokeToken } from '../../relay/relay-tokens';
import { CliError, EXIT_FAILURE, usageError } from '../cli-error';
import type { CliIo } from '../cli-io';
import { parseOptions } from '../parse-options';
import { backendTarget } from '../relay-target';

/**
 * `relay token create|revoke|list`: the listeners' access tokens, in the relay's data directory or
 * Redis. A new token is printed once, on its own line; the relay keeps only its hash.
 */
export async function relayTokenCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOptions('relay', args, {
    'data-dir': { type: 'string' },
    'redis-url': { type: 'string' },
    'redis-prefix': { type: 'string' },
    json: { type: 'boolean' },
  });
  const [action, name, ...rest] = positionals;
  if (action !== 'create' && action !== 'revoke' && action !== 'list') throw usageError('relay token takes create <name>, revoke <name> or list');
  if (action === 'list' ? name !== undefined : name === undefined || rest.length > 0)
    throw usageError(action === 'list' ? 'relay token list takes no name' : `relay token ${action} takes one listener name`);
  if (name !== undefined && !isListenerName(name))
    throw usageError('a listener name is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit');
  let opened;
  try {
    opened = await openTokens(backendTarget(io, values));
  } catch (err) {
    throw new CliError(`cannot open the relay's tokens: ${(err as Error).message}`);
  }
  try {
    if (action === 'create') {
      const token = await createToken(opened.tokens, name!, new Date());
      io.stdout.write(
        `token for listener ${name}, shown this once only (the relay keeps its hash); give it to listen in SVC_RELAY_TOKEN or --token-file:\n${token}\n`,
      );
      return 0;
    }
    if (action === 'revoke') {
      if (!(await revokeToken(opened.tokens, name!))) throw new CliError(`no token for listener ${name}`, EXIT_FAILURE);
      io.stdout.write(`token of listener ${name} revoked; its open streams end within seconds\n`);
      return 0;
    }
    const entries = await opened.tokens.read();
    if (values.json) io.stdout.write(`${JSON.stringify(Object.entries(entries).map(([n, e]) => ({ name: n, createdAt: e.createdAt })))}\n`);
    else for (const [n, e] of Object.entries(entries)) io.stdout.write(`${n}  created ${e.createdAt}\n`);
    return 0;
  } finally {
    await opened.close();
  }
}
