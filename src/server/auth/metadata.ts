/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728): the document a client
 * reads, after a 401, to learn which authorization server issues tokens for
 * this server. Served at `/.well-known/oauth-protected-resource/mcp` (the
 * path-aware place for the `/mcp` endpoint), at the bare
 * `/.well-known/oauth-protected-resource`, and at the place derived from
 * the public resource URL when a proxy serves it under another path.
 */
import { getOAuthProtectedResourceMetadataUrl, type OAuthProtectedResourceMetadata } from '@modelcontextprotocol/server';
import type { OAuthSettings } from './settings.js';

const METADATA_PATH = '/.well-known/oauth-protected-resource';

export interface ResourceMetadata {
  /** The document. */
  document: OAuthProtectedResourceMetadata;
  /** Its absolute URL, for `WWW-Authenticate: Bearer resource_metadata="..."`. */
  url: string;
  /** Request paths it is served at. */
  paths: ReadonlySet<string>;
}

/**
 * @param resource this server's public `/mcp` URL (the audience when that is a URL, else the bound address)
 */
export function resourceMetadata(settings: OAuthSettings, resource: URL): ResourceMetadata {
  const resourcePath = resource.pathname.replace(/\/$/, '');
  return {
    document: {
      resource: resource.href,
      authorization_servers: [settings.issuer],
      ...(settings.scopes.length ? { scopes_supported: settings.scopes } : {}),
      bearer_methods_supported: ['header'],
      resource_name: 'agentport',
    },
    url: getOAuthProtectedResourceMetadataUrl(resource),
    paths: new Set([METADATA_PATH, `${METADATA_PATH}/mcp`, `${METADATA_PATH}${resourcePath}`]),
  };
}
