import { SvcWebhookError, isSvcWebhookError, type ErrorCode } from '../../src/errors';

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

/** The code of the SvcWebhookError that `work` throws or rejects with; undefined when it succeeds, and a text naming any other error. */
export async function codeOf(work: () => unknown): Promise<string | undefined> {
  try {
    await work();
    return undefined;
  } catch (err) {
    return isSvcWebhookError(err) ? err.code : `not an SvcWebhookError: ${String(err)}`;
  }
}
