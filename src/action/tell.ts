/**
 * A comment on a pull request that may fail without failing the run: what a run did is reported
 * from its run report (outputs, job summary, exit code), whatever happens to the comment. The
 * port has already retried GitHub's 5xx and 429; a comment that still cannot be written (GitHub
 * down, a token with `pull-requests: read`) is a warning, and the job summary says the pull
 * request was not told.
 */
import { GitHubError } from './github.js';
import type { RunScope } from './scope.js';
import { untrustedMessage } from '../render/untrusted.js';

/** Comments `body` on `pullRequest`; true when it was written. Only a GitHub failure is caught. */
export const tellPullRequest = async (scope: RunScope, pullRequest: number, body: string): Promise<boolean> => {
  if (!scope.github) return false;
  try {
    await scope.github.createComment(pullRequest, body);
    return true;
  } catch (error) {
    if (!(error instanceof GitHubError)) throw error;
    const message = scope.redact(error.message);
    scope.deps.runtime.annotate({
      severity: 'warning',
      title: 'cortex-sync: comment not written',
      message: `${message}; the job summary of this run has what the comment would have said`,
    });
    await scope.summary(
      `> [!WARNING]\n> This was not commented on #${pullRequest}: ${untrustedMessage(message)}. What follows is what the comment would have said.\n\n`,
    );
    return false;
  }
};
