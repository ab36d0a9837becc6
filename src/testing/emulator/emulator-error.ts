/**
 * The codes a `FakeSvcError` carries. As everywhere in this package, the code is the contract and
 * the message is for people; messages never quote a token or a webhook secret.
 */
export const fakeSvcErrorCodes = [
  /** An option of `createFakeSvc` is of the wrong kind or out of its bounds. */
  'invalid_option',
  /** A control call named a board, bot or webhook the emulator does not have. */
  'not_found',
  /** A control call's input is refused (an unknown event type, a negative duration, …). */
  'invalid_input',
  /** `advance()` was called on the real clock, which only time moves. */
  'clock_not_manual',
  /** An assertion of the audit failed: a delivery never answered 2xx, a double handling, an order break. */
  'audit_failed',
  /** The emulator was closed. */
  'closed',
] as const;

/** The stable code of a `FakeSvcError`. */
export type FakeSvcErrorCode = (typeof fakeSvcErrorCodes)[number];

/** An error of the svc emulator (`createFakeSvc`): a bad option or control call, or a failed audit assertion. */
export class FakeSvcError extends Error {
  override readonly name = 'FakeSvcError';
  /** What went wrong, stable across versions. */
  readonly code: FakeSvcErrorCode;

  constructor(code: FakeSvcErrorCode, message: string) {
    super(`svc emulator: ${message}`);
    this.code = code;
  }
}
