/**
 * `cortex-sync webhook-route --jq EXPR --payload FILE [--dir D]`: offline, which entity of the
 * repository an inbound custom webhook would give this payload to, and why; or why none would.
 * The same jq (jq 1.8 as WebAssembly) and the same routing rules as the emulator's webhook: the
 * Entity tag JQ's one value matched against entity tags, then against the values entities list in
 * `x-service-custom-integration-mappings`. Exit 0 when an entity receives it, 1 otherwise. Its
 * flags are `command.ts`.
 */
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { hasErrors } from '../core/model.js';
import { printable } from '../core/printable.js';
import { MAPPINGS_KEY, type RoutableEntity, routeWebhookPayload } from '../core/webhook-routing.js';
import { type CliIo, manifestRootProblems, manifestText, useColor, writeLine } from '../runtime-io/io.js';
import { createJqEvaluator } from '../jq/jq.js';
import { validateManifests } from '../engine/reconcile.js';
import { KIND_HANDLERS } from '../kinds/registry.js';
import { renderDiagnostics } from '../render/index.js';
import type { WebhookRouteOptions } from './command.js';
import { jsonErrorAt } from './json-error-at.js';

/** The API's largest request body. */
const MAX_PAYLOAD_BYTES = 2 * 1024 * 1024;

/** The payload file's text (a regular file of at most 2 MB, one JSON value), or the problem. */
const readPayload = async (file: string, shown: string): Promise<{ text: string } | { problem: string }> => {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { problem: `--payload ${shown}: ${code === 'ENOENT' ? 'no such file' : `cannot be read (${code})`}` };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { problem: `--payload ${shown} is not a regular file` };
    if (info.size > MAX_PAYLOAD_BYTES) {
      return {
        problem: `--payload ${shown} is ${info.size} bytes; the API refuses bodies over ${MAX_PAYLOAD_BYTES} (2 MB)`,
      };
    }
    const text = (await handle.readFile()).toString('utf8');
    // Where, never what: the runtime's parse error quotes the text, and a payload may be a secret.
    const at = jsonErrorAt(text);
    if (at !== undefined) return { problem: `--payload ${shown} is not one JSON value: ${at}; the API answers 400` };
    return { text };
  } finally {
    await handle.close();
  }
};

/** Runs the command; returns the exit code. */
export const runWebhookRoute = async (o: WebhookRouteOptions, io: CliIo): Promise<number> => {
  const err = (text: string) => writeLine(io.stderr, text);
  const root = resolve(io.cwd, o.dir ?? io.env.CORTEX_SYNC_DIR ?? '.');
  const rootProblems = await manifestRootProblems(root, o.dir !== undefined ? '--dir' : 'the manifest root');
  if (rootProblems.length > 0) {
    err(renderDiagnostics(rootProblems, { color: useColor(io.stderr, io.env) }));
    return 1;
  }
  const payload = await readPayload(resolve(io.cwd, o.payload), printable(o.payload));
  if ('problem' in payload) {
    err(`error: ${payload.problem}`);
    return 1;
  }

  const loaded = await validateManifests(root, { signal: io.stop ?? new AbortController().signal });
  // A mapping two entities register is an error of the repository, but routing says so itself.
  const blocking = loaded.diagnostics.filter((d) => d.code !== 'duplicate-integration-mapping');
  if (hasErrors(blocking)) {
    err(renderDiagnostics(blocking, { color: useColor(io.stderr, io.env), source: manifestText(root) }));
    err('error: the manifests have errors (above): fix them first; where a payload goes depends on every entity');
    return 1;
  }

  const jq = createJqEvaluator();
  let outcome;
  try {
    outcome = await jq.evaluate(o.jq, payload.text);
  } finally {
    await jq.close();
  }
  if (!outcome.ok) {
    err(
      outcome.reason === 'compile'
        ? `error: --jq is not a jq program: ${printable(outcome.message)}`
        : `no entity receives this payload: the Entity tag JQ failed on it (${printable(outcome.message)}); the API answers 400 and stores nothing`,
    );
    return 1;
  }

  // The objects an inbound webhook can reach (entities), as their kind says they are matched.
  const byKind = new Map(KIND_HANDLERS.map((h) => [h.kind, h]));
  const targets = loaded.objects.flatMap((obj) => {
    const target = byKind.get(obj.kind)?.manifest.webhookTarget?.(obj);
    return target ? [{ obj, target }] : [];
  });
  const route = routeWebhookPayload(
    outcome.outputs,
    targets.map((t): RoutableEntity => t.target),
  );
  if (!route.ok) {
    const outside =
      route.reason === 'no-entity' ? ' (entities that are not in this repository are not known offline)' : '';
    err(
      `no entity receives this payload: ${printable(route.message)}${outside}; the API answers 400 and stores nothing`,
    );
    return 1;
  }
  const target = targets.find((t) => t.target.tag === route.tag)?.obj;
  const where = target ? ` (${printable(target.source.file)}:${target.source.line})` : '';
  const why =
    route.via === 'tag'
      ? `the Entity tag JQ gives \`${printable(route.value)}\`, its tag`
      : `the Entity tag JQ gives \`${printable(route.value)}\`, which no entity has as its tag and this one lists in ${MAPPINGS_KEY}`;
  writeLine(io.stdout, `${printable(route.tag)}${where}: ${why}`);
  return 0;
};
