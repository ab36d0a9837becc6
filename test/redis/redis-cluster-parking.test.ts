import { redisStore, type RedisStore, type RedisStoreOptions } from '../../src';
import { describeParkingLot, parkedDelivery } from '../support/parking-contract';
import { RedisCluster } from '../support/redis-cluster';

/**
 * The Redis store's parking lot on a real Redis Cluster (three masters, three replicas): the same
 * contract as on one redis-server. Its scripts touch one slot each: the failure hash alone, or the
 * lot's keys, which share the hash tag {parked}.
 */
let cluster: RedisCluster;
const stores: RedisStore[] = [];
let prefixes = 0;

function store(options: Partial<RedisStoreOptions> = {}): RedisStore {
  const s = redisStore({ cluster: cluster.seeds, prefix: `lot${++prefixes}:`, ...options });
  stores.push(s);
  return s;
}

beforeAll(async () => {
  cluster = await RedisCluster.start({ nodeTimeoutMs: 1000 });
}, 60_000);

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await cluster?.close();
});

describeParkingLot('redis store on a cluster', {
  open: async (options) => store(options),
  unreachable: async (commandTimeoutMs) => store({ cluster: ['redis://127.0.0.1:1'], commandTimeoutMs }),
});

describe("the parking lot's keys on a cluster", () => {
  it("spreads failures over the slots, and keeps the lot's keys in the slot of {parked}", async () => {
    const s = store({ prefix: 'spread:' });
    const ids = Array.from({ length: 8 }, (_, i) => `failing-${i}`);
    for (const id of ids) await s.parking.noteFailure(id, 1, 'e');
    const slots = new Set(await Promise.all(ids.map((id) => cluster.slotOf(`spread:failed:${id}`))));
    expect(slots.size).toBeGreaterThan(1);
    await s.parking.park(parkedDelivery({ id: 'p' }));
    const tag = await cluster.slotOf('{parked}');
    for (const key of ['spread:{parked}', 'spread:{parked}:deadlines', 'spread:{parked}:id:p']) expect(await cluster.slotOf(key)).toBe(tag);
  });
});
