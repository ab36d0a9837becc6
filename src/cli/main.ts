import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isSvcClientError, type ClientErrorCode } from '../client/svc-client-error';
import { redactSecrets } from '../internal/logging/redact-secrets';
import { HeldSecrets } from './held-secrets';
import { CliError, EXIT_FAILURE, EXIT_USAGE } from './cli-error';
import { processIo, type CliIo } from './cli-io';
import type { Command } from './command';
import { boardWebhookCommand } from './commands/board-webhook';
import { botWebhookCommand } from './commands/bot-webhook';
import { emulateCommand } from './commands/emulate';
import { postgresCommand } from './commands/postgres';
import { relayCommand } from './commands/relay';
import { inboxCommand } from './commands/inbox';
import { parkedCommand } from './commands/parked';
import { listenCommand } from './commands/listen';
import { sendCommand } from './commands/send';
import { statusCommand } from './commands/status';
import { verifyCommand } from './commands/verify';
import { versionCommand } from './commands/version';
import { controlFreeStream, oneLine } from './format';

const COMMANDS: readonly Command[] = [
  sendCommand,
  verifyCommand,
  statusCommand,
  botWebhookCommand,
  boardWebhookCommand,
  inboxCommand,
  parkedCommand,
  postgresCommand,
  versionCommand,
  emulateCommand,
  relayCommand,
  listenCommand,
];

/** Client errors raised by a bad input, before anything was sent: usage errors, not failures. */
const LOCAL_INPUT_CODES = new Set<ClientErrorCode>(['invalid_base_url', 'invalid_token', 'invalid_url', 'invalid_secret', 'invalid_board_id']);

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'Usage: svc-webhooks <command> [options]',
    '',
    'Developer tools for svc webhooks.',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run svc-webhooks <command> --help for the options of a command.',
    'Exit codes: 0 success, 1 failure, 2 usage error, 3 svc could not be reached (status, board-webhook reenable).',
    '',
  ].join('\n');
}

function packageVersion(): string {
  try {
    // The same relative path from src/cli and dist/cli.
    return (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function report(io: CliIo, command: string | undefined, err: unknown): number {
  const prefix = command === undefined ? 'svc-webhooks' : `svc-webhooks ${command}`;
  let message: string;
  let code: number = EXIT_FAILURE;
  if (err instanceof CliError) {
    message = err.message;
    code = err.exitCode;
  } else if (isSvcClientError(err)) {
    message = `${err.code}: ${err.message}`;
    if (LOCAL_INPUT_CODES.has(err.code)) code = EXIT_USAGE;
  } else {
    message = `unexpected error: ${err instanceof Error ? err.message : String(err)}`;
  }
  io.stderr.write(`${prefix}: ${oneLine(message)}\n`);
  return code;
}

/** Runs the CLI with `argv` (without node and the script) and resolves to the exit code. */
export async function main(argv: readonly string[], rawIo: CliIo): Promise<number> {
  // Whatever a command prints (svc's answers, a URL, an error), the token and secrets it was given,
  // and anything shaped like an svc token, never reach the terminal.
  const held = new HeldSecrets();
  // Standard output also never passes a control character on (stderr carries the progress line's own).
  const io: CliIo = {
    ...rawIo,
    stdout: held.stream(controlFreeStream(rawIo.stdout)),
    stderr: held.stream(rawIo.stderr),
    holdSecret: (value) => held.hold(value),
  };
  const [first, ...rest] = argv;
  if (first === undefined) {
    io.stderr.write(overview());
    return EXIT_USAGE;
  }
  if (first === '--help' || first === '-h') {
    io.stdout.write(overview());
    return 0;
  }
  if (first === '--version') {
    io.stdout.write(`svc-webhooks ${packageVersion()}\n`);
    return 0;
  }
  if (first === 'help') {
    const target = COMMANDS.find((c) => c.name === rest[0]);
    io.stdout.write(target?.help ?? overview());
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === first);
  if (command === undefined) return report(io, undefined, new CliError(`unknown command "${first}"; run svc-webhooks --help`, EXIT_USAGE));
  // Every command takes --help / -h (before a `--`): answered here, once for all of them.
  const options = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest;
  if (options.includes('--help') || options.includes('-h')) {
    io.stdout.write(command.help);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    return report(io, command.name, err);
  }
}

/** The process entry: used by bin/svc-webhooks.js and by `npm run cli`. */
export function run(): void {
  main(process.argv.slice(2), processIo()).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`svc-webhooks: unexpected error: ${redactSecrets(String(err))}\n`);
      process.exitCode = EXIT_FAILURE;
    },
  );
}

if (require.main === module) run();
