import { readFileSync, renameSync, writeFileSync } from 'node:fs';

/**
 * The listener's cursor: the sequence number of the last delivery it handed on (or skipped by its
 * filters), kept in a small file so that a restarted listener resumes where it stopped. The file
 * names its relay: a cursor of another relay is not used.
 */
export class CursorFile {
  private seq: number | undefined;

  constructor(
    private readonly path: string,
    private readonly relay: string,
  ) {
    try {
      const saved = JSON.parse(readFileSync(path, 'utf8')) as { relay?: unknown; seq?: unknown };
      if (saved.relay === relay && Number.isSafeInteger(saved.seq) && (saved.seq as number) >= 0) this.seq = saved.seq as number;
    } catch {
      // No cursor yet (or not one of ours): the relay says where to start.
    }
  }

  get value(): number | undefined {
    return this.seq;
  }

  /** Moves the cursor and writes it: a new file renamed over the old, so a crash leaves one or the other. */
  save(seq: number): void {
    this.seq = seq;
    const temp = `${this.path}.tmp`;
    writeFileSync(temp, `${JSON.stringify({ relay: this.relay, seq })}\n`);
    renameSync(temp, this.path);
  }
}
