import type { AttemptOutcome } from './post-delivery';

/**
 * What to check after a failed send, for the usual mistakes: a wrong path or method, a secret
 * that differs from the receiver's, a clock that is off, a receiver that is not running. Each hint
 * is one line; none repeats a secret or a signature.
 */
export function sendHints(outcome: AttemptOutcome, url: string): string[] {
  const target = new URL(url);
  if (outcome.errorCode === 'ECONNREFUSED') {
    const port = target.port || (target.protocol === 'https:' ? '443' : '80');
    return [`nothing accepts connections at ${target.hostname}:${port}: is the receiver running, and listening on port ${port}?`];
  }
  if (outcome.errorCode === 'ENOTFOUND' || outcome.errorCode === 'EAI_AGAIN') return [`the host ${target.hostname} was not found: check the host in --url`];
  if (outcome.status === 404 || outcome.status === 405) {
    return [
      `nothing takes POST ${target.pathname} there: check the path the webhook is mounted at (by default /webhooks/board or /webhooks/bot) and that the route accepts POST`,
    ];
  }
  switch (outcome.code) {
    case 'signature_mismatch':
      return [
        "the receiver's webhook secret is not the one this command signed with (--secret, --secret-file, SVC_BOARD_WEBHOOK_SECRET or SVC_BOT_WEBHOOK_SECRET), or something between changed the body",
        'to see why a request the receiver got fails, save its body and headers and run: npx svc-webhooks verify --body body.json --headers headers.txt --secret "<the receiver\'s secret>"',
      ];
    case 'timestamp_out_of_tolerance':
      return ["the receiver's clock and this machine's differ by more than its tolerance (300 s by default): check both clocks"];
    case 'signature_missing':
    case 'signature_malformed':
      return ['the receiver expects the other webhook: the board one signs with v1=, the bot one with sha256= (use --webhook board|bot for a file)'];
    case 'unsupported_media_type':
    case 'body_already_consumed':
      return ['a body parser ran before the webhook: mount the webhook before express.json() or any other body parser'];
    default:
      return [];
  }
}
