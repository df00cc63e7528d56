/**
 * The frontmatter `model` field: a model name, or an inline model object in any of Prompty's
 * spellings (`connection`/`configuration`, `options`/`parameters`, `type`/`kind`/`provider`).
 *
 * agentport calls OpenAI-compatible Chat Completions endpoints only. An inline model that names
 * another provider or connection kind (Azure OpenAI, Anthropic, Foundry, a connection reference, ...)
 * is a load error naming it, unless `connection.baseURL` gives the OpenAI-compatible endpoint that
 * serves it (Azure OpenAI's `/openai/v1/` endpoint, a gateway, a local server): never a silent
 * call to api.openai.com.
 */
import type { FieldPath } from './inputs.js';
import type { FieldReporter } from './fields.js';
import type { PromptyModelObject } from './types.js';

const MODEL_KEYS = new Set(['id', 'provider', 'api', 'apiType', 'connection', 'options', 'configuration', 'parameters']);
/** Provider names that mean "the OpenAI API or a server speaking it". */
const OPENAI_PROVIDERS = new Set(['openai', 'openai_compatible', 'openai-compatible']);
/** Prompty connection kinds that carry an endpoint and a key, which is all an OpenAI client needs. */
const PLAIN_CONNECTION_KINDS = new Set(['key', 'anonymous', 'api_key', 'apikey']);
const BASE_URL_KEYS = ['baseURL', 'base_url', 'baseUrl'] as const;
const KEY_ENV_KEYS = ['api_key_env', 'apiKeyEnv'] as const;
const KEY_KEYS = ['api_key', 'apiKey', 'key'] as const;
const ENV_REF_RE = /^\s*\$\{env:([A-Za-z_][A-Za-z0-9_]*)(?::[^}]*)?\}\s*$/;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** Where the file says which provider or connection kind serves the model, and what it says. */
interface ProviderClaim {
  value: string;
  path: FieldPath;
}

function providerClaims(raw: Record<string, unknown>, connectionKey: 'connection' | 'configuration' | undefined): ProviderClaim[] {
  const claims: ProviderClaim[] = [];
  const provider = nonEmpty(raw['provider']);
  if (provider) claims.push({ value: provider, path: ['model', 'provider'] });
  for (const key of ['configuration', 'connection'] as const) {
    const conn = raw[key];
    if (!isRecord(conn)) continue;
    const type = nonEmpty(conn['type']);
    if (type) claims.push({ value: type, path: ['model', key, 'type'] });
    const kind = nonEmpty(conn['kind']);
    if (kind && !PLAIN_CONNECTION_KINDS.has(kind.toLowerCase())) claims.push({ value: kind, path: ['model', key, 'kind'] });
  }
  // Azure's own keys say Azure even without a type.
  const conn = connectionKey ? raw[connectionKey] : undefined;
  if (isRecord(conn) && claims.length === 0) {
    const azureKey = ['azure_endpoint', 'azure_deployment', 'api_version'].find((k) => conn[k] !== undefined);
    if (azureKey) claims.push({ value: 'azure_openai', path: ['model', connectionKey as string, azureKey] });
  }
  return claims;
}

/** The API key's variable: named directly, or the variable of a key written as `${env:NAME}`. */
function keyEnvOf(connection: Record<string, unknown>, connectionKey: string, r: FieldReporter): string | undefined | false {
  for (const key of KEY_ENV_KEYS) {
    const v = connection[key];
    if (v === undefined) continue;
    if (typeof v === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(v)) return v;
    r.wrongType(['model', connectionKey, key], 'the name of an environment variable', v);
    return false;
  }
  for (const key of KEY_KEYS) {
    if (connection[key] === undefined) continue;
    const raw = r.rawOf(['model', connectionKey, key]);
    const ref = raw === undefined ? null : ENV_REF_RE.exec(raw);
    if (ref) return ref[1];
    r.error(
      ['model', connectionKey, key],
      'write the key as ${env:NAME}: agentport reads it from that variable when it calls the model and never keeps it in the file',
    );
    return false;
  }
  return undefined;
}

/**
 * Checks and normalizes the `model` field.
 * @returns the model name or object; undefined after reporting a problem
 */
export function checkModel(raw: unknown, r: FieldReporter): string | PromptyModelObject | undefined {
  if (raw === undefined || raw === null) {
    r.error(['model'], 'model is required (the name of a defined model, or {id, provider, connection, options})');
    return undefined;
  }
  if (typeof raw === 'string') {
    if (raw.trim() === '') r.error(['model'], 'model must not be empty');
    return raw.trim();
  }
  if (!isRecord(raw)) {
    r.wrongType(['model'], 'a model name or a mapping', raw);
    return undefined;
  }
  for (const key of Object.keys(raw)) {
    if (!MODEL_KEYS.has(key)) r.warn(['model', key], `unknown model field "${key}" is ignored`);
  }
  let ok = true;
  const objectAt = (key: string): Record<string, unknown> | undefined => {
    const v = raw[key];
    if (v === undefined || v === null) return undefined;
    if (!isRecord(v)) {
      r.wrongType(['model', key], 'a mapping', v);
      ok = false;
      return undefined;
    }
    return v;
  };
  const stringAt = (key: string): string | undefined => {
    const v = raw[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' || v.trim() === '') {
      r.wrongType(['model', key], 'a non-empty string', v);
      ok = false;
      return undefined;
    }
    return v;
  };
  // `configuration` and `parameters` are the older Prompty names of `connection` and `options`.
  const legacyConnection = objectAt('configuration');
  const connection = objectAt('connection');
  const legacyOptions = objectAt('parameters');
  const options = objectAt('options');
  const merged: Record<string, unknown> | undefined = legacyConnection || connection ? { ...legacyConnection, ...connection } : undefined;
  const connectionKey = connection ? 'connection' : legacyConnection ? 'configuration' : undefined;
  const mergedOptions = legacyOptions || options ? { ...legacyOptions, ...options } : undefined;
  const id = stringAt('id') ?? nonEmpty(merged?.['model']) ?? nonEmpty(merged?.['azure_deployment']) ?? nonEmpty(merged?.['deployment']);
  const api = stringAt('api') ?? stringAt('apiType');
  if (!ok) return undefined;
  if (id === undefined) {
    r.error(['model', 'id'], 'model.id is required (a model name; older files may give configuration.model or azure_deployment)');
    return undefined;
  }
  if (api !== undefined && api.trim().toLowerCase() !== 'chat') {
    r.error(
      ['model', raw['api'] !== undefined ? 'api' : 'apiType'],
      `api "${api}" is not supported: agentport calls chat models (api: chat)`,
    );
    return undefined;
  }

  const claims = providerClaims(raw, connectionKey);
  const explicitBase = BASE_URL_KEYS.map((k) => nonEmpty(merged?.[k])).find((v) => v !== undefined);
  const foreign = claims.find((c) => !OPENAI_PROVIDERS.has(c.value.toLowerCase()));
  if (foreign && explicitBase === undefined) {
    r.error(
      foreign.path,
      `"${foreign.value}" is not a supported connection: agentport calls OpenAI-compatible endpoints only. Give connection.baseURL when "${foreign.value}" serves one (Azure OpenAI: https://<resource>.openai.azure.com/openai/v1/), or define the model in agents/models/ and name it here`,
    );
    return undefined;
  }
  const keyEnv = merged && connectionKey ? keyEnvOf(merged, connectionKey, r) : undefined;
  if (keyEnv === false) return undefined;

  const model: PromptyModelObject = { id };
  const provider = claims[0]?.value;
  if (provider !== undefined) model.provider = provider;
  if (api !== undefined) model.api = api;
  if (merged) {
    // The key itself stays out of the loaded model: only its variable's name is kept.
    const connectionWithoutKey = { ...merged };
    for (const key of KEY_KEYS) delete connectionWithoutKey[key];
    model.connection = connectionWithoutKey;
  }
  if (mergedOptions) model.options = mergedOptions;
  // A plain OpenAI connection's `endpoint` is its base URL; another provider's endpoint is not.
  const baseURL = explicitBase ?? (foreign ? undefined : nonEmpty(merged?.['endpoint']));
  if (baseURL !== undefined) model.baseURL = baseURL;
  if (keyEnv !== undefined) model.apiKeyEnv = keyEnv;
  return model;
}
