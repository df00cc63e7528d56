/**
 * A local OAuth authorization server for tests, as a resource server sees
 * one: its metadata, its keys (JWKS) on loopback, and access tokens it signs.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';

/** An authorization server as far as a resource server sees it: metadata, keys, and tokens it signs. */
export class LocalIssuer {
  private server: Server | undefined;
  private key!: CryptoKey;
  private jwk!: JWK;
  url = '';

  async start(): Promise<void> {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    this.key = privateKey;
    this.jwk = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
    this.server = createServer((req, res) => {
      const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/.well-known/oauth-authorization-server') {
        json({
          issuer: this.url,
          jwks_uri: `${this.url}/jwks`,
          authorization_endpoint: `${this.url}/authorize`,
          token_endpoint: `${this.url}/token`,
          response_types_supported: ['code'],
        });
      } else if (req.url === '/jwks') json({ keys: [this.jwk] });
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /** A token for `sub`, valid for `audience`, with the scope; `claims` and `key` change what is wrong with it. */
  async token(
    sub: string,
    audience: string,
    options: { issuer?: string; expiresAt?: number; scope?: string; key?: CryptoKey } = {},
  ): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ scope: options.scope ?? 'agentport other', client_id: 'test-client' })
      .setProtectedHeader({ alg: 'RS256', kid: 'test-key', typ: 'at+jwt' })
      .setIssuer(options.issuer ?? this.url)
      .setAudience(audience)
      .setSubject(sub)
      .setIssuedAt(now - 60)
      .setExpirationTime(options.expiresAt ?? now + 600)
      .sign(options.key ?? this.key);
  }
}
