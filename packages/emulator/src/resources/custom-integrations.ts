/**
 * Inbound custom webhook integrations. An integration (`{name, entityTagJq, key}`) is configured in
 * the UI on a real tenant; here through `POST /_emulator/custom-integrations`. Its webhook,
 * `POST /api/v1/custom-integrations/data/{webhookId}`, needs no key: the integration's Entity tag JQ
 * is evaluated on the payload with real jq, the output routed to an entity (its tag first, then
 * the values entities register in `x-service-custom-integration-mappings`; `core/webhook-routing.ts`)
 * and the payload stored as that entity's custom data under the integration's key, with
 * `source: INTEGRATION`. Anything else is a 400 and nothing is stored.
 */
import { mappingsOfInfo, routeWebhookPayload } from '../../../../src/core/webhook-routing.js';
import { errorResponse, type RouteDef } from '../contract.js';
import { isoSeconds, type JsonObject, own } from '../util.js';
import { type CustomDataState, putCustomData } from './custom-data-store.js';
import { type EntitiesState, findEntity, infoOf } from './entity-store.js';

export interface StoredIntegration {
  /** The webhook id (a UUID), the last segment of the webhook URL. */
  id: string;
  name: string;
  entityTagJq: string;
  key: string;
  dateCreated: number;
}

export interface CustomIntegrationsState {
  byId: Record<string, StoredIntegration>;
}

export const initialCustomIntegrationsState = (): CustomIntegrationsState => ({ byId: {} });

/** The path of an integration's webhook (appended to the emulator's base URL). */
export const webhookPath = (id: string): string => `/api/v1/custom-integrations/data/${id}`;

export const integrationView = (i: StoredIntegration, baseUrl: string): JsonObject => ({
  id: i.id,
  name: i.name,
  entityTagJq: i.entityTagJq,
  key: i.key,
  url: `${baseUrl}${webhookPath(i.id)}`,
  dateCreated: isoSeconds(i.dateCreated),
});

export interface CustomIntegrationSlices {
  entities: EntitiesState;
  customData: CustomDataState;
  customIntegrations: CustomIntegrationsState;
}

/** `application/json` or any `+json` type; the webhook takes nothing else. */
const isJsonType = (type: string): boolean => type === 'application/json' || /^application\/[\w.-]+\+json$/.test(type);

export const customIntegrationRoutes: readonly RouteDef<CustomIntegrationSlices>[] = [
  {
    method: 'POST',
    pattern: '/api/v1/custom-integrations/data/:webhookId',
    permission: 'none',
    async handle(req, state, env) {
      const id = req.params.webhookId ?? '';
      const integration = own(state.customIntegrations.byId, id);
      if (!integration) return errorResponse(404, 'NOT_FOUND', `No custom integration with webhook id ${id}`);
      if (!isJsonType(req.contentType)) {
        return errorResponse(415, 'BAD_REQUEST', `Unsupported content type '${req.contentType || '(none)'}'`);
      }
      let payload: unknown;
      try {
        payload = JSON.parse(req.rawBody);
      } catch {
        return errorResponse(400, 'BAD_REQUEST', 'The payload must be one JSON value');
      }
      if (!env.evaluateJq) return errorResponse(500, 'UNHANDLED_EXCEPTION', 'No jq evaluator');
      const jq = await env.evaluateJq(integration.entityTagJq, req.rawBody);
      if (!jq.ok && jq.reason === 'busy')
        return errorResponse(503, 'SERVICE_UNAVAILABLE', 'Too many deliveries at once');
      if (!jq.ok) {
        return errorResponse(400, 'BAD_REQUEST', `Entity tag JQ \`${integration.entityTagJq}\` failed: ${jq.message}`);
      }
      // Read after the evaluation: the catalog may have changed while jq ran.
      const entities = Object.values(state.entities.byId).map((e) => ({
        tag: e.tag,
        mappings: mappingsOfInfo(infoOf(e.descriptor)),
      }));
      const route = routeWebhookPayload(jq.outputs, entities);
      if (!route.ok) return errorResponse(400, 'BAD_REQUEST', `No entity receives this payload: ${route.message}`);
      const entity = findEntity(state.entities, route.tag);
      if (!entity) return errorResponse(400, 'BAD_REQUEST', `No entity receives this payload: ${route.tag} is gone`);
      putCustomData(state.customData, entity, {
        key: integration.key,
        value: payload,
        source: 'INTEGRATION',
        now: env.now(),
      });
      return { status: 200 };
    },
  },
];
