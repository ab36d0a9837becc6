import type { StoreKind } from '../store-kind';
import { postgresKind } from './postgres';
import { redisKind } from './redis';

/** The stores the fault test can run against, by name. */
export const storeKinds: ReadonlyMap<string, StoreKind> = new Map([redisKind, postgresKind].map((kind) => [kind.name, kind]));

export function storeKind(name: string | undefined): StoreKind {
  const kind = storeKinds.get(name ?? '');
  if (kind === undefined) throw new Error(`unknown store "${name}"; known: ${[...storeKinds.keys()].join(', ')}`);
  return kind;
}
