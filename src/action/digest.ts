/**
 * The plan digest, per-step fingerprints and the judgement of a plan against the reviewed one
 * live in `core/review-judgement.ts` (pure); this is their name in the Action.
 */
export {
  type ChangeFingerprint,
  comparePlans,
  FINGERPRINT_HEX,
  fingerprints,
  judgeMerges,
  type MergeJudgement,
  type PlanDifference,
  planDigest,
  type Review,
  type ReviewOutcome,
  type ReviewProblem,
} from '../core/review-judgement.js';
