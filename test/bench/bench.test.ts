/**
 * The benchmark's own arithmetic and inputs: a generated repository is valid and has the promised
 * shape, and the emulator-log analysis counts only requests sent inside a Retry-After window.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyLogFigures, insideRetryAfter, naiveRequests, requestBudget } from '../../src/bench/analysis.js';
import { generateRepository } from '../../src/bench/generate.js';
import type { RequestLogEntry } from '../../src/emulator/server.js';
import { validateManifests } from '../../src/engine/reconcile.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const entry = (ts: number, status = 200, method = 'POST', durationMs = 1): RequestLogEntry => ({
  method,
  path: '/api/v1/open-api',
  query: '',
  status,
  durationMs,
  ts,
});

describe('generated repository', () => {
  it('validates offline and holds N entities, N/10 edges from N/50 callers and every other kind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cortex-sync-bench-test-'));
    dirs.push(dir);
    const shape = await generateRepository(dir, { entities: 500 });
    const result = await validateManifests(dir, { signal: new AbortController().signal });
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const count = (kind: string) => result.objects.filter((o) => o.kind === kind).length;
    expect(count('entity')).toBe(500);
    expect(count('dependency')).toBe(50);
    const callers = result.objects
      .filter((o) => o.kind === 'dependency')
      .map((o) => (o.spec as { callerTag: string }).callerTag);
    expect(new Set(callers).size).toBe(10);
    expect(shape.callers).toBe(10);
    expect(count('entity-type')).toBe(shape.entityTypes);
    expect(count('catalog-page')).toBe(shape.catalogPages);
    expect(count('initiative')).toBe(shape.initiatives);
    expect(count('scaffolder-template')).toBe(shape.scaffolderTemplates);
    expect(naiveRequests(shape)).toBe(500 + 3 + 3 + 3 + 3 + 10);
    expect(requestBudget(shape).total).toBe(1 + 6 + 10);
  });
});

describe('Retry-After windows in the emulator log', () => {
  it('counts a request that arrives after the 429 was answered and before Retry-After elapsed', () => {
    const log = [entry(1000, 429), entry(1030), entry(1500), entry(2100)];
    // 1030 is within the 50 ms allowance (already in flight); 1500 is inside; 2100 is after.
    expect(insideRetryAfter(log, 1000, 50)).toBe(1);
  });

  it('finds nothing without 429s, and rates writes over the write phase', () => {
    const log = [entry(0, 200, 'GET'), ...Array.from({ length: 101 }, (_, i) => entry(1000 + i * 10))];
    const figures = applyLogFigures(log, 6000);
    expect(figures.insideRetryAfter).toBe(0);
    expect(figures.writes).toBe(101);
    expect(figures.writesPerMinute).toBeCloseTo(6000, 5);
    expect(figures.failedResponses).toBe(0);
  });

  it("leaves the lease write before the plan's reads out of the write phase", () => {
    // A lease write at 0, its confirming read a second later, the plan's reads, then the changes.
    const log = [
      entry(0, 200, 'POST'),
      entry(1000, 200, 'GET'),
      entry(1500, 200, 'GET'),
      ...Array.from({ length: 101 }, (_, i) => entry(2000 + i * 10)),
    ];
    const figures = applyLogFigures(log, 6000);
    expect(figures.writes).toBe(101);
    expect(figures.writeSpanMs).toBe(1000);
    expect(figures.writesPerMinute).toBeCloseTo(6000, 5);
  });
});
