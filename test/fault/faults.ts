import { wallNow } from './effect-log';
import type { ReceiverSlot } from './receivers';
import type { StoreServer } from './store-kind';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the fault program did, for the summary. */
export interface FaultLog {
  receiverKills: number;
  receiverTerms: number;
  storeFreezes: number;
  storeKills: number;
  /** When the store came back from each fault (thawed, restarted), on the sender's clock. */
  storeBack: number[];
}

/**
 * The faults, one after another while the sender runs: receivers killed -9 with handlers in flight
 * (and restarted), one closed by SIGTERM under load, the store frozen (SIGSTOP, shorter than the
 * claim lease) and killed -9 and restarted from its durable data, and receivers killed while the
 * store is away (their commits still waiting). Stops early once `done()` says the sender finished.
 */
export async function runFaults(store: StoreServer, slots: readonly ReceiverSlot[], done: () => boolean): Promise<FaultLog> {
  const log: FaultLog = { receiverKills: 0, receiverTerms: 0, storeFreezes: 0, storeKills: 0, storeBack: [] };
  const [a, b, c] = slots as [ReceiverSlot, ReceiverSlot, ReceiverSlot];
  const killReceiver = async (slot: ReceiverSlot, withinMs = 1500) => {
    await slot.killWithRunsInFlight(withinMs);
    log.receiverKills++;
  };
  const freezeStore = () => {
    store.freeze();
    log.storeFreezes++;
  };
  const thawStore = () => {
    store.thaw();
    log.storeBack.push(wallNow());
  };
  const killStore = async () => {
    await store.kill();
    log.storeKills++;
  };
  const restartStore = async () => {
    await store.restart();
    log.storeBack.push(wallNow());
  };
  const steps: Array<() => Promise<void>> = [
    async () => {
      await killReceiver(a);
      await a.start();
    },
    async () => {
      freezeStore();
      await sleep(1500);
      thawStore();
    },
    async () => {
      await killReceiver(b);
      await b.start();
    },
    async () => {
      // Up to 10 s for runs to be in flight: after the store's freeze a receiver may refuse every
      // delivery (503) for a few seconds, and a SIGTERM with nothing running tests no drain.
      await c.terminate(10_000, 3);
      log.receiverTerms++;
      await c.start();
    },
    async () => {
      await killStore();
      await sleep(2000);
      await restartStore();
    },
    async () => {
      // A receiver killed while its commits wait on a frozen store: past the store's command
      // timeout it has answered 2xx and retries them in the background. (What the frozen store had
      // already received from it still runs when it continues.)
      await a.runsInFlight(1000);
      freezeStore();
      await sleep(900);
      await killReceiver(a, 0);
      await sleep(600);
      thawStore();
      await a.start();
    },
    async () => {
      // The same while the store is down: those commits never reach it.
      await b.runsInFlight(1000);
      await killStore();
      await sleep(900);
      await killReceiver(b, 0);
      await sleep(1100);
      await restartStore();
      await b.start();
    },
    async () => {
      await killReceiver(c);
      await c.start();
    },
  ];
  await sleep(2500);
  for (const step of steps) {
    if (done()) break;
    await step();
    await sleep(1500);
  }
  return log;
}
