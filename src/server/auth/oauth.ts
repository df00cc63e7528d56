/**
 * `--auth oauth` at the HTTP layer: agentport as an OAuth 2.1 resource
 * server. Each request to `/mcp` (and the thread endpoints) needs a bearer
 * access token that tokens.ts accepts and that has the required scopes;
 * otherwise it is answered 401 (403 for missing scopes) with a
 * `WWW-Authenticate: Bearer ... resource_metadata="..."` challenge naming
 * the metadata document, which names the authorization server.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bearerAuthChallengeResponse, verifyBearerToken, type AuthInfo } from '@modelcontextprotocol/server';
import { resourceMetadata, type ResourceMetadata } from './metadata.js';
import { isHttpUrl, type OAuthSettings } from './settings.js';
import { JwtVerifier } from './tokens.js';

export interface OAuthGate {
  readonly metadata: ResourceMetadata;
  /** Serves the metadata document when `path` is one of its places; false otherwise. */
  serveMetadata(path: string, req: IncomingMessage, res: ServerResponse): boolean;
  /** The verified token, or undefined once the request has been answered with the challenge. */
  authenticate(req: IncomingMessage, res: ServerResponse): Promise<AuthInfo | undefined>;
}

/**
 * The token's subject: whose threads the request may reach.
 * @public (http.ts imports this module only when OAuth is on)
 */
export function subjectOf(auth: AuthInfo): string {
  const sub = auth.extra?.sub;
  return typeof sub === 'string' ? sub : auth.clientId;
}

/**
 * @public (http.ts imports this module only when OAuth is on)
 * @param serverUrl the URL the server listens at (`http://host:port/mcp`):
 *   the audience and resource unless `--oauth-audience` says otherwise
 */
export function createOAuthGate(settings: OAuthSettings, serverUrl: string): OAuthGate {
  const audience = settings.audience ?? serverUrl;
  const resource = new URL(isHttpUrl(audience) ? audience : serverUrl);
  resource.hash = '';
  const metadata = resourceMetadata(settings, resource);
  const verifier = new JwtVerifier(settings, audience, resource);
  const challenge = { requiredScopes: settings.scopes, resourceMetadataUrl: metadata.url };
  const body = JSON.stringify(metadata.document);
  return {
    metadata,
    serveMetadata(path, req, res) {
      if (!metadata.paths.has(path)) return false;
      const cors = {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET, OPTIONS',
        'access-control-allow-headers': '*',
      };
      if (req.method === 'OPTIONS') res.writeHead(204, cors).end();
      else if (req.method === 'GET' || req.method === 'HEAD')
        res
          .writeHead(200, { ...cors, 'content-type': 'application/json', 'cache-control': 'max-age=3600' })
          .end(req.method === 'GET' ? body : undefined);
      else res.writeHead(405, { ...cors, allow: 'GET, OPTIONS' }).end();
      return true;
    },
    async authenticate(req, res) {
      const [header] = (req.headers.authorization ?? '').split(',');
      try {
        return await verifyBearerToken(header?.trim() || undefined, { verifier, ...challenge });
      } catch (error) {
        const answer = bearerAuthChallengeResponse(error, challenge);
        res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(await answer.text());
        return undefined;
      }
    },
  };
}
