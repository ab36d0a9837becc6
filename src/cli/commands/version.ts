import { SvcClient } from '../../client/svc-client';
import { usageError } from '../cli-error';
import type { Command } from '../command';
import { formatFields, printable, terminalJson, withoutCredentials } from '../format';
import { parseOptions } from '../parse-options';
import { withProgress } from '../progress';
import { requiredBaseUrl } from '../read-input';

const help = `Usage: svc-webhooks version --base-url <url> [--json]

Read an svc server's version and license from GET /api/version (no token needed).

Options:
  --base-url <url>   svc's base address (or SVC_BASE_URL)
  --json             print the answer as JSON
  -h, --help         show this help

Example:
  npx svc-webhooks version --base-url https://acme.svc.example.com
`;

export const versionCommand: Command = {
  name: 'version',
  summary: "print an svc server's version (GET /api/version)",
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions('version', args, { 'base-url': { type: 'string' }, json: { type: 'boolean' } });
    if (positionals.length > 0) throw usageError('version takes no arguments besides its options (see svc-webhooks version --help)');
    const client = new SvcClient({ baseUrl: requiredBaseUrl(io, values['base-url']), fetch: io.fetch });
    const info = await withProgress(io, 'asking svc for its version', () => client.version());
    if (values.json === true) io.stdout.write(terminalJson(withoutCredentials(info)));
    else io.stdout.write(`${printable(`${info.product || 'svc'} ${info.version} (commit ${info.commit})`)}\n${formatFields(info)}`);
    return 0;
  },
};
