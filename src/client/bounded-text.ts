/**
 * The most of an answer the client reads. svc's answers are small (a webhook's state, a version);
 * a larger one is refused as it arrives, never held whole: a 256 MB answer would otherwise take
 * about a gigabyte and stall the event loop while it is decoded and parsed.
 */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** The body as text, or undefined once it is longer than `maxBytes` (the rest is not read). */
export async function boundedText(response: Response, maxBytes: number): Promise<string | undefined> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let read = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    read += value.byteLength;
    if (read > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    text += decoder.decode(value, { stream: true });
  }
}
