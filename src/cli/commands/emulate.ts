import { chmod, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createFakeSvc } from '../../testing/emulator/create-fake-svc';
import { CONTROL_ROUTES } from '../../testing/emulator/control-routes';
import { FakeSvcError } from '../../testing/emulator/emulator-error';
import type { FakeSvc, FakeSvcOptions } from '../../testing/emulator/fake-svc-types';
import { CliError, usageError } from '../cli-error';
import type { CliIo } from '../cli-io';
import type { Command } from '../command';
import { oneOf, parseOptions } from '../parse-options';

const help = `Usage: svc-webhooks emulate [options]

Run an emulator of svc's webhooks on this machine: GET /api/version, the bot and board webhook
routes with svc's rules, and svc's delivery (signatures, retries at 1, 2, 4 … minutes up to an
hour, a delivery living a day, a webhook disabled after a day of failures, the plan pause).
Events are emitted through the control routes it prints. Runs until Ctrl-C.

Options:
  --host <address>           address to listen on (default 127.0.0.1: this machine only)
  --port <n>                 port (default 0: any free port)
  --allow-loopback           accept webhook urls on this machine (http://127.0.0.1:…), which svc refuses
  --forward <from>=<to>      deliver what is registered for the origin <from> to <to>, as a tunnel
                             would (repeatable): --forward https://hooks.example.com=http://127.0.0.1:3000
  --allow-host <host>        a host deliveries may go to besides this machine (repeatable)
  --clock <real|manual>      manual: time moves only by POST /_emulator/advance (default real)
  --bot-token-file <file>    write the start bot's token to <file> (mode 600); it is never printed
  --person-token-file <file> write the token of the person who manages the start board to <file>
  -h, --help                 show this help

Example:
  npx svc-webhooks emulate --allow-loopback --person-token-file .svc-token
`;

const OPTIONS = {
  host: { type: 'string' },
  port: { type: 'string' },
  'allow-loopback': { type: 'boolean' },
  forward: { type: 'string', multiple: true },
  'allow-host': { type: 'string', multiple: true },
  clock: { type: 'string' },
  'bot-token-file': { type: 'string' },
  'person-token-file': { type: 'string' },
} as const;

function readForward(pairs: readonly string[] = []): Record<string, string> {
  const forward: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw usageError('--forward takes <from>=<to>, two absolute URLs');
    forward[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return forward;
}

function readPort(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw usageError('--port takes a whole number from 0 to 65535');
  return port;
}

async function writeToken(io: CliIo, file: string | undefined, token: string): Promise<string | undefined> {
  if (file === undefined) return undefined;
  const path = resolve(io.cwd, file);
  try {
    await writeFile(path, `${token}\n`, { mode: 0o600 });
    // writeFile's mode applies only to a new file; an existing one is narrowed too.
    await chmod(path, 0o600);
  } catch (err) {
    throw new CliError(`could not write ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  return file;
}

function banner(svc: FakeSvc, written: { bot?: string; person?: string }): string {
  return [
    `svc emulator listening on ${svc.baseUrl} (${svc.manualClock ? 'manual' : 'real'} clock)`,
    `board  ${svc.board.key} ${svc.board.id} (Business plan), managed by the start person`,
    `bot    ${svc.bot.id}`,
    `tokens ${written.person === undefined ? 'person: not written (--person-token-file)' : `person: in ${written.person}`}; ${written.bot === undefined ? 'bot: not written (--bot-token-file)' : `bot: in ${written.bot}`}`,
    '',
    "svc's routes:",
    '  GET                /api/version',
    '  PUT, GET, DELETE   /api/bots/me/webhook          (Authorization: Bearer <bot token>)',
    '  PUT, GET, DELETE   /api/boards/{id}/webhook      (Authorization: Bearer <person token>)',
    '  POST               /api/boards/{id}/webhook/ping',
    '',
    'Control routes:',
    ...CONTROL_ROUTES.map((line) => `  ${line}`),
    '',
    'Stop with Ctrl-C.',
    '',
  ].join('\n');
}

export const emulateCommand: Command = {
  name: 'emulate',
  summary: "run an emulator of svc's webhook routes and deliveries on this machine",
  help,
  async run(args, io) {
    const { values, positionals } = parseOptions('emulate', args, OPTIONS);
    if (positionals.length > 0) throw usageError('emulate takes no arguments besides its options (see svc-webhooks emulate --help)');
    if (io.interrupted === undefined) throw usageError('emulate runs until interrupted, which needs a terminal or a process that can be');
    const options: FakeSvcOptions = {
      host: values.host ?? '127.0.0.1',
      clock: oneOf(values.clock, ['real', 'manual'] as const, '--clock') ?? 'real',
      allowLoopback: values['allow-loopback'] === true,
      forward: readForward(values.forward),
      allowedHosts: ['loopback', ...(values['allow-host'] ?? [])],
      // A process that may run for days keeps no request log, and a bounded audit.
      recordRequests: false,
      maxAuditEntries: 10_000,
    };
    const port = readPort(values.port);
    if (port !== undefined) options.port = port;
    let svc: FakeSvc;
    try {
      svc = await createFakeSvc(options);
    } catch (err) {
      if (err instanceof FakeSvcError) throw usageError(err.message);
      throw new CliError(`could not listen: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    try {
      const written = {
        bot: await writeToken(io, values['bot-token-file'], svc.bot.token),
        person: await writeToken(io, values['person-token-file'], svc.person.token),
      };
      io.stdout.write(banner(svc, written));
      await io.interrupted();
    } finally {
      await svc.close();
    }
    io.stdout.write('svc emulator stopped\n');
    return 0;
  },
};
