import type { IncomingMessage, ServerResponse } from 'node:http';

// The part of oidc-provider (v9, shipped without types) this module uses; the package is loaded with a dynamic import
// (provider.ts) only when the provider is enabled.

type Obj = Record<string, any>;

/** Koa's context as oidc-provider extends it. */
export interface ProviderContext {
  oidc: any;
  status: number;
  body: unknown;
  type: string;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  get(header: string): string;
  set(header: string, value: string): void;
  append(header: string, value: string): void;
  /** Node's request; `body` is set when the platform parsed the form before handing it over (/oauth/token). */
  req: { body?: Record<string, unknown> };
}

export interface InteractionDetails {
  uid: string;
  iat: number;
  exp: number;
  prompt: { name: string; reasons: string[]; details: Obj };
  params: Obj;
  session?: { accountId: string; uid: string; cookie: string };
  grantId?: string;
  lastSubmission?: Obj;
  result?: Obj;
}

export interface GrantInstance {
  jti: string;
  accountId: string;
  clientId: string;
  addOIDCScope(scope: string): void;
  addOIDCClaims(claims: string[]): void;
  addResourceScope(resource: string, scope: string): void;
  save(): Promise<string>;
}

export interface Provider {
  proxy: boolean;
  issuer: string;
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  use(middleware: (ctx: ProviderContext, next: () => Promise<void>) => Promise<void>): void;
  on(event: string, listener: (...args: any[]) => void): void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
  interactionResult(
    req: IncomingMessage,
    res: ServerResponse,
    result: Obj,
    options?: { mergeWithLastSubmission?: boolean },
  ): Promise<string>;
  Grant: {
    new (a: { accountId: string; clientId: string }): GrantInstance;
    find(id: string): Promise<GrantInstance | undefined>;
  };
  Client: { prototype: any; find(id: string): Promise<any> };
  AccessToken: { prototype: any };
  IdToken: { prototype: any };
}

export interface ProviderModule {
  default: new (issuer: string, configuration: Obj) => Provider;
  errors: Record<string, new (description?: string) => Error>;
  interactionPolicy: {
    base(): any;
    Prompt: new (...args: any[]) => any;
    Check: { new (...args: any[]): any; REQUEST_PROMPT: boolean; NO_NEED_TO_PROMPT: boolean };
  };
}
