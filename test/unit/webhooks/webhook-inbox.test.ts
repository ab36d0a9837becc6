import type { Settings } from '../../../src/webhooks/webhook-settings';
import type { InboxSettings } from '../../../src/inbox/inbox-options';
import { InboxProducer } from '../../../src/inbox/inbox-producer';
import { startWorker } from '../../../src/receive/inbox-worker';
import { requireQueuePackages } from '../../../src/inbox/redis-connection';
import type { JobSource } from '../../../src/inbox/accepted-delivery';
import { webhookInbox } from '../../../src/webhooks/webhook-inbox';
import type { Delivery } from '../../../src/internal/delivery/delivery';
import type { DeliveryReport } from '../../../src/observe/delivery-report';
import type { WebhookProtocol } from '../../../src/receive/webhook-protocol';

/**
 * What a webhook middleware gets from its inbox option, with the producer, the worker and the
 * package check scripted: whether the hand-off exists, what work() starts, and what close() waits for.
 */
const producers: Array<{ args: unknown[]; handoff: jest.Mock; close: jest.Mock }> = [];

jest.mock('../../../src/inbox/inbox-producer', () => ({
  InboxProducer: jest.fn((...args: unknown[]) => {
    const producer = { args, handoff: jest.fn(), close: jest.fn(() => Promise.resolve()) };
    producers.push(producer);
    return producer;
  }),
}));
jest.mock('../../../src/receive/inbox-worker', () => ({ startWorker: jest.fn(() => ({ the: 'worker' })) }));
jest.mock('../../../src/inbox/redis-connection', () => ({ requireQueuePackages: jest.fn() }));

const inbox = { connection: 'redis://inbox', prefix: 'svc-webhooks' } as InboxSettings;
const logger = { the: 'logger' };
const lookup = jest.fn();
const config = (withInbox: boolean) => ({ ...(withInbox ? { inbox } : {}), logger, abandonAfterMs: 12_345, secrets: { lookup } }) as unknown as Settings;
const protocol = { webhook: 'bot' } as WebhookProtocol<unknown, Delivery>;
const jobs: JobSource<Delivery> = { jobOf: jest.fn() };
const report = { the: 'report' } as unknown as DeliveryReport;
const inboxOf = (settings: Settings, given: JobSource<Delivery> | undefined) => webhookInbox({ settings, protocol, jobs: given, report });

beforeEach(() => {
  producers.length = 0;
  jest.clearAllMocks();
});

describe("a webhook's inbox", () => {
  describe('with the inbox option', () => {
    it('checks at setup that the queue packages are installed', () => {
      inboxOf(config(true), jobs);
      expect(requireQueuePackages).toHaveBeenCalledTimes(1);
    });

    it('hands deliveries to a producer for its webhook', () => {
      const made = inboxOf(config(true), jobs);
      expect(InboxProducer).toHaveBeenCalledTimes(1);
      expect(producers[0]!.args).toEqual([inbox, 'bot', jobs]);
      expect(made.handoff).toBe(producers[0]!.handoff);
    });

    it('starts a worker with the inbox, the webhook protocol, the settings, the report and the work options', () => {
      const options = { concurrency: 3 };
      expect(inboxOf(config(true), jobs).work(options)).toEqual({ the: 'worker' });
      expect(startWorker).toHaveBeenCalledTimes(1);
      expect(startWorker).toHaveBeenCalledWith({ inbox, protocol, settings: config(true), report }, options);
    });

    it('closes by closing its producer, and waits for it', async () => {
      const made = inboxOf(config(true), jobs);
      let finish!: () => void;
      producers[0]!.close.mockReturnValue(new Promise<void>((resolve) => (finish = resolve)));
      let closed = false;
      const closing = made.close().then(() => (closed = true));
      await Promise.resolve();
      await Promise.resolve();
      expect(producers[0]!.close).toHaveBeenCalledTimes(1);
      expect(closed).toBe(false);
      finish();
      await closing;
      expect(closed).toBe(true);
    });
  });

  describe('without the inbox option', () => {
    it('checks no package, makes no producer and has no hand-off: the handlers run in the request', () => {
      const made = inboxOf(config(false), undefined);
      expect(requireQueuePackages).not.toHaveBeenCalled();
      expect(InboxProducer).not.toHaveBeenCalled();
      expect(made.handoff).toBeUndefined();
    });

    it('refuses work() with a TypeError, starting no worker', () => {
      const made = inboxOf(config(false), undefined);
      expect(() => made.work()).toThrow(TypeError);
      expect(startWorker).not.toHaveBeenCalled();
    });

    it('closes at once', async () => {
      await expect(inboxOf(config(false), undefined).close()).resolves.toBeUndefined();
    });
  });

  it.each([
    ['an inbox without jobs', true, undefined],
    ['jobs without an inbox', false, jobs],
  ])('with %s, has no hand-off and refuses work()', async (_what, withInbox, given) => {
    const made = inboxOf(config(withInbox), given);
    expect(InboxProducer).not.toHaveBeenCalled();
    expect(made.handoff).toBeUndefined();
    expect(() => made.work()).toThrow(TypeError);
    expect(startWorker).not.toHaveBeenCalled();
    await expect(made.close()).resolves.toBeUndefined();
  });
});
