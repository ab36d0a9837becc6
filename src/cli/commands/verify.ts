import { CliError, usageError } from '../cli-error';
import type { Command } from '../command';
import { diagnoseSignature } from '../diagnose-signature';
import { printable } from '../format';
import { oneOf, parseOptions, positiveNumber } from '../parse-options';
import { readCapturedHeaders } from '../read-capture';
import { held, readInputFile } from '../read-input';

const help = `Usage: svc-webhooks verify --body <file> (--headers <file> | -H 'Name: value' ...) --secret <secret> [options]

Check a captured request against a webhook secret, and say exactly why it fails:
wrong secret, stale timestamp, body changed, or a missing or malformed header.

Options:
  --body <file>          the raw request body, byte for byte
  --headers <file>       the request headers: "Name: value" lines (a request line is
                         skipped) or a JSON object
  -H, --header <line>    a header, "Name: value"; repeatable
  --secret-file <file>   read the webhook secret from a file (or set SVC_WEBHOOK_SECRET)
  --secret <secret>      the secret on the command line (repeat it to try several, e.g.
                         during a rotation): only for development secrets, as it stays
                         in shell history and process lists
  --webhook board|bot    the webhook (read from the signature scheme by default)
  --now <unix seconds>   judge the timestamp as of this time, e.g. when it arrived
  --tolerance <seconds>  allowed timestamp distance (default 300)
  -h, --help             show this help

Exits 0 when the request is valid, 1 with the reason when it is not, 2 on a usage error.
Reasons: signature_missing, signature_duplicated, signature_malformed, timestamp_missing,
timestamp_malformed, timestamp_out_of_tolerance, secret_invalid, body_changed, wrong_secret,
delivery_id_mismatch, event_type_mismatch.

Example:
  npx svc-webhooks verify --headers headers.txt --body body.json --secret-file secret.txt
`;

const DEFAULT_TOLERANCE_SECONDS = 300;

export const verifyCommand: Command = {
  name: 'verify',
  summary: 'check a captured request against a secret and explain why it fails',
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions('verify', args, {
      body: { type: 'string' },
      headers: { type: 'string' },
      header: { type: 'string', short: 'H', multiple: true },
      secret: { type: 'string', multiple: true },
      'secret-file': { type: 'string' },
      webhook: { type: 'string' },
      now: { type: 'string' },
      tolerance: { type: 'string' },
    });
    if (positionals.length > 0) throw usageError('verify takes no arguments besides its options (see svc-webhooks verify --help)');
    if (values.body === undefined) throw usageError('--body <file> is required: the raw body of the captured request');
    if (values.headers === undefined && (values.header ?? []).length === 0) throw usageError('give the captured headers: --headers <file> or -H "Name: value"');
    const secrets = [...(values.secret ?? [])];
    if (values['secret-file'] !== undefined)
      secrets.push(
        readInputFile(io, values['secret-file'], 'secret file')
          .toString('utf8')
          .replace(/\r?\n$/, ''),
      );
    if (secrets.length === 0 && io.env.SVC_WEBHOOK_SECRET) secrets.push(io.env.SVC_WEBHOOK_SECRET);
    if (secrets.length === 0) throw usageError('the webhook secret is required: pass --secret-file or --secret, or set SVC_WEBHOOK_SECRET');
    for (const secret of secrets) held(io, secret);
    const now = values.now === undefined ? Math.floor(Date.now() / 1000) : positiveNumber(values.now, '--now')!;
    const tolerance = positiveNumber(values.tolerance, '--tolerance') ?? DEFAULT_TOLERANCE_SECONDS;
    const headersText = values.headers === undefined ? undefined : readInputFile(io, values.headers, 'headers file').toString('utf8');
    const diagnosis = diagnoseSignature({
      headers: readCapturedHeaders(headersText, values.headers, values.header ?? []),
      body: readInputFile(io, values.body, 'body file'),
      secrets,
      webhook: oneOf(values.webhook, ['board', 'bot'] as const, '--webhook'),
      nowSeconds: now,
      toleranceSeconds: tolerance,
    });
    if (!diagnosis.ok) throw new CliError(`invalid: ${diagnosis.code}: ${diagnosis.reason}`);
    io.stdout.write(`valid: ${printable(diagnosis.summary)}\n`);
    return 0;
  },
};
