/**
 * Access token validation for `--auth oauth`: a bearer JWT signed by one of
 * the issuer's keys (its JWKS, found through the issuer's metadata unless
 * `--oauth-jwks-url` names it), with the configured issuer (`iss`), this
 * server as audience (`aud`), a subject (`sub`), and an expiry (`exp`) that
 * has not passed. Scopes come from `scope` (space-separated, RFC 9068) or
 * `scp` (a list or a string, as some providers send). Required scopes are
 * checked by the caller (see oauth.ts), which answers 403 for them.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import { OAuthError, OAuthErrorCode, type AuthInfo, type OAuthTokenVerifier } from '@modelcontextprotocol/server';
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import type { OAuthSettings } from './settings.js';

/** Signature algorithms accepted: asymmetric only (a JWKS publishes public keys). */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** Leeway for clocks that disagree a little (`nbf`, `iat`; the expiry is checked as it is). */
const CLOCK_TOLERANCE_S = 5;
const DISCOVERY_TIMEOUT_MS = 5000;

type KeySet = ReturnType<typeof createRemoteJWKSet>;

export class JwtVerifier implements OAuthTokenVerifier {
  private keys: Promise<KeySet> | undefined;

  constructor(
    private readonly settings: OAuthSettings,
    /** The audience tokens must be issued for. */
    private readonly audience: string,
    /** This server's resource identifier, reported with the token (AuthInfo.resource). */
    private readonly resource: URL | undefined,
  ) {}

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const keys = await this.keySet();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: this.settings.issuer,
        audience: this.audience,
        algorithms: ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      throw this.rejection(error);
    }
    const subject = payload.sub;
    if (typeof subject !== 'string' || !subject) throw new OAuthError(OAuthErrorCode.InvalidToken, 'The access token has no subject (sub)');
    const clientId =
      [payload.client_id, payload.azp].find((value): value is string => typeof value === 'string' && value.length > 0) ?? subject;
    return {
      token,
      clientId,
      scopes: scopesOf(payload),
      ...(typeof payload.exp === 'number' ? { expiresAt: payload.exp } : {}),
      ...(this.resource ? { resource: this.resource } : {}),
      extra: { sub: subject, iss: payload.iss },
    };
  }

  /** The issuer's key set, discovered once (a failed discovery is tried again on the next request). */
  private keySet(): Promise<KeySet> {
    this.keys ??= this.jwksUrl().then(
      (url) => createRemoteJWKSet(new URL(url)),
      (error: unknown) => {
        this.keys = undefined;
        log.error(`OAuth: cannot find the signing keys of ${this.settings.issuer}: ${errorMessage(error)}`);
        throw new OAuthError(OAuthErrorCode.ServerError, "The authorization server's keys cannot be fetched");
      },
    );
    return this.keys;
  }

  private async jwksUrl(): Promise<string> {
    if (this.settings.jwksUrl) return this.settings.jwksUrl;
    const metadata = await discoverIssuer(this.settings.issuer);
    log.info(`OAuth: signing keys of ${this.settings.issuer} at ${metadata.jwks_uri}`);
    return metadata.jwks_uri;
  }

  /** What a failed verification tells the client: 401 for the token's own faults, 500 when the keys cannot be had. */
  private rejection(error: unknown): OAuthError {
    if (
      !(error instanceof errors.JOSEError) ||
      error instanceof errors.JWKSTimeout ||
      error.code === 'ERR_JOSE_GENERIC' ||
      error instanceof errors.JWKSInvalid
    ) {
      log.error(`OAuth: cannot check a token against ${this.settings.issuer}'s keys: ${errorMessage(error)}`);
      return new OAuthError(OAuthErrorCode.ServerError, "The authorization server's keys cannot be fetched");
    }
    const invalid = (message: string) => new OAuthError(OAuthErrorCode.InvalidToken, message);
    if (error instanceof errors.JWTExpired) return invalid('The access token has expired');
    if (error instanceof errors.JWTClaimValidationFailed) {
      if (error.claim === 'iss') return invalid(`The access token was not issued by ${this.settings.issuer}`);
      if (error.claim === 'aud') return invalid(`The access token is not for this server (its audience must be ${this.audience})`);
      if (error.claim === 'sub') return invalid('The access token has no subject (sub)');
      if (error.claim === 'exp') return invalid('The access token has no expiry (exp)');
      return invalid(`The access token is not valid: ${error.message}`);
    }
    if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWSSignatureVerificationFailed) {
      return invalid(`The access token is not signed by ${this.settings.issuer}`);
    }
    return invalid('The access token is not a valid JWT');
  }
}

function scopesOf(payload: JWTPayload): string[] {
  const raw = payload.scope ?? payload.scp;
  if (typeof raw === 'string') return raw.split(' ').filter(Boolean);
  if (Array.isArray(raw)) return raw.filter((scope): scope is string => typeof scope === 'string');
  return [];
}

interface IssuerMetadata {
  issuer: string;
  jwks_uri: string;
}

/**
 * The issuer's metadata: OAuth authorization server metadata (RFC 8414),
 * then OpenID Connect discovery, at the places the MCP authorization spec
 * lists. The document must name the same issuer.
 */
async function discoverIssuer(issuer: string): Promise<IssuerMetadata> {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, '');
  const candidates = path
    ? [
        `${url.origin}/.well-known/oauth-authorization-server${path}`,
        `${url.origin}/.well-known/openid-configuration${path}`,
        `${url.origin}${path}/.well-known/openid-configuration`,
      ]
    : [`${url.origin}/.well-known/oauth-authorization-server`, `${url.origin}/.well-known/openid-configuration`];
  const problems: string[] = [];
  for (const candidate of candidates) {
    let document: unknown;
    try {
      const response = await fetch(candidate, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS),
      });
      if (!response.ok) {
        problems.push(`${candidate}: HTTP ${response.status}`);
        continue;
      }
      document = await response.json();
    } catch (error) {
      problems.push(`${candidate}: ${errorMessage(error)}`);
      continue;
    }
    const metadata = document as Partial<IssuerMetadata> | null;
    if (typeof metadata?.jwks_uri !== 'string' || !metadata.jwks_uri) {
      problems.push(`${candidate}: no jwks_uri (set --oauth-jwks-url)`);
      continue;
    }
    if (typeof metadata.issuer !== 'string' || metadata.issuer.replace(/\/$/, '') !== issuer.replace(/\/$/, '')) {
      problems.push(`${candidate}: names the issuer ${JSON.stringify(metadata.issuer)}, not ${issuer}`);
      continue;
    }
    return { issuer: metadata.issuer, jwks_uri: metadata.jwks_uri };
  }
  throw new Error(`no usable metadata (${problems.join('; ')})`);
}
