import { SvcWebhookError } from '../errors';
import { headerText, type HeaderSource } from '../internal/headers';

/** Refuses a body the sender never sends: anything but JSON, or any content coding. */
export function checkContentHeaders(headers: HeaderSource): void {
  const encoding = headerText(headers, 'content-encoding');
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    throw new SvcWebhookError('content_encoding_unsupported', 'Content-Encoding is not supported; send the JSON body as it is');
  }
  const type = headerText(headers, 'content-type');
  const mediaType = type === undefined ? '' : type.split(';', 1)[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new SvcWebhookError('unsupported_media_type', 'Content-Type must be application/json');
  }
}
