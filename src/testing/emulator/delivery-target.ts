import { FakeSvcError } from './emulator-error';
import { hostOf, isLoopback } from './rules';

/**
 * Where the emulator really sends a delivery. svc only takes public https urls, which a test
 * cannot serve: `forward` maps a registered origin (`https://hooks.example.com`) to a local one
 * (`http://127.0.0.1:3000`), as a tunnel would. After that, the target's host must be on the
 * allowlist (default: this machine only), so the emulator never sends beyond it.
 */
export interface TargetRules {
  readonly forward: ReadonlyMap<string, URL>;
  /** Hosts (lowercase, IPv6 without brackets) deliveries may go to; `loopback` for this machine. */
  readonly allowedHosts: ReadonlySet<string>;
}

/** Checks `forward` and `allowedHosts` once, at setup. */
export function readTargetRules(forward: Record<string, string> = {}, allowedHosts: readonly string[] = ['loopback']): TargetRules {
  const map = new Map<string, URL>();
  if (typeof forward !== 'object' || forward === null) throw new FakeSvcError('invalid_option', 'forward maps registered origins to local ones');
  for (const [from, to] of Object.entries(forward)) {
    let origin: string;
    let target: URL;
    try {
      origin = new URL(from).origin;
      target = new URL(to);
    } catch {
      throw new FakeSvcError('invalid_option', 'every key and value of forward is an absolute URL');
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new FakeSvcError('invalid_option', 'forward targets use http:// or https://');
    map.set(origin, target);
  }
  if (!Array.isArray(allowedHosts) || !allowedHosts.every((h) => typeof h === 'string' && h !== '')) {
    throw new FakeSvcError('invalid_option', 'allowedHosts is a list of host names or addresses');
  }
  return { forward: map, allowedHosts: new Set(allowedHosts.map((h) => h.replace(/^\[|\]$/g, '').toLowerCase())) };
}

/** The URL a delivery to the registered `url` goes to, or why it is not sent at all. */
export function deliveryTarget(url: string, rules: TargetRules): { target: URL } | { refused: string } {
  const registered = new URL(url);
  const base = rules.forward.get(registered.origin);
  const target = base === undefined ? registered : new URL(`${base.pathname.replace(/\/$/, '')}${registered.pathname}${registered.search}`, base);
  const host = hostOf(target);
  const allowed = rules.allowedHosts.has(host) || (rules.allowedHosts.has('loopback') && isLoopback(host));
  return allowed ? { target } : { refused: `not sent: ${host} is outside the emulator's allowedHosts` };
}
