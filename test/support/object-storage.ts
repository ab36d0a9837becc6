import type { DedupObjectNamespace } from '../../src/dedup/durable-object-store';
import { SvcDedupObject, type DedupObjectStorage } from '../../src/dedup/durable-object-claims';

/**
 * A Durable Object's storage in memory, as the runtime's behaves for what the object uses: keys
 * listed in order, one alarm. The real one is exercised in workerd (test/runtimes/workerd-durable-object.test.ts).
 */
export class ObjectStorage implements DedupObjectStorage {
  readonly records = new Map<string, unknown>();
  alarmAt: number | null = null;
  writes = 0;

  async get<T>(key: string): Promise<T | undefined> {
    return this.records.get(key) as T | undefined;
  }

  async put<T>(key: string, value: T): Promise<void> {
    this.writes++;
    this.records.set(key, structuredClone(value));
  }

  async delete(key: string): Promise<boolean> {
    return this.records.delete(key);
  }

  async list<T>(options: { startAfter?: string; limit: number }): Promise<Map<string, T>> {
    const keys = [...this.records.keys()].sort().filter((k) => options.startAfter === undefined || k > options.startAfter);
    return new Map(keys.slice(0, options.limit).map((k) => [k, this.records.get(k) as T]));
  }

  async getAlarm(): Promise<number | null> {
    return this.alarmAt;
  }

  async setAlarm(time: number): Promise<void> {
    this.alarmAt = time;
  }
}

/**
 * A namespace of objects in this process: one `SvcDedupObject` per name, reached through `fetch` as
 * a Worker's stub is; `answer` may stand in for an object's answer (a slow or broken object). An
 * object here runs one request at a time; the runtime's input gates give the same to a read and the
 * write after it, which is what workerd shows in test/runtimes/workerd-durable-object.test.ts.
 */
export function objectNamespace(answer?: (object: SvcDedupObject, request: Request, name: string) => Promise<Response>) {
  const objects = new Map<string, { object: SvcDedupObject; storage: ObjectStorage; queue: Promise<unknown> }>();
  const namespace: DedupObjectNamespace = {
    idFromName: (name: string) => ({ name }),
    get: ((id: { name: string }) => ({
      fetch: async (input: string, init?: RequestInit) => {
        let entry = objects.get(id.name);
        if (entry === undefined) {
          const storage = new ObjectStorage();
          entry = { object: new SvcDedupObject({ storage }), storage, queue: Promise.resolve() };
          objects.set(id.name, entry);
        }
        const request = new Request(input, init);
        const { object } = entry;
        if (answer !== undefined) return answer(object, request, id.name);
        const answered = entry.queue.then(() => object.fetch(request));
        entry.queue = answered.catch(() => undefined);
        return answered;
      },
    })) as DedupObjectNamespace['get'],
  };
  return { namespace, objects };
}
