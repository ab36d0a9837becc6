/**
 * docs/options.md, made from the option declarations of src/ (the tables each factory reads its
 * options through): `npm run generate:options` writes it, and test/docs/options-doc.test.ts fails
 * when the page and the declarations differ.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FASTIFY_WEBHOOK_OPTIONS } from '../src/adapters/node/fastify-plugin';
import { SVC_CLIENT_OPTIONS } from '../src/client/svc-client-options';
import { DURABLE_OBJECT_STORE_OPTIONS } from '../src/dedup/durable-object-store';
import { MEMORY_STORE_OPTIONS, POSTGRES_STORE_OPTIONS, REDIS_REST_STORE_OPTIONS, REDIS_STORE_OPTIONS } from '../src/dedup/store-options';
import { WORK_OPTIONS } from '../src/inbox/work-options';
import type { OptionTable } from '../src/internal/checks/option-table';
import { SEQUENCE_TRACKER_OPTIONS } from '../src/ordering/board-sequence-tracker';
import { VERIFY_BOARD_INPUT, VERIFY_BOT_INPUT } from '../src/webhooks/verify-delivery';
import { WATCH_OPTIONS } from '../src/watch/watch-options';
import { FAKE_SVC_OPTIONS } from '../src/testing/emulator/fake-svc-options';
import { BOARD_WEBHOOK_OPTIONS, BOT_WEBHOOK_OPTIONS } from '../src/webhooks/webhook-options';

interface Section {
  readonly title: string;
  readonly intro: string;
  readonly table: OptionTable;
  /** Options listed in another section (the bot webhook's are the board's but one). */
  readonly only?: readonly string[];
}

const SECTIONS: readonly Section[] = [
  {
    title: '`svcBoardWebhook(secret | options)`',
    intro: 'The board webhook. A string, an array of strings or a resolver function alone is the `secret`.',
    table: BOARD_WEBHOOK_OPTIONS,
  },
  {
    title: '`svcBotWebhook(secret | options)`',
    intro:
      'The bot webhook takes the same options as the board webhook, but `toleranceSeconds` (a bot update carries no timestamp header) and `ignore` (board events only). Its default `path` is `/webhooks/bot`; a secret resolver needs a path that names the bot, such as `/webhooks/bots/:botId`.',
    table: BOT_WEBHOOK_OPTIONS,
    only: [],
  },
  {
    title: '`fastifyWebhook(webhook, options?)`',
    intro: 'A webhook as a Fastify plugin: `fastify.register(fastifyWebhook(board), { prefix })`.',
    table: FASTIFY_WEBHOOK_OPTIONS,
  },
  { title: '`work(options?)`', intro: 'Starts an inbox worker (inbox mode only).', table: WORK_OPTIONS },
  { title: '`memoryStore(options?)`', intro: 'The default de-dup store, in this process.', table: MEMORY_STORE_OPTIONS },
  { title: '`redisStore(options)`', intro: 'A de-dup store in Redis, shared by every receiver that uses it.', table: REDIS_STORE_OPTIONS },
  {
    title: '`redisRestStore(options)`',
    intro: 'The Redis store over HTTP (the Upstash REST protocol), for runtimes without TCP sockets: Vercel Edge, Workers.',
    table: REDIS_REST_STORE_OPTIONS,
  },
  {
    title: '`durableObjectStore(namespace, options?)`',
    intro: 'A de-dup store on Cloudflare Durable Objects (`SvcDedupObject`), shared by every isolate bound to the namespace.',
    table: DURABLE_OBJECT_STORE_OPTIONS,
  },
  {
    title: '`postgresStore(options)`',
    intro: 'A de-dup store in PostgreSQL, with exactly-once transactions (`ctx.transaction`).',
    table: POSTGRES_STORE_OPTIONS,
  },
  { title: '`verifyBoardDelivery(input)`', intro: 'Verification without a framework; its input.', table: VERIFY_BOARD_INPUT },
  { title: '`verifyBotDelivery(input)`', intro: 'The same for a bot update: the board input but `toleranceSeconds`.', table: VERIFY_BOT_INPUT, only: [] },
  { title: '`boardSequenceTracker(options?)`', intro: 'Tracks board sequence numbers in one process (direct mode).', table: SEQUENCE_TRACKER_OPTIONS },
  { title: '`new SvcClient(options)`', intro: "The setup client for svc's REST API.", table: SVC_CLIENT_OPTIONS },
  {
    title: '`watchWebhooks(options)`',
    intro: 'The webhook watcher: what svc reports for each webhook, every change of it (docs/never-silently-disabled.md).',
    table: WATCH_OPTIONS,
  },
  {
    title: '`createFakeSvc(options?)`',
    intro: 'The svc emulator of `svc-webhooks/testing` (docs/testing-with-emulator.md); a refused option is a `FakeSvcError` with the code `invalid_option`.',
    table: FAKE_SVC_OPTIONS,
  },
];

const HEADER = `# Options

<!-- Made by \`npm run generate:options\` from the option declarations in src/; do not edit by hand. -->

Every factory checks its options once, when it is called: an unknown name is refused with the
closest known one ("did you mean"), a renamed one with its new name, and a value out of bounds with
the option's name, what it got (never a secret's value) and what it takes.

**One naming rule.** A duration in milliseconds ends in \`Ms\` (\`timeoutMs\`), a duration in seconds
in \`Seconds\` (\`toleranceSeconds\`), a size in bytes in \`Bytes\` (\`maxBodyBytes\`), a count starts with
\`max\` (\`maxIds\`). Where BullMQ has a word for the same thing the inbox takes it (\`connection\`,
\`prefix\`, \`lockDurationMs\`). The names earlier versions took are listed in CHANGELOG.md.
`;

function cell(text: string | undefined): string {
  return (text ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function tableOf(table: OptionTable, prefix = ''): string[] {
  const lines = ['| option | type | default | accepts | what it does |', '|---|---|---|---|---|'];
  const nested: Array<[string, OptionTable]> = [];
  for (const [name, option] of Object.entries(table)) {
    lines.push(`| \`${prefix}${name}\` | ${cell(option.type)} | ${cell(option.defaultText ?? '—')} | ${cell(option.bounds ?? '—')} | ${cell(option.doc)} |`);
    if (option.nested !== undefined) nested.push([name, option.nested]);
  }
  for (const [name, inner] of nested) lines.push('', `### \`${prefix}${name}\``, '', ...tableOf(inner, `${prefix}${name}.`));
  return lines;
}

/** The whole page. */
export function optionsMarkdown(): string {
  const out = [HEADER];
  for (const section of SECTIONS) {
    out.push(`## ${section.title}`, '', section.intro, '');
    if (section.only === undefined) out.push(...tableOf(section.table), '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

if (require.main === module) {
  writeFileSync(join(__dirname, '..', 'docs', 'options.md'), optionsMarkdown());
  console.log('wrote docs/options.md');
}
