/**
 * The Kubernetes Lease the replicas elect a leader on, through `@kubernetes/client-node`: read,
 * create, and replace under the record's `resourceVersion` (optimistic concurrency: the API
 * server answers 409 when another replica wrote since we read). Configuration comes from the pod
 * (in-cluster service account) when it runs in one, else from `KUBECONFIG` (or `~/.kube/config`).
 */
import { ApiException, CoordinationV1Api, KubeConfig, type V1Lease, V1MicroTime } from '@kubernetes/client-node';
import { delimiter } from 'node:path';
import { ConfigError, CortexSyncError } from '../core/errors.js';

/** What the elector reads and writes of a Lease (client-go's `LeaderElectionRecord`). */
export interface LeaseRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime?: Date;
  renewTime?: Date;
  leaseTransitions: number;
}

export interface ObservedLease {
  record: LeaseRecord;
  resourceVersion: string;
}

/** The store behind the elector; `create` and `update` answer false when another replica won the race (409). */
export interface LeaseStore {
  /** Who is named where, for messages: `namespace/name`. */
  readonly describe: string;
  get(): Promise<ObservedLease | undefined>;
  create(record: LeaseRecord): Promise<ObservedLease | false>;
  update(record: LeaseRecord, resourceVersion: string): Promise<ObservedLease | false>;
}

/** A Lease request the API server refused or never answered, naming the operation and what it said. */
export class LeaseApiError extends CortexSyncError {
  constructor(operation: string, status: number | undefined, detail: string) {
    super('API', `${operation}: ${status === undefined ? 'no answer' : `HTTP ${status}`}: ${detail}`);
    this.name = 'LeaseApiError';
  }
}

const recordOf = (lease: V1Lease): ObservedLease => {
  const spec = lease.spec ?? {};
  return {
    record: {
      holderIdentity: spec.holderIdentity ?? '',
      leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
      ...(spec.acquireTime ? { acquireTime: new Date(spec.acquireTime) } : {}),
      ...(spec.renewTime ? { renewTime: new Date(spec.renewTime) } : {}),
      leaseTransitions: spec.leaseTransitions ?? 0,
    },
    resourceVersion: lease.metadata?.resourceVersion ?? '',
  };
};

const micro = (date: Date | undefined): V1MicroTime | undefined =>
  date === undefined ? undefined : new V1MicroTime(date.getTime());

const leaseOf = (name: string, namespace: string, record: LeaseRecord, resourceVersion?: string): V1Lease => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, namespace, ...(resourceVersion !== undefined ? { resourceVersion } : {}) },
  spec: {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    ...(record.acquireTime ? { acquireTime: micro(record.acquireTime) } : {}),
    ...(record.renewTime ? { renewTime: micro(record.renewTime) } : {}),
    leaseTransitions: record.leaseTransitions,
  },
});

/** The API server's own message (a `Status` body), shortened; never a header (a token could be there). */
const apiMessage = (error: unknown): { status: number | undefined; detail: string } => {
  if (error instanceof ApiException) {
    const body: unknown = error.body;
    let detail = typeof body === 'string' ? body : '';
    try {
      const parsed: unknown = typeof body === 'string' ? JSON.parse(body) : body;
      if (typeof parsed === 'object' && parsed !== null && 'message' in parsed) detail = String(parsed.message);
    } catch {
      // not JSON: the text as it is
    }
    return { status: error.code, detail: detail.slice(0, 300) };
  }
  return { status: undefined, detail: error instanceof Error ? error.message : String(error) };
};

/** In-cluster configuration in a pod, else `KUBECONFIG` / `~/.kube/config`. */
export const loadKubeConfig = (env: NodeJS.ProcessEnv): KubeConfig => {
  const kc = new KubeConfig();
  try {
    if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) kc.loadFromCluster();
    // One file in KUBECONFIG is read as given; a list (or none) the library's own way.
    else if (env.KUBECONFIG && !env.KUBECONFIG.includes(delimiter)) kc.loadFromFile(env.KUBECONFIG);
    else kc.loadFromDefault();
  } catch (error) {
    throw new ConfigError(
      `--leader-elect: no Kubernetes configuration (not in a pod, and KUBECONFIG could not be read): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!kc.getCurrentCluster())
    throw new ConfigError('--leader-elect: no Kubernetes cluster configured (not in a pod, and KUBECONFIG names none)');
  return kc;
};

/** The namespace of the pod's service account, else the kubeconfig context's, else `default`. */
export const defaultNamespace = (kc: KubeConfig, readServiceAccountNamespace: () => string | undefined): string =>
  readServiceAccountNamespace()?.trim() || kc.getContextObject(kc.getCurrentContext())?.namespace || 'default';

/** The RBAC verbs the store uses on `leases` (read, create, replace), no more: the example's Role grants these. */
export const LEASE_VERBS = ['get', 'create', 'update'] as const;

export const kubernetesLeaseStore = (kc: KubeConfig, namespace: string, name: string): LeaseStore => {
  const api = kc.makeApiClient(CoordinationV1Api);
  const describe = `${namespace}/${name}`;
  const conflict = (error: unknown): boolean => error instanceof ApiException && error.code === 409;
  const fail = (operation: string, error: unknown): never => {
    const { status, detail } = apiMessage(error);
    throw new LeaseApiError(`${operation} Lease ${describe}`, status, detail);
  };
  return {
    describe,
    get: async () => {
      try {
        return recordOf(await api.readNamespacedLease({ name, namespace }));
      } catch (error) {
        if (error instanceof ApiException && error.code === 404) return undefined;
        return fail('read', error);
      }
    },
    create: async (record) => {
      try {
        return recordOf(await api.createNamespacedLease({ namespace, body: leaseOf(name, namespace, record) }));
      } catch (error) {
        if (conflict(error)) return false;
        return fail('create', error);
      }
    },
    update: async (record, resourceVersion) => {
      try {
        const body = leaseOf(name, namespace, record, resourceVersion);
        return recordOf(await api.replaceNamespacedLease({ name, namespace, body }));
      } catch (error) {
        if (conflict(error)) return false;
        return fail('update', error);
      }
    },
  };
};
