import { SvcWebhookError, type ErrorCode } from '../../src/errors';

/** The code of the SvcWebhookError that `run` throws; fails the test when it throws none or another error. */
export function refusal(run: () => unknown): ErrorCode {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(SvcWebhookError);
    return (err as SvcWebhookError).code;
  }
  throw new Error('no refusal');
}
