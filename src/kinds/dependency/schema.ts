/**
 * Dependency schemas: the strict manifest (one caller and its outgoing API-managed edges)
 * and the tolerant live edge (`DependencyResponse`, only compared fields typed).
 */
import { z } from 'zod';

/** The HTTP methods an edge may name (`DependencyResponse.method`). */
const DEPENDENCY_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'] as const;
type DependencyMethod = (typeof DEPENDENCY_METHODS)[number];

const tagSchema = z
  .string()
  .min(1, { error: 'an entity tag must not be empty' })
  .regex(/^\S+$/, { error: 'an entity tag holds no whitespace' })
  .refine((t) => !t.includes('→'), { error: 'an entity tag cannot contain `→`' });

/** One outgoing edge: the callee `tag`, and `method` with `path` (both or neither). */
const dependencyEdgeSchema = z
  .strictObject({
    tag: tagSchema,
    method: z.enum(DEPENDENCY_METHODS, { error: `method must be one of ${DEPENDENCY_METHODS.join(', ')}` }).optional(),
    path: z.string().min(1, { error: 'path must not be empty' }).optional(),
    description: z.string().optional(),
    metadata: z.record(z.string(), z.json()).optional(),
  })
  .superRefine((edge, ctx) => {
    if (edge.method !== undefined && edge.path === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['path'],
        message: 'method and path go together: add path, or remove method',
      });
    }
    if (edge.path !== undefined && edge.method === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['method'],
        message: 'method and path go together: add method, or remove path',
      });
    }
  });

/** One document under `.cortex/dependencies/`: a caller and the edges it owns through the API. */
export const dependencyManifestSchema = z.strictObject({
  callerTag: tagSchema,
  dependencies: z.array(dependencyEdgeSchema),
});

/** One declared edge (a desired object): the caller's and the edge's fields, and where it is written. */
export interface DependencySpec {
  callerTag: string;
  calleeTag: string;
  method?: DependencyMethod;
  path?: string;
  description?: string;
  metadata?: Record<string, unknown>;
  /** Index of the edge in the document's `dependencies` list (for locating it). */
  index: number;
}

/** An edge as the API lists it; unknown fields are kept. */
export const liveDependencySchema = z
  .object({
    callerTag: z.string().min(1),
    calleeTag: z.string().min(1),
    method: z.string().nullish(),
    path: z.string().nullish(),
    description: z.string().nullish(),
    metadata: z.unknown().optional(),
  })
  .loose();

export type LiveDependency = z.output<typeof liveDependencySchema>;
