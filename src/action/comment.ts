/**
 * The plan as the Action shows it: the one Markdown renderer (`render/markdown.ts`, which escapes
 * every repository string) with the Action's size budgets — GitHub's comment limit for the pull
 * request's plan comment (the markers and the trailer are added around it, `messages.ts`), and far
 * more for the job summary, which every cut comment points to.
 */
import type { Diagnostic, Plan } from '../core/model.js';
import { type MarkdownPlanOptions, renderPlanMarkdown } from '../render/markdown.js';

export { diagnosticItem } from '../render/markdown.js';

/** GitHub refuses comments of 65,536 characters or more. */
export const COMMENT_LIMIT = 65_536;
/** What a plan comment aims for, leaving room for the markers and the footer. */
export const COMMENT_BUDGET = 60_000;
/** GitHub drops a step's job summary over 1 MiB, counted in bytes. */
export const SUMMARY_LIMIT = 1024 * 1024;
/** What the plan in a job summary may take (bytes), leaving room for the result or refusal written with it. */
export const SUMMARY_BUDGET = 900_000;

type PlanCommentOptions = Omit<MarkdownPlanOptions, 'diagnostics' | 'title' | 'limit'> & {
  title: string;
  /** Characters the rendered text may use (markers and footer excluded). */
  limit: number;
};

/** The plan (or a refused plan with its diagnostics) as Markdown of at most `options.limit` characters. */
export const renderPlanComment = (
  plan: Plan,
  diagnostics: readonly Diagnostic[],
  options: PlanCommentOptions,
): string => renderPlanMarkdown(plan, { ...options, diagnostics });
