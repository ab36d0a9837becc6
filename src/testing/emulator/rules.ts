import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * svc's rules for what the webhook routes accept, written from the spec apart from the setup
 * client's own checks, so that tests of the client check it rather than mirror it.
 */

/** A bot token: `svc_bot_<lowercase uuid>_<43 base64url characters>`, nothing after. */
export const BOT_TOKEN = /^svc_bot_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;

/** The bot id inside a well-formed bot token, or undefined for anything else. */
export function botIdOf(token: string): string | undefined {
  return BOT_TOKEN.exec(token)?.[1];
}

/** The bearer token of an Authorization header, or undefined when there is none. */
export function bearerOf(header: string | undefined): string | undefined {
  const match = /^Bearer ([^\s]+)$/.exec(header ?? '');
  return match?.[1];
}

/** Why `secret` is refused (16 to 256 characters), or undefined when it is accepted. */
export function secretProblem(secret: unknown): string | undefined {
  if (typeof secret !== 'string') return 'secret must be a string of 16 to 256 characters';
  if (secret.length < 16 || secret.length > 256) return `secret must be 16 to 256 characters, not ${secret.length}`;
  return undefined;
}

const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** A URL's host without IPv6 brackets or a trailing dot, lowercased. */
export function hostOf(url: URL): string {
  return url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

/** Whether `host` (as `hostOf` gives it) is this machine: `localhost`, 127.0.0.0/8 or ::1. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIPv4(host)) return LOOPBACK.check(host, 'ipv4');
  return isIPv6(host) && LOOPBACK.check(host, 'ipv6');
}

function nonPublic(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) return true;
  if (isIPv4(host)) return NON_PUBLIC.check(host, 'ipv4');
  if (isIPv6(host)) return NON_PUBLIC.check(host, 'ipv6');
  return !host.includes('.');
}

/**
 * Why svc refuses `value` as a webhook url (https to a public address), or undefined. With
 * `allowLoopback`, `http://` or `https://` to this machine (localhost, 127.0.0.0/8, ::1) is
 * accepted too, so a test can register its own server; other private addresses stay refused.
 */
export function urlProblem(value: unknown, allowLoopback: boolean): string | undefined {
  if (typeof value !== 'string' || value === '') return 'url is required';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'url is not an absolute URL';
  }
  if (url.username !== '' || url.password !== '') return 'url must not carry credentials';
  const host = hostOf(url);
  if (allowLoopback && isLoopback(host) && (url.protocol === 'http:' || url.protocol === 'https:')) return undefined;
  if (url.protocol !== 'https:') return 'url must use https://';
  if (nonPublic(host)) return 'url must point to a public address; private networks, localhost and private IP ranges are refused';
  return undefined;
}
