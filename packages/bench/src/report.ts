/**
 * The benchmark's verdicts and its report: the goals the README states, each met or missed, and
 * the markdown tables printed to stdout.
 */
import type { Figure } from './figures.js';
import type { ApplyResult, MemoryResult, NoopPlanResult } from './scenarios.js';

export interface Goal {
  id: string;
  goal: string;
  measured: string;
  met: boolean;
}

/** Heap growth across repeated plans below which there is no growth (GC and JIT noise). */
export const MEMORY_NOISE_MB = 5;
export const MEMORY_NOISE_SHARE = 0.05;

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const sec = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const mb = (n: number): string => `${n.toFixed(0)} MB`;
const pct = (share: number): string => `${(share * 100).toFixed(1)} %`;
const signed = (n: number): string => `${n >= 0 ? '+' : ''}${n.toFixed(1)}`;
const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;

/** Every goal of the README, judged on the measurements. */
export const judgeGoals = (
  plans: readonly NoopPlanResult[],
  applies: readonly ApplyResult[],
  memory: MemoryResult,
): Goal[] => {
  const goals: Goal[] = [];
  const big = plans.find((p) => p.entities === 10_000) ?? plans[plans.length - 1];
  if (big) {
    const n = int(big.entities);
    goals.push(
      {
        id: 'plan-entity-reads',
        goal: `no-op plan of ${n} entities reads them in ≤ ${big.budget.entityPages} requests`,
        measured: `${big.plan.descriptorPages} descriptor pages`,
        met: big.plan.descriptorPages <= big.budget.entityPages,
      },
      {
        id: 'plan-requests',
        goal: `no-op plan of ${n} entities: ≤ ${big.budget.total} requests (${big.budget.entityPages} entity pages + ${big.budget.otherLists} other lists + ${big.budget.callers} callers)`,
        measured: `${big.plan.requests} (emulator log: ${big.plan.requestsInEmulatorLog})`,
        met: Math.max(big.plan.requests, big.plan.requestsInEmulatorLog) <= big.budget.total,
      },
      {
        id: 'plan-wall',
        goal: `no-op plan of ${n} entities: ≤ 5 s wall (whole process)`,
        measured: sec(big.plan.processWallMs),
        met: big.plan.processWallMs <= 5000,
      },
      {
        id: 'plan-vs-floor',
        goal: `no-op plan of ${n} entities: ≤ 2× the parse floor`,
        measured: `${big.planToFloor.toFixed(2)}× (medians ${sec(big.plan.wallMs)} / ${sec(big.floor.wallMs)})`,
        met: big.planToFloor <= 2,
      },
      {
        id: 'apply-one-change-requests',
        goal: `apply of one changed entity among ${n}: ≤ 2× the requests of the no-op plan`,
        measured: `${big.oneChange.requests} requests (${big.oneChange.gets} GET, ${big.oneChange.writes} writes) = ${big.oneChange.ratioToNoopPlan.toFixed(2)}× the no-op plan's ${big.oneChange.noopPlanRequests}`,
        met: big.oneChange.ratioToNoopPlan <= 2,
      },
      {
        id: 'plan-rss',
        goal: `no-op plan of ${n} entities: ≤ 300 MB peak RSS`,
        measured: mb(big.plan.maxRssMb),
        met: big.plan.maxRssMb <= 300,
      },
    );
  }
  const inBudget = applies[0];
  if (inBudget) {
    goals.push({
      id: 'apply-rate',
      goal: `apply of ${int(inBudget.changedEntities)} changed entities: ≥ 95 % of the rate budget`,
      measured: `${pct(inBudget.shareOfBudget)} (${int(inBudget.log.writesPerMinute)}/min of ${int(inBudget.emulatorPerMinute)}/min)`,
      met: inBudget.shareOfBudget >= 0.95,
    });
  }
  const failed = applies.reduce((s, a) => s + a.outcomes.failed + a.log.failedResponses, 0);
  const inside = applies.reduce((s, a) => s + a.log.insideRetryAfter + a.client.requestsStartedDuringPause, 0);
  goals.push(
    { id: 'apply-failed', goal: 'apply: 0 failed requests', measured: String(failed), met: failed === 0 },
    {
      id: 'apply-retry-after',
      goal: 'apply: 0 requests inside a Retry-After window',
      measured: `${inside} (429s received: ${applies.reduce((s, a) => s + a.log.rateLimited, 0)})`,
      met: inside === 0,
    },
    {
      id: 'memory-growth',
      goal: `no heap growth across ${memory.runs} consecutive no-op plans (< ${MEMORY_NOISE_MB} MB or < ${pct(MEMORY_NOISE_SHARE)})`,
      measured: `${signed(memory.growthMb)} MB (${pct(memory.growthShare)}); second half ${signed(memory.secondHalfGrowthMb)} MB`,
      met: memory.allNoop && (memory.growthMb < MEMORY_NOISE_MB || memory.growthShare < MEMORY_NOISE_SHARE),
    },
  );
  return goals;
};

/** Requests of an apply of one changed entity beside the no-op plan's (`NoopPlanResult.oneChange`). */
export const oneChangeFigure = (p: NoopPlanResult): Figure => ({
  id: 'apply-one-change-requests',
  figure: `apply of one changed entity among ${int(p.entities)}: requests (${p.oneChange.gets} GET, ${p.oneChange.writes} writes)`,
  value: p.oneChange.requests,
  unit: 'requests',
  floor: { value: p.oneChange.noopPlanRequests, what: "the no-op plan's" },
  target: { timesFloor: 2 },
});

const table = (header: readonly string[], rows: readonly (readonly string[])[]): string =>
  [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');

/** The whole report, as markdown. */
export const renderReport = (input: {
  plans: readonly NoopPlanResult[];
  applies: readonly ApplyResult[];
  memory: MemoryResult;
  goals: readonly Goal[];
  machine: string;
}): string => {
  const { plans, applies, memory, goals } = input;
  const cols = plans.map((p) => `N = ${int(p.entities)}`);
  const row = (label: string, f: (p: NoopPlanResult) => string): string[] => [label, ...plans.map(f)];
  const noop = table(
    ['no-op plan', ...cols],
    [
      row('objects in the repository (files)', (p) => `${int(p.floor.objects)} (${int(p.floor.files)})`),
      row('API requests: client / emulator log', (p) => `${p.plan.requests} / ${p.plan.requestsInEmulatorLog}`),
      row('… entity descriptor pages', (p) => String(p.plan.descriptorPages)),
      row('… dependency callers (one read each)', (p) => String(p.budget.callers)),
      row('request budget (goal)', (p) => String(p.budget.total)),
      row(
        'naive: one GET per object',
        (p) => `${int(p.naive.requests)} requests = ${p.naive.minutes.toFixed(1)} min of 1,000/min`,
      ),
      row('ours, minutes of 1,000/min', (p) => `${(p.plan.requests / 1000).toFixed(3)} min`),
      row('naive / ours', (p) => ratio(p.naive.requests, p.plan.requests)),
      row('wall time: plan (whole process)', (p) => `${sec(p.plan.wallMs)} (${sec(p.plan.processWallMs)})`),
      row('CPU time: plan', (p) => sec(p.plan.cpuMs)),
      row('peak RSS: plan', (p) => mb(p.plan.maxRssMb)),
      row('parse floor (loadManifests): wall / CPU', (p) => `${sec(p.floor.wallMs)} / ${sec(p.floor.cpuMs)}`),
      row(
        'plan / floor: wall, median of pairs (CPU)',
        (p) => `${p.planToFloor.toFixed(2)}× (${ratio(p.plan.cpuMs, p.floor.cpuMs)})`,
      ),
      row(
        "plan with the client's rate limit lifted: wall / CPU",
        (p) => `${sec(p.planUnthrottled.wallMs)} / ${sec(p.planUnthrottled.cpuMs)}`,
      ),
    ],
  );
  const apply = table(
    ['apply', ...applies.map((a) => a.label)],
    [
      ['changed entities', ...applies.map((a) => int(a.changedEntities))],
      ['emulator budget (burst)', ...applies.map((a) => `${int(a.emulatorPerMinute)}/min (${a.emulatorBurst})`)],
      ["client's rate, concurrency", ...applies.map((a) => `${int(a.clientPerMinute)}/min, ${a.concurrency}`)],
      ['requests (writes)', ...applies.map((a) => `${int(a.log.requests)} (${int(a.log.writes)})`)],
      ['wall time', ...applies.map((a) => sec(a.wallMs))],
      [
        'achieved: writes/min over the write phase',
        ...applies.map((a) => `${int(a.log.writesPerMinute)} = ${pct(a.shareOfBudget)} of budget`),
      ],
      ['achieved: all requests/min over the apply', ...applies.map((a) => int(a.log.overallPerMinute))],
      ['429s received (retries)', ...applies.map((a) => `${a.log.rateLimited} (${a.client.retries})`)],
      ['failed requests / failed changes', ...applies.map((a) => `${a.log.failedResponses} / ${a.outcomes.failed}`)],
      [
        'requests inside a Retry-After window: emulator log / client',
        ...applies.map((a) => `${a.log.insideRetryAfter} / ${a.client.requestsStartedDuringPause}`),
      ],
    ],
  );
  const mem = table(
    ['plan #', ...memory.heapMb.map((_, i) => String(i + 1))],
    [
      ['heap after GC', ...memory.heapMb.map((h) => h.toFixed(1))],
      ['wall', ...memory.wallMs.map((w) => (w / 1000).toFixed(2))],
    ],
  );
  const verdicts = table(
    ['goal', 'measured', ''],
    goals.map((g) => [g.goal, g.measured, g.met ? 'met' : '**MISSED**']),
  );
  return [
    `# cortex-sync benchmark`,
    '',
    input.machine,
    '',
    '## No-op plan (workspace already in sync)',
    '',
    noop,
    '',
    '## Apply throughput',
    '',
    apply,
    '',
    `## Memory: ${memory.runs} consecutive no-op plans of ${int(memory.entities)} entities in one process (MB, s)`,
    '',
    mem,
    '',
    '## Goals',
    '',
    verdicts,
    '',
  ].join('\n');
};
