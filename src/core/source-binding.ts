/**
 * A source id is bound to the origin that first applied it (the repository, or the manifest root's
 * path): a repository's `cortex-sync.yaml` can name any source id, so the id alone proves nothing.
 * The origin comes from what the operator controls (`GITHUB_REPOSITORY`, the checkout's git
 * remote, the path the run was pointed at), never from a repository file. It is recorded in the
 * source's own ownership record. Pure: the engine reads the record and derives the origin.
 * See docs/adr-0003-trust-model.md.
 */
import type { BindingState, Diagnostic } from './model.js';
import { claimedAdvice, describeOrigin } from './origin-kind.js';
import { countOf } from './plural.js';
import { printable } from './printable.js';

interface SourceBindingInput {
  sourceId: string;
  /** Where this run comes from. */
  origin: string;
  /** This source's ownership record: whether it exists, and the origin it names (none before origins were recorded). */
  record: { exists: boolean; origin?: string };
  /** The operator allowed taking over (`--allow-takeover`, or the Action's or watcher's own setting). */
  allowTakeover: boolean;
}

export interface SourceBinding {
  state: BindingState;
  sourceId: string;
  origin: string;
  /** The origin the record names, when it names one. */
  recordedOrigin?: string;
}

export const sourceBinding = (input: SourceBindingInput): SourceBinding => {
  const { sourceId, origin, record } = input;
  const base = { sourceId, origin };
  if (!record.exists) return { ...base, state: 'new' };
  if (record.origin === undefined) return { ...base, state: 'unbound' };
  if (record.origin === origin) return { ...base, state: 'bound', recordedOrigin: record.origin };
  return { ...base, state: input.allowTakeover ? 'takeover' : 'claimed', recordedOrigin: record.origin };
};

/** Whether an apply under this binding may remove (delete, archive) anything of the source. */
export const removalsAllowed = (binding: SourceBinding | undefined): boolean =>
  binding === undefined || binding.state === 'bound' || binding.state === 'new' || binding.state === 'takeover';

const quoted = (s: string): string => `\`${printable(s)}\``;

/**
 * What the plan says about the binding: an error when another origin claims the source (the plan
 * is refused: nothing is written, removed or taken over), a warning when this apply binds a record
 * written before origins were recorded (its removals wait for the next apply) or rebinds a source
 * the operator allowed to take over. `withheld` is how many removals were left out.
 */
export const bindingDiagnostics = (binding: SourceBinding | undefined, withheld: number): Diagnostic[] => {
  if (binding === undefined) return [];
  const id = quoted(binding.sourceId);
  const here = quoted(binding.origin);
  const removals = withheld > 0 ? ` (${countOf(withheld, 'removal')} left out of this plan)` : '';
  switch (binding.state) {
    case 'claimed':
      return [
        {
          severity: 'error',
          code: 'source-claimed',
          message: `source id ${id} belongs to origin ${describeOrigin(binding.recordedOrigin ?? '')}, recorded at its first apply, but this run comes from origin ${describeOrigin(binding.origin)}: it removes, changes and takes over nothing of that source${removals}. To go on: ${claimedAdvice(binding.recordedOrigin ?? '', binding.origin, binding.sourceId)}`,
        },
      ];
    case 'unbound':
      return [
        {
          severity: 'warning',
          code: 'source-bound',
          message: `source id ${id} has an ownership record without an origin (written by an earlier version); this apply binds it to ${here}, and removals wait for the next apply${removals}`,
        },
      ];
    case 'takeover':
      return [
        {
          severity: 'warning',
          code: 'source-takeover',
          message: `source id ${id} belongs to origin ${quoted(binding.recordedOrigin ?? '')}; --allow-takeover rebinds it to ${here}, and this plan may remove what that origin applied`,
        },
      ];
    default:
      return [];
  }
};
