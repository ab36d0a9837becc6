import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { SvcClientError } from './svc-client-error';

interface Range {
  readonly network: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
  readonly label: string;
}

/**
 * Addresses svc refuses as webhook targets: private, loopback, link-local and other ranges that
 * are not reachable publicly. IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) are checked against
 * the IPv4 ranges by BlockList itself.
 */
const NON_PUBLIC: readonly Range[] = [
  { network: '0.0.0.0', prefix: 8, family: 'ipv4', label: '"this network" 0.0.0.0/8' },
  { network: '10.0.0.0', prefix: 8, family: 'ipv4', label: 'private range 10.0.0.0/8' },
  { network: '100.64.0.0', prefix: 10, family: 'ipv4', label: 'shared address space 100.64.0.0/10' },
  { network: '127.0.0.0', prefix: 8, family: 'ipv4', label: 'loopback range 127.0.0.0/8' },
  { network: '169.254.0.0', prefix: 16, family: 'ipv4', label: 'link-local range 169.254.0.0/16' },
  { network: '172.16.0.0', prefix: 12, family: 'ipv4', label: 'private range 172.16.0.0/12' },
  { network: '192.168.0.0', prefix: 16, family: 'ipv4', label: 'private range 192.168.0.0/16' },
  { network: '224.0.0.0', prefix: 4, family: 'ipv4', label: 'multicast range 224.0.0.0/4' },
  { network: '240.0.0.0', prefix: 4, family: 'ipv4', label: 'reserved range 240.0.0.0/4' },
  { network: '::', prefix: 128, family: 'ipv6', label: 'unspecified address ::' },
  { network: '::1', prefix: 128, family: 'ipv6', label: 'loopback address ::1' },
  { network: 'fc00::', prefix: 7, family: 'ipv6', label: 'unique local range fc00::/7' },
  { network: 'fe80::', prefix: 10, family: 'ipv6', label: 'link-local range fe80::/10' },
  { network: 'ff00::', prefix: 8, family: 'ipv6', label: 'multicast range ff00::/8' },
];

// One list per range, built once, so the refusal can name the range.
const RANGE_LISTS = NON_PUBLIC.map((range) => {
  const list = new BlockList();
  list.addSubnet(range.network, range.prefix, range.family);
  return { range, list };
});

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * Whether a URL's host names this machine without asking DNS: `localhost` (answered from the hosts
 * file), a loopback address (127.0.0.0/8, ::1, or IPv4-mapped ::ffff:127.x.y.z). Not `*.localhost`,
 * `localhost.` or `localhost.localdomain`: those are looked up like any name and may resolve
 * elsewhere. `hostname` is a URL's (IPv6 in brackets).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost') return true;
  if (isIPv4(host)) return LOOPBACK.check(host, 'ipv4');
  return isIPv6(host) && LOOPBACK.check(host, 'ipv6');
}

/** Names that only resolve on the local machine or a private network. */
const PRIVATE_NAME_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa'];
const LOCALHOST_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback']);

/**
 * Why svc would refuse `url` as a webhook target, or undefined when it would not. Only the URL
 * itself is checked: a public name that resolves to a private address is for svc to refuse.
 */
export function webhookUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'it is not an absolute URL';
  }
  if (parsed.protocol !== 'https:') return `it must use https:// (svc delivers webhooks only over https), not ${parsed.protocol}//`;
  // The URL parser has already normalised 127.1 or 0x7f.0.0.1 to dotted IPv4.
  const host = parsed.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (isIPv4(host) || isIPv6(host)) {
    const family = isIPv4(host) ? 'ipv4' : 'ipv6';
    const hit = RANGE_LISTS.find(({ list }) => list.check(host, family));
    return hit ? `it points to the ${hit.range.label}; svc only delivers to public addresses` : undefined;
  }
  if (LOCALHOST_NAMES.has(host) || PRIVATE_NAME_SUFFIXES.some((suffix) => host.endsWith(suffix))) {
    return `"${host}" is a local or private-network name; svc only delivers to public addresses`;
  }
  if (!host.includes('.')) return `"${host}" is a single-label name that only resolves on a private network`;
  return undefined;
}

/** Throws `invalid_url` unless svc would accept `url` as a webhook target. */
export function checkWebhookUrl(url: unknown): string {
  if (typeof url !== 'string' || url === '') throw new SvcClientError('invalid_url', 'the webhook url is required');
  const problem = webhookUrlProblem(url);
  if (problem !== undefined) throw new SvcClientError('invalid_url', `the webhook url is refused: ${problem}`);
  return url;
}
