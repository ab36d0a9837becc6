import { booleanOption, customOption, functionOption, numberOption } from '../internal/checks/option-table';

/** The longest timeout a timer takes (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** The declaration of every `SvcClient` option (docs/options.md is made from it). */
export const SVC_CLIENT_OPTIONS = {
  baseUrl: customOption<unknown>({
    doc: "svc's base address, e.g. `https://acme.svc.example.com`; the route paths are appended to it.",
    type: 'string | URL',
    bounds: 'required; https:// (or http:// to this machine)',
    read: (value) => value,
  }),
  token: customOption<unknown>({
    doc: 'The bearer token: a bot token for the bot webhook routes, or the token of a person with MANAGE_BOARD and MANAGE_INTEGRATIONS for the board routes.',
    type: 'string',
    defaultText: 'none (only `version()` works)',
    read: (value) => value,
  }),
  timeoutMs: numberOption({ doc: 'Per-call deadline (a ping waits for your receiver, up to 10 s).', unit: 'ms', default: 30_000, min: 1, max: MAX_TIMEOUT_MS }),
  fetch: functionOption<typeof fetch>({ doc: 'A fetch implementation.', type: 'typeof fetch', defaultText: 'the global `fetch`' }),
  allowInsecureHttp: booleanOption({
    doc: 'Send the token over plain `http://` to a host other than this machine: anyone on the way could read it. Only for a trusted private network.',
    default: false,
  }),
};
