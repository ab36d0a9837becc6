import { mkdir, open, readFile, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { decodeRecord, encodeRecord, type IncomingDelivery, type StoredDelivery } from './relay-record';
import { sameDeliveryId, sequenceRef, type RelayStore, type Retention } from './relay-store';

/**
 * The embedded store: one JSON line per delivery appended to `deliveries.jsonl` under the data
 * directory and fsync'd before `append` resolves, so a delivery svc was told is stored survives a
 * crash (SIGKILL, power loss). The retained deliveries are also held in memory, bounded by the
 * retention's count. Pruning rewrites the file (a new file, fsync'd, renamed over the old one),
 * starting with a line that keeps the next sequence number, so numbers never go back. A data file
 * removed or replaced while the relay runs is written anew from memory before the next append (an
 * append to the removed file would be lost at the next start); when that fails, the append fails.
 */

export const DATA_FILE = 'deliveries.jsonl';

/** What was found in the data file at start. */
export interface LoadReport {
  readonly kept: number;
  /** A last line without its newline: a write a crash cut short, dropped. */
  readonly tornTail: boolean;
  /** Line numbers (1-based) that were not a delivery, skipped. */
  readonly corruptLines: readonly number[];
  /** Where the file with corrupt lines was kept before it was rewritten without them. */
  readonly setAside?: string;
}

interface Loaded {
  records: StoredDelivery[];
  next: number;
  report: LoadReport;
  /** The bytes of the file that are whole lines. */
  goodLength: number;
}

function parseFile(text: string): Loaded {
  const lines = text.split('\n');
  // After the last newline: '' for a whole file, else a torn last line.
  const tail = lines.pop() ?? '';
  const records: StoredDelivery[] = [];
  const corruptLines: number[] = [];
  let next = 1;
  lines.forEach((line, i) => {
    if (line === '') return;
    const meta = /^\{"next":(\d{1,15})\}$/.exec(line);
    if (meta !== null) {
      next = Math.max(next, Number(meta[1]));
      return;
    }
    const record = decodeRecord(line);
    if (record === undefined) corruptLines.push(i + 1);
    else {
      records.push(record);
      next = Math.max(next, record.seq + 1);
    }
  });
  return {
    records,
    next,
    goodLength: Buffer.byteLength(text) - Buffer.byteLength(tail),
    report: { kept: records.length, tornTail: tail !== '', corruptLines },
  };
}

/** A new or renamed file is durable once its directory is synced too. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export class FileStore implements RelayStore {
  readonly description: string;
  private chain: Promise<unknown> = Promise.resolve();

  private handle: FileHandle;
  private records: StoredDelivery[];
  private next: number;

  private constructor(
    private readonly file: string,
    opened: { handle: FileHandle; records: StoredDelivery[]; next: number },
    private readonly retention: Retention,
  ) {
    this.handle = opened.handle;
    this.records = opened.records;
    this.next = opened.next;
    this.description = `file ${file}`;
  }

  /** Opens (or creates) the data file, dropping a torn last line and setting corrupt lines aside. */
  static async open(dir: string, retention: Retention, nowMs: number): Promise<{ store: FileStore; report: LoadReport }> {
    await mkdir(dir, { recursive: true });
    const file = join(dir, DATA_FILE);
    let text = '';
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const loaded = parseFile(text);
    let report = loaded.report;
    const handle = await open(file, 'a+');
    await syncDir(dir);
    const store = new FileStore(file, { handle, records: loaded.records, next: loaded.next }, retention);
    if (report.corruptLines.length > 0) {
      // The evidence is kept beside the data; the store goes on with what it could read.
      const setAside = `${file}.corrupt-${nowMs}`;
      await handle.close();
      await rename(file, setAside);
      store.handle = await open(file, 'a+');
      await store.rewrite();
      report = { ...report, setAside };
    } else if (report.tornTail) {
      await handle.truncate(loaded.goodLength);
      await handle.sync();
    }
    await store.prune(nowMs);
    return { store, report };
  }

  append(delivery: IncomingDelivery): Promise<StoredDelivery> {
    return this.serial(async () => {
      if (!(await this.stillTheFile())) await this.rewrite();
      const record: StoredDelivery = { seq: this.next, ...delivery };
      await this.handle.appendFile(`${encodeRecord(record)}\n`);
      await this.handle.datasync();
      this.next++;
      this.records.push(record);
      return record;
    });
  }

  after(seq: number, limit: number): Promise<StoredDelivery[]> {
    const records = this.records;
    // Sequence numbers ascend: find the first one above `seq` by bisection.
    let lo = 0;
    let hi = records.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (records[mid]!.seq <= seq) lo = mid + 1;
      else hi = mid;
    }
    return Promise.resolve(records.slice(lo, lo + limit));
  }

  find(ref: string): Promise<StoredDelivery | undefined> {
    const seq = sequenceRef(ref);
    const found = seq === undefined ? [...this.records].reverse().find((r) => sameDeliveryId(r.id, ref)) : this.records.find((r) => r.seq === seq);
    return Promise.resolve(found);
  }

  lastSeq(): Promise<number> {
    return Promise.resolve(this.next - 1);
  }

  prune(nowMs: number): Promise<number> {
    return this.serial(async () => {
      const cutoff = nowMs - this.retention.retentionMs;
      let drop = 0;
      while (drop < this.records.length && this.records[drop]!.receivedAt < cutoff) drop++;
      drop = Math.max(drop, this.records.length - this.retention.maxDeliveries);
      if (drop === 0) return 0;
      this.records = this.records.slice(drop);
      await this.rewrite();
      return drop;
    });
  }

  close(): Promise<void> {
    return this.serial(() => this.handle.close());
  }

  /** Whether the data file's path still names the file this store appends to. */
  private async stillTheFile(): Promise<boolean> {
    const [named, held] = await Promise.all([stat(this.file).catch(() => undefined), this.handle.stat()]);
    return named !== undefined && named.isFile() && named.ino === held.ino && named.dev === held.dev;
  }

  /**
   * Writes the kept records to a new file, fsync'd, renamed over the data file. When that fails
   * (the path is a directory, the data directory is gone), the store keeps appending nowhere new:
   * the caller's promise rejects and the relay answers 503.
   */
  private async rewrite(): Promise<void> {
    const temp = `${this.file}.tmp`;
    const out = await open(temp, 'w');
    try {
      await out.writeFile([`{"next":${this.next}}`, ...this.records.map(encodeRecord), ''].join('\n'));
      await out.sync();
    } finally {
      await out.close();
    }
    try {
      await rename(temp, this.file);
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      throw err;
    }
    const previous = this.handle;
    this.handle = await open(this.file, 'a+');
    await previous.close();
    await syncDir(dirname(this.file));
  }

  /** Appends and rewrites run one at a time, in order. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.chain.then(work, work);
    this.chain = run.catch(() => undefined);
    return run;
  }
}
