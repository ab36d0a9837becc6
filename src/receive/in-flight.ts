import type { Slot } from './arrival';

/**
 * Deliveries the receiver is still working on: answered or not, with handlers running or a commit
 * being retried after the answer. `close()` waits for them.
 */
export class InFlight {
  private count = 0;
  private closing = false;
  private readonly drainWaiters: Array<() => void> = [];

  /** True once close() was called: new deliveries are refused. */
  get isClosing(): boolean {
    return this.closing;
  }

  /** One delivery comes in: it counts until its slot is released, or the work it was handed over to settles. */
  open(): Slot {
    this.count++;
    let owned = true;
    const leave = () => {
      if (--this.count === 0 && this.closing) for (const resolve of this.drainWaiters.splice(0)) resolve();
    };
    return {
      keepUntil(work) {
        owned = false;
        void work.catch(() => undefined).finally(leave);
      },
      release() {
        if (!owned) return;
        owned = false;
        leave();
      },
    };
  }

  /** Stops taking deliveries and resolves when every one in flight has settled. */
  close(): Promise<void> {
    this.closing = true;
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }
}
