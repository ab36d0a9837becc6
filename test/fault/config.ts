/**
 * The fault test's numbers. svc's clock is compressed for the sender only (its retry schedule and
 * the day a delivery lives); the receivers run on real time (their handler deadline, the claim's
 * lease, the signature's 300 s tolerance), as they do in production.
 */
export const config = {
  /** Distinct deliveries, each a new board event. */
  deliveries: 3000,
  /** Real ms over which the sender sends them for the first time. */
  emitMs: 24_000,
  /** svc ms per real ms: svc's day passes in 60 s, its first retry comes 42 ms after a failure. */
  clockScale: 1440,
  /** Share of delivered deliveries that the sender delivers again later (svc repeats). */
  repeatShare: 0.15,
  /** Latest repeat, in svc ms after the delivery succeeded. */
  repeatWithinSvcMs: 3 * 60 * 60_000,
  /** Share of deliveries sent to two receivers at once on their first attempt. */
  concurrentShare: 0.03,
  /** Share of repeats that spell the delivery id in upper case in X-Svc-Delivery. */
  upperCaseShare: 0.5,
  /** Most requests the sender has in flight at once. */
  maxInFlight: 64,
  /** The sender's wait for an answer, in real ms (svc waits 10 s). */
  requestTimeoutMs: 5_000,
  /** Receiver options: handler deadline and claim lease (real ms). */
  handlerTimeoutMs: 1_000,
  leaseMs: 5_000,
  /** Handler behaviour: its side effect after 2-20 ms, a few outlive the deadline, a few fail first. */
  slowShare: 0.01,
  slowMs: [1_200, 1_600] as const,
  failShare: 0.03,
  /** Work a handler still does after its side effect (the window between effect and commit widens). */
  afterEffectMs: [0, 15] as const,
  /** Longest real time the whole run may take before it is stopped as failed. */
  budgetMs: 150_000,
  secret: 'fault-test-board-secret-0123456789',
} as const;

export type Mount = 'express' | 'node';

/** The receivers: slot i always listens on the same port, whichever process serves it. */
export const mounts: readonly Mount[] = ['express', 'node', 'express'];
