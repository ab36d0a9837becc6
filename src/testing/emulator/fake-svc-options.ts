import {
  booleanOption,
  choiceOption,
  customOption,
  kindOf,
  numberOption,
  readOptions,
  stringOption,
  type ReadOptions,
} from '../../internal/checks/option-table';
import type { VersionInfo } from '../../client/setup-types';
import { readChaos } from './chaos';
import { FakeSvcError } from './emulator-error';
import type { FakeSvcOptions } from './fake-svc-types';

function plainObject(value: unknown, name: string, what: string): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new FakeSvcError('invalid_option', `\`${name}\` is ${what}; got ${kindOf(value)}`);
}

/** The options of `createFakeSvc`, one declaration each: what is checked, and the defaults. */
export const FAKE_SVC_OPTIONS = {
  host: stringOption({
    doc: 'The address to listen on.',
    default: '127.0.0.1',
    check(value, name) {
      if (value === '') throw new FakeSvcError('invalid_option', `\`${name}\` is an address to listen on`);
    },
  }),
  port: numberOption({ doc: 'The port to listen on; 0 for any free one.', unit: 'count', default: 0, min: 0, max: 65535 }),
  clock: choiceOption({ doc: "manual: time stands still until advance(ms); real: the machine's.", choices: ['real', 'manual'], default: 'real' }),
  startAt: numberOption({ doc: 'Where the manual clock starts, in ms since the epoch.', unit: 'ms', default: undefined, defaultText: 'now', min: 0 }),
  allowLoopback: booleanOption({ doc: 'Accept webhook urls on this machine, which svc refuses.', default: false }),
  forward: customOption<Record<string, string>>({
    doc: 'Maps a registered origin to where its deliveries really go.',
    type: 'Record<string, string>',
    defaultText: '{}',
    read(value, name) {
      if (value === undefined) return {};
      plainObject(value, name, 'an object of origins to URLs');
      return value as Record<string, string>;
    },
  }),
  allowedHosts: customOption<string[]>({
    doc: 'Hosts deliveries may go to, after forward; loopback is this machine.',
    type: 'string[]',
    defaultText: "['loopback']",
    read(value, name) {
      if (value === undefined) return ['loopback'];
      if (!Array.isArray(value) || !value.every((h) => typeof h === 'string' && h !== ''))
        throw new FakeSvcError('invalid_option', `\`${name}\` is a list of host names or addresses`);
      return value as string[];
    },
  }),
  chaos: customOption({
    doc: 'Delivery faults svc may show, each off by default.',
    type: 'ChaosOptions',
    defaultText: 'none',
    read: (value) => readChaos(value as never),
  }),
  botGetWrapped: booleanOption({ doc: 'Whether the bot GET wraps its state in `webhook`, as PUT does.', default: true }),
  versionInfo: customOption<Partial<VersionInfo>>({
    doc: 'Fields of GET /api/version over the default.',
    type: 'Partial<VersionInfo>',
    defaultText: '{}',
    read(value, name) {
      if (value === undefined) return {};
      plainObject(value, name, 'an object of version fields');
      return value as Partial<VersionInfo>;
    },
  }),
  apiDelayMs: numberOption({ doc: "How long every answer of svc's routes waits.", unit: 'ms', default: 0, min: 0, max: 60_000 }),
  apiRateLimit: customOption<{ perSecond: number; retryAfterSeconds: number } | undefined>({
    doc: "At most perSecond requests to svc's routes in any second; 429 with Retry-After beyond.",
    type: '{ perSecond, retryAfterSeconds }',
    defaultText: 'none',
    read(value, name) {
      if (value === undefined) return undefined;
      const limit = value as { perSecond?: unknown; retryAfterSeconds?: unknown };
      const whole = (n: unknown) => Number.isSafeInteger(n) && (n as number) > 0;
      if (typeof value !== 'object' || value === null || !whole(limit.perSecond) || !whole(limit.retryAfterSeconds)) {
        throw new FakeSvcError('invalid_option', `\`${name}\` is { perSecond, retryAfterSeconds }, whole numbers above 0`);
      }
      return value as { perSecond: number; retryAfterSeconds: number };
    },
  }),
  recordRequests: booleanOption({ doc: 'Keep every request for requests().', default: true }),
  maxAuditEntries: numberOption({
    doc: 'How many deliveries, and how many attempts, the audit keeps (the oldest go first).',
    unit: 'count',
    default: 100_000,
    min: 1,
  }),
};

/** The options, checked once: an unknown name (with the closest known one) or a bad value is an `invalid_option` FakeSvcError. */
export function readFakeSvcOptions(options: FakeSvcOptions): ReadOptions<typeof FAKE_SVC_OPTIONS> {
  let read: ReadOptions<typeof FAKE_SVC_OPTIONS>;
  try {
    read = readOptions(FAKE_SVC_OPTIONS, options, { factory: 'createFakeSvc' });
  } catch (err) {
    if (err instanceof TypeError || err instanceof RangeError) throw new FakeSvcError('invalid_option', err.message.replace(/^svc-webhooks: /, ''));
    throw err;
  }
  if (read.startAt !== undefined && read.clock !== 'manual') throw new FakeSvcError('invalid_option', '`startAt` needs `clock: "manual"`');
  return read;
}
