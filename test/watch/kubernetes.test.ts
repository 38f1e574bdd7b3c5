/**
 * The Kubernetes example is what the README promises: one non-root replica on a read-only root
 * filesystem with an emptyDir for the git cache, probes on the watcher's endpoints, resources, and
 * arguments the `watch` command accepts; every secret it references exists in the Secret.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Command } from 'commander';
import { expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { defineWatchCommand, type WatchFlags } from '../../src/watch/command.js';

const DIR = join(import.meta.dirname, '..', '..', 'examples', 'kubernetes');

interface Container {
  args: string[];
  env: { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[];
  livenessProbe: { httpGet: { path: string } };
  readinessProbe: { httpGet: { path: string } };
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: { readOnlyRootFilesystem: boolean; allowPrivilegeEscalation: boolean };
  volumeMounts: { name: string; mountPath: string }[];
}
interface Deployment {
  spec: {
    replicas: number;
    template: {
      spec: {
        securityContext: { runAsNonRoot: boolean; runAsUser: number };
        containers: Container[];
        volumes: { name: string; emptyDir?: object }[];
        terminationGracePeriodSeconds: number;
      };
    };
  };
}

const load = async <T>(file: string): Promise<T> => {
  const docs = parseAllDocuments(await readFile(join(DIR, file), 'utf8'));
  expect(docs).toHaveLength(1);
  expect(docs[0]?.errors).toEqual([]);
  return docs[0]?.toJS() as T;
};

it('describes one non-root, read-only replica with probes, resources and a git cache volume', async () => {
  const deployment = await load<Deployment>('deployment.yaml');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0] as Container;
  expect(deployment.spec.replicas).toBe(1);
  expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
  expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
  expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
  expect(container.livenessProbe.httpGet.path).toBe('/healthz');
  expect(container.readinessProbe.httpGet.path).toBe('/readyz');
  expect(container.resources.requests).toHaveProperty('memory');
  expect(container.resources.limits).toHaveProperty('memory');

  const cacheDir = container.env.find((e) => e.name === 'CORTEX_SYNC_CACHE_DIR')?.value;
  const mount = container.volumeMounts.find((m) => m.mountPath === cacheDir);
  expect(pod.volumes.find((v) => v.name === mount?.name)?.emptyDir).toBeDefined();

  const secret = await load<{ metadata: { name: string }; stringData: Record<string, string> }>('secret.yaml');
  for (const e of container.env.filter((v) => v.valueFrom)) {
    expect(e.valueFrom?.secretKeyRef.name).toBe(secret.metadata.name);
    expect(Object.keys(secret.stringData)).toContain(e.valueFrom?.secretKeyRef.key);
  }

  // The arguments are ones the command accepts, and the grace period outlasts the shutdown timeout.
  let parsed: WatchFlags | undefined;
  const sink = new PassThrough();
  const program = new Command('cortex-sync').exitOverride();
  const watch = program.command('watch');
  defineWatchCommand(watch, { stdout: sink, stderr: sink, env: {}, cwd: DIR }, () => {});
  watch.action((o: WatchFlags) => {
    parsed = o;
  });
  await program.parseAsync(container.args, { from: 'user' });
  expect(parsed).toMatchObject({ listen: '0.0.0.0:8080', branch: 'main' });
  expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(parsed?.shutdownTimeout ?? Infinity);
});

it('says on the line before each placeholder what to replace it with', async () => {
  const lines = (await readFile(join(DIR, 'deployment.yaml'), 'utf8')).split('\n');
  const placeholders = lines
    .map((line, i) => ({ line, i }))
    .filter(({ line }) => /example/.test(line) && !line.trim().startsWith('#'));
  expect(placeholders.map((p) => p.line.trim())).toEqual([
    'image: ghcr.io/example/cortex-sync:0.1.0',
    '- --repo=https://github.com/example/catalog.git',
  ]);
  for (const { i } of placeholders) {
    let j = i - 1;
    while (j > 0 && lines[j - 1]?.trim().startsWith('#') && !lines[j]?.trim().startsWith('# Replace')) j -= 1;
    expect(lines[j]?.trim()).toMatch(/^# Replace with /);
  }
});

it('exposes the watcher port through the Service', async () => {
  const service = await load<{ spec: { ports: { targetPort: string }[] } }>('service.yaml');
  expect(service.spec.ports[0]?.targetPort).toBe('http');
});
