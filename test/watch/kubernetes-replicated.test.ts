/**
 * The replicated Kubernetes example agrees with the code: arguments the command accepts (the
 * Lease's name, the sources file where the ConfigMap is mounted), a sources file the watcher reads
 * without a problem, the port the probes, the Service and the scrape annotation use, the RBAC
 * verbs the Lease store uses and no more, a PodDisruptionBudget and a service account that match.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Command } from 'commander';
import { expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { defineWatchCommand, type WatchFlags } from '../../src/watch/command.js';
import { DEFAULT_LEASE_NAME } from '../../src/watch/leader.js';
import { LEASE_VERBS } from '../../src/watch/lease-store.js';
import { parseListen } from '../../src/watch/listen.js';
import { parseSourcesConfig } from '../../src/watch/sources-config.js';

const DIR = join(import.meta.dirname, '..', '..', 'examples', 'kubernetes');

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const load = async (file: string): Promise<Doc[]> => {
  const docs = parseAllDocuments(await readFile(join(DIR, file), 'utf8'));
  for (const d of docs) expect(d.errors).toEqual([]);
  return docs.map((d) => d.toJS() as Doc);
};

const parseArgs = async (args: string[]): Promise<WatchFlags> => {
  let parsed: WatchFlags | undefined;
  const sink = new PassThrough();
  const program = new Command('cortex-sync').exitOverride();
  const watch = program.command('watch');
  defineWatchCommand(watch, { stdout: sink, stderr: sink, env: {}, cwd: DIR }, () => {});
  watch.action((o: WatchFlags) => {
    parsed = o;
  });
  await program.parseAsync(args, { from: 'user' });
  if (!parsed) throw new Error('not parsed');
  return parsed;
};

it('runs two replicas electing a leader on the Lease the code names, over the sources of the ConfigMap', async () => {
  const [deployment] = await load('replicated/deployment.yaml');
  const pod = deployment?.spec.template.spec;
  const container = pod.containers[0];
  expect(deployment?.spec.replicas).toBe(2);
  const flags = await parseArgs(container.args as string[]);
  expect(flags).toMatchObject({ leaderElect: true, leaseName: DEFAULT_LEASE_NAME });
  expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(flags.shutdownTimeout);

  // The sources file is where the ConfigMap is mounted, under its key, and reads without a problem.
  const [configMap] = await load('replicated/configmap.yaml');
  const config = flags.config ?? '';
  const mount = container.volumeMounts.find((m: Doc) => config.startsWith(`${m.mountPath}/`));
  const volume = pod.volumes.find((v: Doc) => v.name === mount?.name);
  expect(volume?.configMap?.name).toBe(configMap?.metadata.name);
  const key = config.slice(`${mount?.mountPath}/`.length);
  const { sources, diagnostics } = parseSourcesConfig(key, configMap?.data[key] as string);
  expect(diagnostics).toEqual([]);
  expect(sources.length).toBeGreaterThan(1);

  // One port: where it listens, the container port the probes and the Service name, the scrape annotation.
  const port = parseListen(flags.listen ?? '').port;
  expect(container.ports).toEqual([{ name: 'http', containerPort: port }]);
  expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
  expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
  expect(deployment?.spec.template.metadata.annotations['prometheus.io/port']).toBe(String(port));
  const [service] = await load('service.yaml');
  expect(service?.spec.ports[0].targetPort).toBe('http');
  expect(service?.spec.selector).toEqual(deployment?.spec.selector.matchLabels);
});

it('grants the service account exactly the verbs the Lease store uses, and keeps one replica through a drain', async () => {
  const [deployment] = await load('replicated/deployment.yaml');
  const rbac = await load('replicated/rbac.yaml');
  const account = rbac.find((d) => d.kind === 'ServiceAccount');
  const role = rbac.find((d) => d.kind === 'Role');
  const binding = rbac.find((d) => d.kind === 'RoleBinding');
  expect(deployment?.spec.template.spec.serviceAccountName).toBe(account?.metadata.name);
  expect(role?.rules).toEqual([{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: [...LEASE_VERBS] }]);
  expect(binding?.roleRef).toMatchObject({ kind: 'Role', name: role?.metadata.name });
  expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: account?.metadata.name }]);

  const [pdb] = await load('replicated/pdb.yaml');
  expect(pdb?.spec.minAvailable).toBe(1);
  expect(pdb?.spec.selector.matchLabels).toEqual(deployment?.spec.selector.matchLabels);
});
