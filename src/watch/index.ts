/**
 * `svc-webhooks/watch`: the webhook watcher, which reports each webhook svc fails, disables or
 * pauses, and can re-enable it (docs/never-silently-disabled.md). It reads svc through the setup
 * client of `svc-webhooks/client`.
 *
 * @module svc-webhooks/watch
 */
export { watchWebhooks } from './watch-webhooks';
export type { WatchOptions, WatchBotOptions, WatchClient, BoardList, ProbeTarget } from './watch-options';
export type { ExpectUrl } from './expect-url';
export type { WebhookHealth, WebhookStatus, WebhookChange, WebhookWatcher, WatchedWebhook, SvcTime } from './watch-types';
/** Every health a webhook can be reported in, in the order the CLI sorts them. */
export { webhookHealths } from './watch-types';
