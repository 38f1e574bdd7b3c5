/**
 * A delete or archive needs its manifest to be missing on two observations at least `settleMs`
 * apart. A file gone for a moment (an editor saving by rename, a sidecar swapping a checkout, a
 * folder moved away and back) must never delete an object only to create it again with a new id.
 *
 * A run whose plan removes something not yet confirmed applies nothing and asks for a run after
 * the settle time; that run removes only what is still missing (a file that came back is simply
 * no longer a removal in its plan). Time here is a monotonic clock, so a wall-clock step cannot
 * shorten the wait.
 *
 * A removal is confirmed only by a run whose load walked the whole root: a load that looked only at
 * the paths its source named (file events, a commit's changed files) cannot tell a manifest that is
 * gone from one that moved where no event was seen (a folder that cannot be watched). A removal it
 * plans waits for a run that walks, at once when the settle time is already over (or is 0).
 */
import { objectKey, type ObjectKey, type Plan } from '../core/model.js';

export interface RemovalCheck {
  approved: boolean;
  /** Removals not yet confirmed, with when they were first seen missing (monotonic ms). */
  waiting: { key: ObjectKey; firstSeen: number }[];
  /** When to look again (ms from now), if anything waits. */
  retryInMs?: number;
}

const isRemoval = (action: string): boolean => action === 'delete' || action === 'archive';

export class RemovalSettle {
  private readonly firstSeen = new Map<ObjectKey, number>();

  constructor(private readonly settleMs: number) {}

  /**
   * `observedFrom`: when the run started to look (its reads are no older than this); `now`: after
   * its plan; `walked`: whether its load walked the whole root. A removal is confirmed by a run that
   * walked, when it was first seen at least `settleMs` before this run started to look.
   */
  check(plan: Plan, observedFrom: number, now: number, walked = true): RemovalCheck {
    const removals = plan.changes.filter((c) => isRemoval(c.action)).map((c) => objectKey(c.kind, c.id));
    const current = new Set(removals);
    // What is no longer removed came back (or is no longer managed): its clock starts over.
    for (const key of [...this.firstSeen.keys()]) if (!current.has(key)) this.firstSeen.delete(key);
    if (this.settleMs <= 0 && walked) return { approved: true, waiting: [] };
    const waiting: RemovalCheck['waiting'] = [];
    for (const key of removals) {
      const seen = this.firstSeen.get(key);
      if (seen === undefined) this.firstSeen.set(key, now);
      if (seen === undefined || observedFrom - seen < this.settleMs || !walked)
        waiting.push({ key, firstSeen: seen ?? now });
    }
    if (waiting.length === 0) return { approved: true, waiting };
    const latest = Math.max(...waiting.map((w) => w.firstSeen));
    return { approved: false, waiting, retryInMs: Math.max(0, latest + this.settleMs - now) };
  }

  /** Removals seen missing once and waiting for their second look. */
  pending(): number {
    return this.firstSeen.size;
  }
}
