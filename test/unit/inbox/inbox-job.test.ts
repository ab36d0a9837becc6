import { deliveryIdOf, jobIdOf, keptHeaders } from '../../../src/inbox/inbox-job';

describe('the job of a delivery in the inbox', () => {
  it('has one BullMQ id per delivery id, without ":" and never integer-like, that maps back', () => {
    for (const id of ['3f1c0a9e-7a43-4c5e-9b1d-2f0e8c6a5b4d', 'a:b', '100%:%3A', '42', '']) {
      const jobId = jobIdOf(id);
      expect(jobId.startsWith('d-')).toBe(true);
      expect(jobId).not.toContain(':');
      expect(deliveryIdOf(jobId)).toBe(id);
    }
    expect(jobIdOf('a:b%c:')).toBe('d-a%3Ab%25c%3A');
    expect(jobIdOf('%3A')).not.toBe(jobIdOf(':'));
  });

  it('keeps the delivery headers the worker needs, as sent, and never the signature', () => {
    const req = {
      rawHeaders: [
        'Content-Type',
        'application/json',
        'X-Svc-Delivery',
        'd1',
        'X-Svc-Event',
        'task.created',
        'X-Svc-Timestamp',
        '1700000000',
        'User-Agent',
        'a',
        'user-agent',
        'b',
        'X-Svc-Signature',
        'v1=aa',
        'Host',
        'h',
      ],
      headers: {},
    };
    expect(keptHeaders(req)).toEqual({
      'content-type': 'application/json',
      'x-svc-delivery': 'd1',
      'x-svc-event': 'task.created',
      'x-svc-timestamp': '1700000000',
      'user-agent': 'a, b',
    });
    expect(keptHeaders({ rawHeaders: ['Host', 'h'], headers: {} })).toEqual({});
  });
});
