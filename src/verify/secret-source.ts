import type { MacKey } from './mac';
import type { SecretLookup } from './secret-resolver';

/** One fixed set of keys, or a lookup of each board's (bot's) own. */
export type SecretSource = { readonly keys: readonly MacKey[]; readonly lookup?: undefined } | { readonly keys?: undefined; readonly lookup: SecretLookup };
