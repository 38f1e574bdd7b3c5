/**
 * The Action's port to the runner — inputs, outputs, annotations, the job summary, the log — and
 * its `@actions/core` adapter (`INPUT_<NAME>`, `GITHUB_OUTPUT`, workflow commands,
 * `GITHUB_STEP_SUMMARY`). Tests use a recording implementation.
 */
import * as core from '@actions/core';

export interface Annotation {
  severity: 'error' | 'warning' | 'notice';
  message: string;
  title?: string;
  /** Relative to the repository root, `/` separators. */
  file?: string;
  line?: number;
  column?: number;
}

export interface ActionRuntime {
  /** The trimmed input, '' when not set. */
  input(name: string): string;
  setOutput(name: string, value: string): void;
  annotate(annotation: Annotation): void;
  info(message: string): void;
  /** Never shown in the log again (the runner masks it). */
  mask(secret: string): void;
  /** Appends Markdown to this step's job summary. */
  appendSummary(markdown: string): Promise<void>;
}

export const actionsCoreRuntime = (): ActionRuntime => ({
  input: (name) => core.getInput(name),
  setOutput: (name, value) => core.setOutput(name, value),
  annotate: ({ severity, message, ...properties }) => {
    const props: core.AnnotationProperties = {};
    if (properties.title !== undefined) props.title = properties.title;
    if (properties.file !== undefined) props.file = properties.file;
    if (properties.line !== undefined) props.startLine = properties.line;
    if (properties.column !== undefined) props.startColumn = properties.column;
    if (severity === 'error') core.error(message, props);
    else if (severity === 'warning') core.warning(message, props);
    else core.notice(message, props);
  },
  info: (message) => core.info(message),
  mask: (secret) => core.setSecret(secret),
  appendSummary: async (markdown) => {
    if (!process.env.GITHUB_STEP_SUMMARY) {
      core.info(markdown);
      return;
    }
    await core.summary.addRaw(markdown, true).write();
    core.summary.emptyBuffer();
  },
});
