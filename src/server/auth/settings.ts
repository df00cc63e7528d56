/**
 * The OAuth settings of `serve --http --auth oauth`, from the command line or
 * the environment (`AGENTPORT_OAUTH_*`; a flag wins over its variable).
 */

export interface OAuthSettings {
  /** The authorization server's issuer identifier: tokens must carry it as `iss`. */
  issuer: string;
  /** Where the issuer's signing keys are (default: discovered from the issuer's metadata). */
  jwksUrl?: string;
  /** The `aud` tokens must carry (default: the server's own `/mcp` URL, its resource identifier). */
  audience?: string;
  /** Scopes every token must have (default none). */
  scopes: string[];
}

export interface OAuthFlags {
  oauthIssuer?: string;
  oauthJwksUrl?: string;
  oauthAudience?: string;
  oauthScopes?: string;
}

/** The settings, or a message saying what is wrong. */
export function oauthSettings(flags: OAuthFlags, env: Readonly<Record<string, string | undefined>>): OAuthSettings | string {
  const pick = (flag: string | undefined, name: string) => (flag ?? env[name])?.trim() || undefined;
  const issuer = pick(flags.oauthIssuer, 'AGENTPORT_OAUTH_ISSUER');
  if (!issuer)
    return '--auth oauth needs --oauth-issuer (or AGENTPORT_OAUTH_ISSUER): the URL of the authorization server that issues the access tokens';
  if (!isHttpUrl(issuer)) return `--oauth-issuer must be an http(s) URL, got "${issuer}"`;
  const jwksUrl = pick(flags.oauthJwksUrl, 'AGENTPORT_OAUTH_JWKS_URL');
  if (jwksUrl && !isHttpUrl(jwksUrl)) return `--oauth-jwks-url must be an http(s) URL, got "${jwksUrl}"`;
  const audience = pick(flags.oauthAudience, 'AGENTPORT_OAUTH_AUDIENCE');
  const scopes = (pick(flags.oauthScopes, 'AGENTPORT_OAUTH_SCOPES') ?? '').split(/[\s,]+/).filter(Boolean);
  return { issuer, scopes, ...(jwksUrl ? { jwksUrl } : {}), ...(audience ? { audience } : {}) };
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
