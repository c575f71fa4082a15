// Type declarations for the auth-sidecar Node client (index.js).
import { EventEmitter } from 'node:events';
import type { Writable } from 'node:stream';

export declare const ENV_BINARY: 'AUTH_SIDECAR_BIN';
export declare const ENV_SOCKET: 'AUTH_SIDECAR_SOCK';
export declare const BINARY_NAME: 'auth-sidecar';

// ---------------------------------------------------------------- protocol shapes

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** `getCacheSummary`'s result: never a token's value. */
export interface CacheSummary {
  accessTokens: Array<{ homeAccountId: string; tenantId: string; scopes: string[]; expiresOn: number }>;
  refreshTokenAccounts: string[];
  lastRefreshError: Record<string, unknown> | null;
  /** only for an app signing in with a client assertion: its source and the current assertion's expiry */
  clientAssertion?: { source: string; expiresOn: number | null; error: string | null };
}

export interface CacheConfiguration { path?: string; persistence?: 'memory' | 'file'; encryption?: { keyFile: string } }

/** The configuration keys of `initialize` (protocol/README.md). */
export interface Configuration {
  clientId?: string;
  authority?: string;
  redirectUri?: string;
  redirectPort?: number;
  knownAuthorities?: string[] | string;
  scopes?: string[] | string;
  graphEndpoint?: string;
  /** a file path, 'memory', or the protocol's object */
  cache?: string | CacheConfiguration;
  sharedDeviceMode?: boolean;
  clientCapabilities?: string[] | string;
  browser?: 'system' | 'client';
  /** detected from the URL unless given; 'oidc': any OpenID Connect issuer */
  authorityType?: 'aad' | 'b2c' | 'ciam' | 'oidc';
  /** validate AAD hosts and find their aliases (default true) */
  instanceDiscovery?: boolean;
  /** time limit of every HTTP request to the identity service and Graph, 1-300 s (default 30) */
  httpTimeoutSeconds?: number;
  /** how long a browser sign-in waits for the redirect, 1-3600 s (default 600) */
  interactiveTimeoutSeconds?: number;
  /** an app's client assertion source (workload identity federation): acquireTokenSilent answers app tokens */
  clientAssertion?:
    | { file: string }
    | { githubActions: { audience?: string } }
    | { azurePipelines: { serviceConnectionId: string } }
    | { command: string[] };
  /** a profile of the configuration file (its "profiles"), the other keys layered over it */
  profile?: string;
  [key: string]: unknown;
}

export interface Account {
  homeAccountId: string;
  localAccountId: string;
  environment: string;
  tenantId: string;
  username: string;
  name?: string;
  idTokenClaims?: Record<string, JsonValue>;
}

export type AccountRef = { homeAccountId: string } | { username: string };
/** An Account (its homeAccountId is used), an AccountRef, or a username. */
export type AccountLike = Account | AccountRef | string;

export interface TokenResult {
  accessToken: string;
  /** 'ssh-cert' for an sshCertificate request: accessToken is then the OpenSSH certificate, base64;
   * 'pop' for a proofOfPossession request: send authorizationHeader, never the token alone */
  tokenType: 'Bearer' | 'ssh-cert' | 'pop' | string;
  /** with tokenType 'pop': a fresh signed HTTP request for the request's proofOfPossession */
  signedHttpRequest?: string;
  /** with tokenType 'pop': 'PoP ' + signedHttpRequest */
  authorizationHeader?: string;
  /** Unix seconds */
  expiresOn: number;
  extExpiresOn?: number;
  refreshOn?: number;
  scopes: string[];
  account: Account;
  idToken?: string;
  tenantId: string;
  authority: string;
  correlationId: string;
  fromCache: boolean;
}

export interface CurrentAccount { account: Account | null; previousAccount: Account | null }

export interface DeviceInformation {
  deviceMode: 'private' | 'shared';
  sharedDeviceModeSource: string;
  extraDeviceInformation: Record<string, JsonValue>;
  brokerAvailable: boolean;
  [key: string]: unknown;
}

export interface GraphResponse {
  status: number;
  /** lower-case names */
  headers: Record<string, string>;
  /** parsed JSON, text, or null */
  body: JsonValue;
}

/** `browserSignOut`: present when the browser part was asked for (`signoutFromBrowser`, or a shared device). */
export interface SignoutResult { signedOut: true; account?: Account | null; browserSignOut?: 'opened' | 'notSupported' | 'failed' }

export interface DeviceCode {
  requestId: number | string;
  userCode: string;
  verificationUri: string;
  message: string;
  /** Unix seconds */
  expiresOn: number;
}

export interface InitializeResult {
  serverInfo: { name: string; version: string };
  protocolVersion: string;
  capabilities: {
    methods?: string[]; notifications?: string[]; serverRequests?: string[];
    serverNotifications?: string[]; framings?: string[]; [key: string]: unknown;
  };
  configuration?: Configuration;
  /** the configuration file's profile this session uses (absent: a flat file, or none) */
  profile?: string;
}

export interface AcquireTokenParams {
  scopes?: string[] | string;
  promptType?: 'promptIfNecessary' | 'selectAccount' | 'login' | 'consent' | 'create';
  loginHint?: string;
  domainHint?: string;
  account?: AccountLike;
  authority?: string;
  claims?: string;
  extraScopesToConsent?: string[] | string;
  extraQueryParameters?: Record<string, string>;
  /** 'paste': the paste-back sign-in (`onPasteSignIn` shows the URL and returns the address pasted back). */
  flow?: 'browser' | 'deviceCode' | 'paste';
  correlationId?: string;
  /** an SSH certificate for this OpenSSH RSA public key instead of a bearer token (tokenType 'ssh-cert') */
  sshCertificate?: { publicKey: string };
  /** a proof-of-possession token for this resource request instead of a bearer token (tokenType 'pop'; the result adds signedHttpRequest and authorizationHeader) */
  proofOfPossession?: ProofOfPossession;
}

export interface AcquireTokenSilentParams {
  scopes?: string[] | string;
  account?: AccountLike;
  authority?: string;
  forceRefresh?: boolean;
  claims?: string;
  correlationId?: string;
  /** an SSH certificate for this OpenSSH RSA public key instead of a bearer token (tokenType 'ssh-cert') */
  sshCertificate?: { publicKey: string };
  /** a proof-of-possession token for this resource request instead of a bearer token (tokenType 'pop'; the result adds signedHttpRequest and authorizationHeader) */
  proofOfPossession?: ProofOfPossession;
}

/** The resource request a PoP token and its signed HTTP request are for: method and url, or
 * (kubelogin's Azure Arc shape) resourceId, the SHR's u for every request (no m, p). */
export type ProofOfPossession = PopTarget & {
  /** the resource's nonce (WWW-Authenticate: PoP nonce="...") */
  nonce?: string;
  /** client_claims of the signed HTTP request (kubelogin's 'u=<ARM id>' for Azure Arc) */
  clientClaims?: string;
};

export type PopTarget = { method: string; url: string; resourceId?: never } | { resourceId: string; method?: never; url?: never };

export type SignHttpRequestParams = ProofOfPossession & {
  scopes?: string[] | string;
  account?: AccountLike;
  correlationId?: string;
};

export interface SignHttpRequestResult {
  signedHttpRequest: string;
  /** 'PoP ' + signedHttpRequest */
  authorizationHeader: string;
  tokenType: 'pop';
  /** Unix seconds, the PoP token's */
  expiresOn: number;
  fromCache: boolean;
  correlationId: string;
}

export interface SignoutParams { account?: AccountLike; signoutFromBrowser?: boolean }

export interface CallGraphParams {
  path?: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | string;
  apiVersion?: 'v1.0' | 'beta';
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: JsonValue;
  account?: AccountLike;
  scopes?: string[] | string;
  allPages?: boolean;
  maxPages?: number;
  timeoutSeconds?: number;
  correlationId?: string;
}

// ---------------------------------------------------------------- client

export interface CallOptions {
  /** Aborting sends `$/cancelRequest`; the call rejects with RequestCancelledError. */
  signal?: AbortSignal;
  /** Milliseconds; then `$/cancelRequest` and RequestTimeoutError. Default: the client's `timeout`. */
  timeout?: number;
}

export interface AcquireTokenOptions extends CallOptions {
  /** This call's device code handler (instead of the 'deviceCode' event). */
  onDeviceCode?: (code: DeviceCode) => unknown;
}

export interface ClientOptions extends Configuration {
  /** Path of the binary; default $AUTH_SIDECAR_BIN, then `auth-sidecar` on PATH. */
  binary?: string;
  /** A running agent's Unix socket to connect to instead of starting a process (checked to be the
   * user's own first); default $AUTH_SIDECAR_SOCK (no agent there: a process); false: always a process.
   * `binary`, `args`, `env`, `cwd` and `stderr` apply to a process only. */
  socketPath?: string | false;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Send `initialize` at start; default: when any configuration key is given. */
  initialize?: boolean;
  /** Configuration keys, as an alternative to giving them at the top level. */
  config?: Configuration;
  /** Answers the server's `openUrl` requests (makes `browser` default to 'client'): open the URL and
   * return; return false or throw to refuse (the sign-in fails with BrowserUnavailableError). */
  onOpenUrl?: (url: string, params: { url: string; requestId?: number | string }) => unknown;
  /** Answers the server's `pasteSignIn` requests (acquireToken with flow 'paste'): show the URL, return
   * (or resolve to) what the user pasted back, the address the browser ended on or its code; return
   * nothing or throw to give up (the sign-in fails with UserCanceledError). */
  onPasteSignIn?: (url: string, params: { url: string; requestId: number | string }) => string | undefined | Promise<string | undefined>;
  /** Listener for the 'deviceCode' event. */
  onDeviceCode?: (code: DeviceCode) => unknown;
  /** Default per-call timeout in ms (default: none). */
  timeout?: number;
  /** Timeout of `initialize` at start, ms (default 15000). */
  startTimeout?: number;
  /** How long close() waits for shutdown / exit before SIGKILL, ms (default 5000). */
  shutdownTimeout?: number;
  /** Copy the sidecar's stderr here (it is always kept as `stderrTail`). */
  stderr?: Writable;
}

export interface SidecarClientEvents {
  deviceCode: [code: DeviceCode];
  notification: [method: string, params: unknown];
  stderr: [text: string];
  exit: [error: SidecarProcessError];
}

export declare class SidecarClient extends EventEmitter {
  constructor(options?: ClientOptions);
  /** Spawn the sidecar and `initialize` it. */
  static start(options?: ClientOptions): Promise<SidecarClient>;
  /** The process's binary (null for an agent connection; before start(), the option when an agent may serve). */
  readonly binary: string | null;
  /** The agent's socket once connected to one, else null. */
  readonly socketPath: string | null;
  serverInfo: InitializeResult | null;
  /** Set once the process is gone. */
  dead: SidecarProcessError | null;
  readonly pid: number | undefined;
  readonly exitCode: number | null;
  readonly stderrTail: string;

  start(): Promise<this>;
  initialize(config?: Configuration, options?: CallOptions): Promise<InitializeResult>;
  /** Cancel what is in flight, `shutdown` + `exit`, wait; SIGKILL after `shutdownTimeout`. Resolves to the exit code. */
  close(options?: { graceful?: boolean }): Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
  [Symbol.asyncDispose](): Promise<void>;

  call<T = unknown>(method: string, params?: unknown, options?: CallOptions): Promise<T>;
  notify(method: string, params?: unknown): void;

  ping(options?: CallOptions): Promise<Record<string, never>>;
  getDeviceInformation(options?: CallOptions): Promise<DeviceInformation>;
  getCurrentAccount(options?: CallOptions): Promise<CurrentAccount>;
  getAccounts(params?: { username?: string }, options?: CallOptions): Promise<Account[]>;
  /** What the cache holds for this client, without a secret. */
  getCacheSummary(options?: CallOptions): Promise<CacheSummary>;
  /** Make a cached account the current one (MSAL.js's setActiveAccount); returns it and the one current before. */
  setCurrentAccount(account: AccountLike, options?: CallOptions): Promise<CurrentAccount>;
  acquireToken(params?: AcquireTokenParams, options?: AcquireTokenOptions): Promise<TokenResult>;
  acquireTokenSilent(params?: AcquireTokenSilentParams, options?: CallOptions): Promise<TokenResult>;
  signout(params?: SignoutParams, options?: CallOptions): Promise<SignoutResult>;
  callGraph(params?: CallGraphParams | string, options?: CallOptions): Promise<GraphResponse>;
  /** A fresh signed HTTP request (PoP) with the cached PoP token (no token request while it is valid). */
  signHttpRequest(params: SignHttpRequestParams, options?: CallOptions): Promise<SignHttpRequestResult>;

  on<K extends keyof SidecarClientEvents>(event: K, listener: (...args: SidecarClientEvents[K]) => void): this;
  once<K extends keyof SidecarClientEvents>(event: K, listener: (...args: SidecarClientEvents[K]) => void): this;
  off<K extends keyof SidecarClientEvents>(event: K, listener: (...args: SidecarClientEvents[K]) => void): this;
}

export default SidecarClient;

// ---------------------------------------------------------------- errors

export interface ErrorData {
  name: string;
  member?: string;
  oauthError?: string;
  oauthErrorDescription?: string;
  suberror?: string;
  errorCodes?: number[];
  correlationId?: string;
  claims?: string;
  grantedScopes?: string[];
  declinedScopes?: string[];
  httpStatus?: number;
  retryAfter?: number;
  [key: string]: unknown;
}

export interface ErrorObject { code: number; message: string; data?: ErrorData }

/** Base of every error: `code` (null for process failures), `message`, `data`, `raw`. */
export declare class SidecarError extends Error {
  constructor(message?: string, options?: { code?: number | null; data?: ErrorData; raw?: ErrorObject; cause?: unknown });
  static readonly code?: number;
  static readonly errorName?: string;
  code: number | null;
  data: ErrorData;
  raw: ErrorObject;
  /** data.name */
  readonly errorName: string;
  readonly suberror: string | undefined;
  readonly claims: string | undefined;
  readonly oauthError: string | undefined;
  readonly correlationId: string | undefined;
  readonly retryAfter: number | undefined;
  readonly member: string | undefined;
}
export declare class JsonRpcError extends SidecarError {}
export declare class MsalError extends SidecarError {}
export declare class PlatformError extends SidecarError {}

export declare class ParseError extends JsonRpcError {}
export declare class InvalidRequestError extends JsonRpcError {}
export declare class MethodNotFoundError extends JsonRpcError {}
export declare class InvalidParamsError extends JsonRpcError {}
export declare class InternalRpcError extends JsonRpcError {}
export declare class ServerNotInitializedError extends JsonRpcError {}
export declare class RequestCancelledError extends JsonRpcError {}
export declare class RequestTimeoutError extends RequestCancelledError {}

export declare class InternalError extends MsalError {}
export declare class WorkplaceJoinRequiredError extends MsalError {}
export declare class InteractionRequiredError extends MsalError {}
export declare class ServerDeclinedScopesError extends MsalError {}
export declare class ServerProtectionPoliciesRequiredError extends MsalError {}
export declare class UserCanceledError extends MsalError {}
export declare class ServerError extends MsalError {}

export declare class NetworkError extends PlatformError {}
export declare class ServiceTimeoutError extends PlatformError {}
export declare class TlsError extends PlatformError {}
export declare class MalformedResponseError extends PlatformError {}
export declare class CacheUnavailableError extends PlatformError {}
export declare class BrowserUnavailableError extends PlatformError {}
export declare class InteractiveInProgressError extends PlatformError {}
export declare class AuthorityNotTrustedError extends PlatformError {}
export declare class InsecureAuthorityError extends PlatformError {}
export declare class InvalidConfigurationError extends PlatformError {}
export declare class AccountNotFoundError extends PlatformError {}
export declare class AmbiguousAccountError extends PlatformError {}
export declare class PasswordResetRequiredError extends PlatformError {}
/** -51014: the agent's forward socket refused the request under its policy (`data.name` says which rule). */
export declare class ForwardRefusedError extends PlatformError {}
/** -51015: `broker` is "required" and the Linux identity broker cannot be called. */
export declare class BrokerUnavailableError extends PlatformError {}
/** -51016: the backend (the broker, the app identity) does not issue the token kind asked for (`data.backend`, `data.tokenKind`). */
export declare class TokenKindNotServedError extends PlatformError {}
/** -51017: a paste-back sign-in's pasted address is not this sign-in's (`data.name`: pastedAddressRefused,
 * pastedStateMismatch, pastedCodeFromAnotherSignIn); nothing was cached. */
export declare class PastedAddressRefusedError extends PlatformError {}
/** -51018: the tenant's Conditional Access refuses the device code flow; sign in with flow 'paste' (or 'browser'). */
export declare class DeviceCodeBlockedError extends PlatformError {}

export declare class SidecarProcessError extends SidecarError {
  constructor(message: string, options?: { stderrTail?: string; exitCode?: number | null; signal?: NodeJS.Signals | null; cause?: unknown });
  stderrTail: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}
export declare class SidecarNotFoundError extends SidecarProcessError {}
export declare class SidecarExitedError extends SidecarProcessError {}
/** No agent answers at the socket. */
export declare class AgentUnavailableError extends SidecarProcessError {}
/** The socket is not the user's own: nothing was sent. */
export declare class UntrustedSocketError extends SidecarProcessError {}

export declare const ERROR_CLASSES: Readonly<Record<number, typeof SidecarError>>;
/** The error for a JSON-RPC error object; a ServerNotInitializedError says what is missing and
 * the file to write (`env`: the sidecar's environment, default process.env). */
export declare function errorFromObject(error: unknown, env?: NodeJS.ProcessEnv): SidecarError;
/** "no client id configured: pass clientId: 'ID', or write {"clientId": "ID"} to <the default file>". */
export declare function notConfiguredMessage(env?: NodeJS.ProcessEnv): string;
/** The binary the npm package brings (bin/auth-sidecar in the package); absent in the source tree. */
export declare const PACKAGED_BINARY: string;
/** The binary: the argument, else $AUTH_SIDECAR_BIN, else PACKAGED_BINARY, else `auth-sidecar` on PATH. */
export declare function findBinary(binary?: string): string;
/** [path, explicit]: the socketPath option, else $AUTH_SIDECAR_SOCK; [null, false] for a process. */
export declare function agentSocket(socketPath?: string | false | null): [string | null, boolean];
/** The absolute path, or throws UntrustedSocketError / AgentUnavailableError. */
export declare function checkAgentSocket(socketPath: string): string;
export declare function configParams(config: Configuration): Record<string, unknown>;
export declare function accountRef(account: AccountLike | null | undefined): AccountRef | undefined;
