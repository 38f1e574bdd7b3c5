/**
 * The Action's port to the runner — inputs, outputs, annotations, the job summary, the log — and
 * its `@actions/core` adapter (`INPUT_<NAME>`, `GITHUB_OUTPUT`, workflow commands,
 * `GITHUB_STEP_SUMMARY`). Tests use a recording implementation.
 *
 * The runner reads a line of the log that starts with `::` (or `##[`) as a workflow command, and
 * `@actions/core` escapes line breaks only inside a command's properties and data. So callers pass
 * every repository-controlled string through `printable()`, and the adapter makes sure anyway:
 * each line of a log message and of an annotation is made printable (no control character, no ANSI
 * escape), and a message of several lines, or one that looks like a command, is written between
 * `::stop-commands::` and its resume token (a random one), so the runner runs none of it.
 */
import { randomUUID } from 'node:crypto';
import * as core from '@actions/core';
import { printable, printableOnce } from '../core/printable.js';
import type { EventSink } from '../engine/context.js';
import { leaseEventLine } from '../engine/lease-events.js';

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

/** `line` made printable, unless it already is (a backslash alone is printable text: no double escaping). */
const printableLine = printableOnce;
const printableLines = (text: string): string => text.split(/\r?\n/).map(printableLine).join('\n');

const LOOKS_LIKE_A_COMMAND = /^\s*(::|##\[)/m;

/** Writes `message` to the log so that the runner reads no workflow command in it. */
export const logSafely = (write: (line: string) => void, message: string, token: () => string): void => {
  const text = printableLines(message);
  if (!text.includes('\n') && !LOOKS_LIKE_A_COMMAND.test(text)) {
    write(text);
    return;
  }
  const resume = token();
  write(`::stop-commands::${resume}`);
  write(text);
  write(`::${resume}::`);
};

export const actionsCoreRuntime = (): ActionRuntime => ({
  input: (name) => core.getInput(name),
  setOutput: (name, value) => core.setOutput(name, value),
  annotate: ({ severity, ...properties }) => {
    const message = printableLines(properties.message);
    const props: core.AnnotationProperties = {};
    if (properties.title !== undefined) props.title = printableLine(properties.title);
    // A file name with a backslash is kept as it is, so that the annotation finds the file.
    if (properties.file !== undefined) props.file = printableLine(properties.file);
    if (properties.line !== undefined) props.startLine = properties.line;
    if (properties.column !== undefined) props.startColumn = properties.column;
    if (severity === 'error') core.error(message, props);
    else if (severity === 'warning') core.warning(message, props);
    else core.notice(message, props);
  },
  info: (message) => logSafely(core.info, message, randomUUID),
  mask: (secret) => core.setSecret(secret),
  appendSummary: async (markdown) => {
    if (!process.env.GITHUB_STEP_SUMMARY) {
      logSafely(core.info, markdown, randomUUID);
      return;
    }
    await core.summary.addRaw(markdown, true).write();
    core.summary.emptyBuffer();
  },
});

/** Engine progress worth a log line: failures, rate-limit pauses and who holds the apply lease (ids and errors made printable). */
export const logEngineEvents = (runtime: ActionRuntime): EventSink => ({
  emit: (event) => {
    if (event.type === 'operation.done' && event.outcome === 'failed')
      runtime.info(
        `failed: ${event.action} ${printable(`${event.kind}/${event.id}`)}${event.error ? `: ${printable(event.error)}` : ''}`,
      );
    else if (event.type === 'ratelimit.paused') runtime.info(`rate limited: pausing ${Math.ceil(event.ms / 1000)} s`);
    else {
      const lease = leaseEventLine(event);
      if (lease !== undefined) runtime.info(lease);
    }
  },
});
