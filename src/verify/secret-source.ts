import type { KeyObject } from 'node:crypto';
import type { SecretLookup } from './secret-resolver';

/** One fixed set of keys, or a lookup of each board's (bot's) own. */
export type SecretSource = { readonly keys: readonly KeyObject[]; readonly lookup?: undefined } | { readonly keys?: undefined; readonly lookup: SecretLookup };
