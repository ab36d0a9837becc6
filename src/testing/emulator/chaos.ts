import { FakeSvcError } from './emulator-error';

/**
 * Faults svc's delivery is allowed to show (at least once, in any order), each off by default.
 * Rates are fractions of attempts, from 0 to 1; the choices follow `seed`, so a run is reproducible.
 */
export interface ChaosOptions {
  /** Seed of the choices; default 1. */
  seed?: number;
  /** Fraction of deliveries answered 2xx that svc sends once more afterwards (a repeat). */
  duplicateRate?: number;
  /** Deliveries ready at once are shuffled in blocks of this many (none moves further than window − 1 places); 1 keeps their order. */
  reorderWindow?: number;
  /** Fraction of attempts sent as two copies at the same time. */
  concurrentCopyRate?: number;
  /** Fraction of attempts whose body is sent in two halves, `slowMs` apart. */
  slowRate?: number;
  /** The pause inside a slow attempt, in real ms; default 2000. */
  slowMs?: number;
  /** Fraction of attempts whose connection svc drops halfway through the body (a failed attempt, retried). */
  dropRate?: number;
}

/** Chaos options with every default filled in and every bound checked. */
export type Chaos = Required<ChaosOptions>;

function rate(options: ChaosOptions, name: keyof ChaosOptions): number {
  const value = options[name] ?? 0;
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) throw new FakeSvcError('invalid_option', `chaos.${name} is a fraction from 0 to 1`);
  return value;
}

function whole(value: unknown, what: string, bounds: { min: number; max: number }): number {
  if (!Number.isSafeInteger(value) || (value as number) < bounds.min || (value as number) > bounds.max) {
    throw new FakeSvcError('invalid_option', `${what} is a whole number from ${bounds.min} to ${bounds.max}`);
  }
  return value as number;
}

/** Checks `options` once, at setup, and fills in the defaults (no chaos at all). */
export function readChaos(options: ChaosOptions = {}): Chaos {
  if (typeof options !== 'object' || options === null) throw new FakeSvcError('invalid_option', 'chaos is an object of rates');
  return {
    seed: whole(options.seed ?? 1, 'chaos.seed', { min: 0, max: 0xffffffff }),
    duplicateRate: rate(options, 'duplicateRate'),
    reorderWindow: whole(options.reorderWindow ?? 1, 'chaos.reorderWindow', { min: 1, max: 10_000 }),
    concurrentCopyRate: rate(options, 'concurrentCopyRate'),
    slowRate: rate(options, 'slowRate'),
    slowMs: whole(options.slowMs ?? 2000, 'chaos.slowMs', { min: 0, max: 60_000 }),
    dropRate: rate(options, 'dropRate'),
  };
}
