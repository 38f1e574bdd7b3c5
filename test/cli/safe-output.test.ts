import { describe, expect, it } from 'vitest';
import { createApplyProgress } from '../../src/cli/progress.js';
import { createOutputRedaction, withPrintableEvents } from '../../src/cli/safe-output.js';
import { systemClock } from '../../src/engine/context.js';
import { ANSI, capture } from './run.js';

describe('progress lines', () => {
  it('a failure of an object whose id and error hold control characters is one escaped line', () => {
    const out = capture(false);
    const progress = withPrintableEvents(createApplyProgress({ stream: out.stream, tty: false, clock: systemClock }));
    progress.emit({
      type: 'plan.ready',
      summary: { create: 1, update: 0, delete: 0, archive: 0, noop: 0 },
      pending: 1,
    });
    progress.start();
    progress.emit({
      type: 'operation.done',
      kind: 'initiative',
      id: 'Readiness\n::error file=a::b',
      action: 'create',
      outcome: 'failed',
      status: 400,
      durationMs: 1,
      error: 'bad \u001b[2K name\r\n::warning::x',
    });
    progress.emit({
      type: 'request.waiting',
      operation: '/catalog/a\nb',
      method: 'GET',
      host: 'h\u001b[1A',
      waitedMs: 5000,
      attempt: 1,
      maxAttempts: 5,
    });
    progress.finish();
    const text = out.text();
    expect(text).not.toMatch(/^::/m);
    expect(text).not.toMatch(ANSI);
    expect(text).toContain(
      '✗ create initiative/Readiness\\n::error file=a::b failed (HTTP 400): bad \\x1b[2K name\\r\\n::warning::x',
    );
    expect(text).toContain('h\\x1b[1A to answer GET /catalog/a\\nb');
  });
});

describe('output redaction', () => {
  it('redacts a secret added after the stream was wrapped, and keeps isTTY', () => {
    const out = capture(true);
    const redaction = createOutputRedaction();
    const stream = redaction.wrap(out.stream);
    expect(stream.isTTY).toBe(true);
    stream.write('before k3y-0123456789abcdef\n');
    redaction.add('k3y-0123456789abcdef');
    stream.write('after k3y-0123456789abcdef and K3Y-01234567\n');
    expect(out.text()).toBe('before k3y-0123456789abcdef\nafter [REDACTED] and [REDACTED]\n');
  });
});
