// auth-sidecar client for Node.js: spawns the auth-sidecar binary and talks JSON-RPC 2.0
// (newline-delimited) over its stdin/stdout, or connects to a running agent's Unix socket.
// ES module, no dependencies.
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { accessSync, constants as fsConstants, lstatSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ENV_BINARY = 'AUTH_SIDECAR_BIN';
export const ENV_SOCKET = 'AUTH_SIDECAR_SOCK';
export const BINARY_NAME = 'auth-sidecar';
const CANCEL_GRACE_MS = 3000;
const STDERR_TAIL_BYTES = 8192;
const CLIENT_OPTIONS = new Set(['binary', 'socketPath', 'args', 'env', 'cwd', 'initialize', 'onOpenUrl',
  'onPasteSignIn', 'onDeviceCode', 'timeout', 'startTimeout', 'shutdownTimeout', 'stderr', 'config']);

// ---------------------------------------------------------------------------- errors

/** Base of every error of this package: `code`, `message`, `data` (with `data.name`), `raw`. */
export class SidecarError extends Error {
  constructor(message = '', { code, data, raw, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    this.code = code === undefined ? new.target.code ?? null : code;
    this.data = data && typeof data === 'object' ? { ...data } : { name: new.target.errorName ?? 'sidecarError' };
    this.raw = raw ?? { code: this.code, message, data: this.data };
  }
  /** `data.name`, the protocol's camelCase error name. */
  get errorName() { return this.data.name; }
  get suberror() { return this.data.suberror; }
  get claims() { return this.data.claims; }
  get oauthError() { return this.data.oauthError; }
  get correlationId() { return this.data.correlationId; }
  get retryAfter() { return this.data.retryAfter; }
  get member() { return this.data.member; }
}
/** JSON-RPC / LSP protocol faults (-32700..-32600, -32002, -32800). */
export class JsonRpcError extends SidecarError {}
/** Authentication failures with MSAL's public codes (-50000..-50006). */
export class MsalError extends SidecarError {}
/** Failures MSAL leaves to the platform (-51001..-51999). */
export class PlatformError extends SidecarError {}

function define(base, code, errorName) {
  const cls = class extends base {};
  cls.code = code;
  cls.errorName = errorName;
  return cls;
}
function named(cls, name) { Object.defineProperty(cls, 'name', { value: name }); return cls; }

export const ParseError = named(define(JsonRpcError, -32700, 'parseError'), 'ParseError');
export const InvalidRequestError = named(define(JsonRpcError, -32600, 'invalidRequest'), 'InvalidRequestError');
export const MethodNotFoundError = named(define(JsonRpcError, -32601, 'methodNotFound'), 'MethodNotFoundError');
export const InvalidParamsError = named(define(JsonRpcError, -32602, 'invalidParams'), 'InvalidParamsError');
export const InternalRpcError = named(define(JsonRpcError, -32603, 'internalError'), 'InternalRpcError');
export const ServerNotInitializedError = named(define(JsonRpcError, -32002, 'serverNotInitialized'), 'ServerNotInitializedError');
export const RequestCancelledError = named(define(JsonRpcError, -32800, 'requestCancelled'), 'RequestCancelledError');
/** The client's timeout ran out; the request was cancelled with $/cancelRequest. */
export const RequestTimeoutError = named(define(RequestCancelledError, -32800, 'requestCancelled'), 'RequestTimeoutError');
export const InternalError = named(define(MsalError, -50000, 'internal'), 'InternalError');
export const WorkplaceJoinRequiredError = named(define(MsalError, -50001, 'workplaceJoinRequired'), 'WorkplaceJoinRequiredError');
export const InteractionRequiredError = named(define(MsalError, -50002, 'interactionRequired'), 'InteractionRequiredError');
export const ServerDeclinedScopesError = named(define(MsalError, -50003, 'serverDeclinedScopes'), 'ServerDeclinedScopesError');
export const ServerProtectionPoliciesRequiredError = named(define(MsalError, -50004, 'serverProtectionPoliciesRequired'), 'ServerProtectionPoliciesRequiredError');
export const UserCanceledError = named(define(MsalError, -50005, 'userCanceled'), 'UserCanceledError');
export const ServerError = named(define(MsalError, -50006, 'serverError'), 'ServerError');
export const NetworkError = named(define(PlatformError, -51001, 'networkError'), 'NetworkError');
export const ServiceTimeoutError = named(define(PlatformError, -51002, 'timeout'), 'ServiceTimeoutError');
export const TlsError = named(define(PlatformError, -51003, 'tlsError'), 'TlsError');
export const MalformedResponseError = named(define(PlatformError, -51004, 'malformedResponse'), 'MalformedResponseError');
export const CacheUnavailableError = named(define(PlatformError, -51005, 'cacheUnavailable'), 'CacheUnavailableError');
export const BrowserUnavailableError = named(define(PlatformError, -51006, 'browserUnavailable'), 'BrowserUnavailableError');
export const InteractiveInProgressError = named(define(PlatformError, -51007, 'interactiveInProgress'), 'InteractiveInProgressError');
export const AuthorityNotTrustedError = named(define(PlatformError, -51008, 'authorityNotTrusted'), 'AuthorityNotTrustedError');
export const InsecureAuthorityError = named(define(PlatformError, -51009, 'insecureAuthority'), 'InsecureAuthorityError');
export const InvalidConfigurationError = named(define(PlatformError, -51010, 'invalidConfiguration'), 'InvalidConfigurationError');
export const AccountNotFoundError = named(define(PlatformError, -51011, 'accountNotFound'), 'AccountNotFoundError');
export const AmbiguousAccountError = named(define(PlatformError, -51012, 'ambiguousAccount'), 'AmbiguousAccountError');
export const PasswordResetRequiredError = named(define(PlatformError, -51013, 'passwordResetRequired'), 'PasswordResetRequiredError');
export const ForwardRefusedError = named(define(PlatformError, -51014, 'forwardRefused'), 'ForwardRefusedError');
export const BrokerUnavailableError = named(define(PlatformError, -51015, 'brokerUnavailable'), 'BrokerUnavailableError');
export const TokenKindNotServedError = named(define(PlatformError, -51016, 'tokenKindNotServed'), 'TokenKindNotServedError');
export const PastedAddressRefusedError = named(define(PlatformError, -51017, 'pastedAddressRefused'), 'PastedAddressRefusedError');
export const DeviceCodeBlockedError = named(define(PlatformError, -51018, 'deviceCodeBlocked'), 'DeviceCodeBlockedError');

/** The process could not be started or is gone: `code` null, `stderrTail`, `exitCode`, `signal`. */
export class SidecarProcessError extends SidecarError {
  constructor(message, { stderrTail = '', exitCode = null, signal = null, cause } = {}) {
    super(stderrTail ? `${message}\n--- auth-sidecar stderr (tail) ---\n${stderrTail.trimEnd()}` : message,
      { code: null, data: { name: 'sidecarProcess' }, cause });
    this.stderrTail = stderrTail;
    this.exitCode = exitCode;
    this.signal = signal;
  }
}
/** The binary was not found or is not executable. */
export class SidecarNotFoundError extends SidecarProcessError {}
/** The process exited, closed its output or was killed; or the agent closed the connection. */
export class SidecarExitedError extends SidecarProcessError {}
/** No agent answers at the socket (none there, or a dead agent's socket). */
export class AgentUnavailableError extends SidecarProcessError {}
/** The socket is not the user's own (its directory or itself someone else's, others may enter
 * the directory, or not a socket): nothing was sent. */
export class UntrustedSocketError extends SidecarProcessError {}

export const ERROR_CLASSES = Object.freeze(Object.fromEntries([
  ParseError, InvalidRequestError, MethodNotFoundError, InvalidParamsError, InternalRpcError,
  ServerNotInitializedError, RequestCancelledError, InternalError, WorkplaceJoinRequiredError,
  InteractionRequiredError, ServerDeclinedScopesError, ServerProtectionPoliciesRequiredError, UserCanceledError,
  ServerError, NetworkError, ServiceTimeoutError, TlsError, MalformedResponseError, CacheUnavailableError,
  BrowserUnavailableError, InteractiveInProgressError, AuthorityNotTrustedError, InsecureAuthorityError,
  InvalidConfigurationError, AccountNotFoundError, AmbiguousAccountError, PasswordResetRequiredError,
  ForwardRefusedError, BrokerUnavailableError, TokenKindNotServedError, PastedAddressRefusedError, DeviceCodeBlockedError,
].map((cls) => [cls.code, cls])));

/** The configuration file the sidecar reads by default (Sources/Sidecar/UserPaths.swift):
 * $AUTH_SIDECAR_CONFIG, else $XDG_CONFIG_HOME/auth-sidecar/config.json, else
 * ~/.config/auth-sidecar/config.json (each only when an absolute path). */
function defaultConfigFile(env) {
  if (env.AUTH_SIDECAR_CONFIG?.startsWith('/')) return env.AUTH_SIDECAR_CONFIG;
  if (env.XDG_CONFIG_HOME?.startsWith('/')) return `${env.XDG_CONFIG_HOME}/auth-sidecar/config.json`;
  if (env.HOME?.startsWith('/')) return `${env.HOME}/.config/auth-sidecar/config.json`;
  return '$XDG_CONFIG_HOME/auth-sidecar/config.json';
}

/** What a ServerNotInitializedError says (the command line's sentence): what is missing and
 * the file to write. `env`: the sidecar's environment (default: this process's). */
export function notConfiguredMessage(env = process.env) {
  return `no client id configured: pass clientId: 'ID', or write {"clientId": "ID"} to ${defaultConfigFile(env)}`;
}

/** The error instance for a JSON-RPC error object `{code, message, data}`. A
 * ServerNotInitializedError says what is missing and the file to write (notConfiguredMessage;
 * `env` is the sidecar's environment); `raw` keeps the server's words. */
export function errorFromObject(error, env = process.env) {
  if (!error || typeof error !== 'object') {
    return new InternalRpcError(`malformed error object: ${JSON.stringify(error)}`, { raw: { error } });
  }
  const { code, data } = error;
  const message = code === ServerNotInitializedError.code ? notConfiguredMessage(env) : error.message ?? '';
  let cls = Number.isInteger(code) ? ERROR_CLASSES[code] : undefined;
  if (!cls) {
    if (code <= -50000 && code >= -50999) cls = MsalError;
    else if (code <= -51000 && code >= -51999) cls = PlatformError;
    else if (code <= -32000 && code >= -32768) cls = JsonRpcError;
    else cls = SidecarError;
  }
  return new cls(String(message), { code, data: data && typeof data === 'object' ? data : undefined, raw: error });
}

// ---------------------------------------------------------------------------- helpers

/** The binary the npm package brings (bin/auth-sidecar beside this file); absent in the source tree. */
export const PACKAGED_BINARY = fileURLToPath(new URL(`./bin/${BINARY_NAME}`, import.meta.url));

/** The binary: the argument, else $AUTH_SIDECAR_BIN, else the package's own (PACKAGED_BINARY),
 * else `auth-sidecar` on PATH. */
export function findBinary(binary) {
  let source;
  let candidate;
  if (binary != null) { source = 'the binary option'; candidate = String(binary); }
  else if (process.env[ENV_BINARY]) { source = `$${ENV_BINARY}`; candidate = process.env[ENV_BINARY]; }
  else if (isExecutableFile(PACKAGED_BINARY)) return PACKAGED_BINARY;
  else {
    for (const dir of (process.env.PATH || '').split(path.delimiter)) {
      if (!dir) continue;
      const full = path.join(dir, BINARY_NAME);
      if (isExecutableFile(full)) return full;
    }
    throw new SidecarNotFoundError(
      `auth-sidecar binary not found: pass { binary }, set $${ENV_BINARY}, or put '${BINARY_NAME}' on PATH ` +
      '(scripts/install.sh installs it in ~/.local/bin; the auth-sidecar npm package brings its own)');
  }
  let isFile = false;
  try { isFile = statSync(candidate).isFile(); } catch { isFile = false; }
  if (!isFile) throw new SidecarNotFoundError(`auth-sidecar binary not found at '${candidate}' (from ${source})`);
  if (!isExecutableFile(candidate)) {
    throw new SidecarNotFoundError(`auth-sidecar binary '${candidate}' (from ${source}) is not executable`);
  }
  return candidate;
}

function isExecutableFile(file) {
  try { return statSync(file).isFile() && (accessSync(file, fsConstants.X_OK), true); } catch { return false; }
}

/** [path, explicit]: the `socketPath` option, else $AUTH_SIDECAR_SOCK when it is undefined/null;
 * [null, false] to start a process (`socketPath: false`, or neither given). */
export function agentSocket(socketPath) {
  if (socketPath === false) return [null, false];
  if (socketPath != null) return [String(socketPath), true];
  return [process.env[ENV_SOCKET] || null, false];
}

/**
 * Refuse a socket that is not the user's own (as the agent itself does): its directory the
 * user's, a directory (not a symbolic link) no one else may enter; the path a socket of the
 * user's, not a symbolic link. Returns the absolute path.
 */
export function checkAgentSocket(socketPath) {
  const full = path.resolve(socketPath);
  const dir = path.dirname(full);
  const uid = process.getuid();
  const refuse = (why) => new UntrustedSocketError(`refusing the agent socket ${full}: ${why}`);
  const lstat = (file) => {
    try { return lstatSync(file); } catch (err) {
      throw new AgentUnavailableError(`no auth-sidecar agent at ${full}: ${err.code ?? err.message}`, { cause: err });
    }
  };
  let info = lstat(dir);
  if (!info.isDirectory()) throw refuse(`${dir} is not a directory (a symbolic link?)`);
  if (info.uid !== uid) throw refuse(`its directory ${dir} belongs to uid ${info.uid}, not to you`);
  if (info.mode & 0o077) {
    throw refuse(`other users may enter its directory ${dir} (mode ${(info.mode & 0o777).toString(8)}; the agent's directory is 0700)`);
  }
  info = lstat(full);
  if (!info.isSocket()) throw refuse('it is not a socket');
  if (info.uid !== uid) throw refuse(`it belongs to uid ${info.uid}, not to you`);
  return full;
}

/** Configuration keys -> initialize params (`cache`: a path, 'memory', or an object). */
export function configParams(config) {
  const params = {};
  for (const [key, value] of Object.entries(config || {})) {
    if (value === undefined || value === null) continue;
    if (key === 'cache' && typeof value === 'string') {
      params.cache = value === 'memory' ? { persistence: 'memory' } : { path: value };
    } else if (['scopes', 'knownAuthorities', 'clientCapabilities'].includes(key) && typeof value === 'string') {
      params[key] = [value];
    } else {
      params[key] = value;
    }
  }
  return params;
}

/** Account object / AccountRef / username -> AccountRef. */
export function accountRef(account) {
  if (account == null) return undefined;
  if (typeof account === 'string') return { username: account };
  if (typeof account === 'object') {
    if (account.homeAccountId) return { homeAccountId: account.homeAccountId };
    return account;
  }
  throw new TypeError('account must be an Account, an AccountRef or a username');
}

function scopeList(scopes) {
  if (scopes == null) return undefined;
  return typeof scopes === 'string' ? scopes.split(/\s+/).filter(Boolean) : [...scopes];
}

function clean(obj) {
  const out = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out;
}

function describeExit(exitCode, signal) {
  if (signal) return `was killed by signal ${signal}`;
  if (exitCode == null) return 'closed its output';
  return `exited with code ${exitCode}`;
}

// ---------------------------------------------------------------------------- transports
//
// How a client reaches auth-sidecar: a child process's pipes, or a connection to a running
// agent's Unix socket. The client sees one shape: open({onData, onStderr, onEnd}), write,
// endOutput (close() asks the other side to finish), forceClose (it did not), kill,
// endedError; `binary` / `socketPath` (the other is null), pid, exitCode, stderrTail.

/** auth-sidecar as a child process: messages over its stdin/stdout, its stderr kept (the tail). */
class ProcessPipes {
  constructor(binary, { args, env, cwd }) {
    this.binary = binary;
    this.socketPath = null;
    this.options = { args, env, cwd };
    this.child = null;
    this.stderrTail = '';
  }

  get pid() { return this.child?.pid; }
  get exitCode() { return this.child ? this.child.exitCode : null; }

  async open({ onData, onStderr, onEnd }) {
    const { args, env, cwd } = this.options;
    let child;
    try {
      child = spawn(this.binary, args, { stdio: ['pipe', 'pipe', 'pipe'], env, cwd });
    } catch (err) {
      throw new SidecarNotFoundError(`cannot start auth-sidecar '${this.binary}': ${err.message}`, { cause: err });
    }
    this.child = child;
    let tail = Buffer.alloc(0);
    child.stdin.on('error', () => {}); // EPIPE: reported through onEnd
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => {
      tail = Buffer.concat([tail, chunk]);
      if (tail.length > STDERR_TAIL_BYTES) tail = tail.subarray(tail.length - STDERR_TAIL_BYTES);
      this.stderrTail = tail.toString('utf8');
      onStderr(chunk);
    });
    let fallback = null;
    child.once('error', (spawnError) => onEnd({ exitCode: null, signal: null, spawnError }));
    child.once('exit', (exitCode, signal) => {
      fallback = setTimeout(() => onEnd({ exitCode, signal }), 1000);
      fallback.unref?.();
    });
    child.once('close', (exitCode, signal) => {
      if (fallback) clearTimeout(fallback);
      onEnd({ exitCode, signal });
    });
  }

  write(text) { if (this.child.stdin.writable) this.child.stdin.write(text); }
  endOutput() { try { this.child.stdin.end(); } catch { /* ignore */ } }
  forceClose() { this.kill('SIGKILL'); }
  kill(signal = 'SIGKILL') { try { this.child?.kill(signal); } catch { /* ignore */ } }

  endedError(what, { exitCode, signal, spawnError }) {
    if (spawnError) {
      return new SidecarNotFoundError(`cannot start auth-sidecar '${this.binary}': ${spawnError.message}`, { cause: spawnError });
    }
    return new SidecarExitedError(`auth-sidecar ${describeExit(exitCode, signal)}${what ? ` ${what}` : ''}`,
      { stderrTail: this.stderrTail, exitCode, signal });
  }
}

/** A connection to a running agent's Unix socket, checked to be the user's own before anything
 * is sent. No process of ours (pid undefined, exitCode null, no stderr); the agent outlives it. */
class AgentConnection {
  constructor(socketPath) {
    this.binary = null;
    this.socketPath = socketPath;
    this.socket = null;
    this.pid = undefined;
    this.exitCode = null;
    this.stderrTail = '';
  }

  async open({ onData, onEnd }) {
    this.socketPath = checkAgentSocket(this.socketPath);
    const socket = net.createConnection(this.socketPath);
    await new Promise((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', (err) => reject(new AgentUnavailableError(
        `no auth-sidecar agent answers at ${this.socketPath}: ${err.code ?? err.message}`, { cause: err })));
    });
    this.socket = socket;
    socket.on('error', () => {}); // ECONNRESET, EPIPE: 'close' follows
    socket.on('data', onData);
    socket.once('close', () => onEnd({ exitCode: null, signal: null }));
  }

  write(text) { if (this.socket.writable) this.socket.write(text); }
  endOutput() { this.socket.end(); }
  forceClose() { this.socket.destroy(); }
  /** Drop the connection at once (the agent cancels what it asked for). */
  kill() { this.socket?.destroy(); }

  endedError(what) {
    return new SidecarExitedError(`the auth-sidecar agent at ${this.socketPath} closed the connection${what ? ` ${what}` : ''}`);
  }
}

// ---------------------------------------------------------------------------- client

/**
 * One auth-sidecar process, or a connection to a running agent (`socketPath`, default
 * $AUTH_SIDECAR_SOCK). Events: 'deviceCode' (DeviceCode), 'notification' (method, params),
 * 'stderr' (string), 'exit' (SidecarExitedError).
 */
export class SidecarClient extends EventEmitter {
  constructor(options = {}) {
    super();
    const config = { ...(options.config || {}) };
    for (const [key, value] of Object.entries(options)) if (!CLIENT_OPTIONS.has(key)) config[key] = value;
    [this._socketPath, this._socketExplicit] = agentSocket(options.socketPath);
    // the binary is checked now unless the agent may serve (then start() finds it if needed)
    this.binary = this._socketPath ? options.binary ?? null : findBinary(options.binary);
    /** The agent's socket once connected to one. */
    this.socketPath = null;
    this.args = [...(options.args || [])];
    this.env = options.env;
    this.cwd = options.cwd;
    this.onOpenUrl = options.onOpenUrl;
    this.onPasteSignIn = options.onPasteSignIn;
    if (options.onDeviceCode) this.on('deviceCode', options.onDeviceCode);
    this.timeout = options.timeout;
    this.startTimeout = options.startTimeout ?? 15000;
    this.shutdownTimeout = options.shutdownTimeout ?? 5000;
    this.stderrStream = options.stderr;
    if (this.onOpenUrl && config.browser === undefined) config.browser = 'client';
    this.config = config;
    this.shouldInitialize = options.initialize ?? Object.keys(config).length > 0;
    this.serverInfo = null;
    this.dead = null;
    this._nextId = 1;
    this._pending = new Map();
    this._inputBuf = Buffer.alloc(0);
    this._transport = null;
    this._endInfo = null;
    this._closed = false;
    this._exited = null;
  }

  /** Spawn the sidecar (or connect to the agent) and `initialize` it; resolves to a started client. */
  static async start(options = {}) {
    const client = new SidecarClient(options);
    await client.start();
    return client;
  }

  /** The process id; undefined for an agent connection. */
  get pid() { return this._transport?.pid; }
  /** The exit code once the process has exited; null while it runs, and for an agent connection. */
  get exitCode() { return this._transport ? this._transport.exitCode : null; }
  /** The end of the process's stderr; empty for an agent connection. */
  get stderrTail() { return this._transport ? this._transport.stderrTail : ''; }

  async start() {
    if (this._transport) return this;
    this._exited = new Promise((resolve) => { this._resolveExited = resolve; });
    const hooks = {
      onData: (chunk) => this._onData(chunk),
      onStderr: (chunk) => this._onStderr(chunk),
      onEnd: (info) => this._finalize(info),
    };
    this._transport = await this._openTransport(hooks);
    this.binary = this._transport.binary;
    this.socketPath = this._transport.socketPath;
    if (this.shouldInitialize) {
      try {
        await this.initialize(this.config, { timeout: this.startTimeout });
      } catch (err) {
        await this.close({ graceful: false });
        throw err;
      }
    }
    return this;
  }

  /** The agent's socket when one is named, else a process. The one rule for a socket that
   * cannot be used (every client and mode alike, README "The agent"): named by the caller,
   * the error is thrown; only found (from $AUTH_SIDECAR_SOCK), no agent there or one not the
   * user's own means a process, as without an agent (the latter said once, a warning). */
  async _openTransport(hooks) {
    if (this._socketPath) {
      const agent = new AgentConnection(this._socketPath);
      try {
        await agent.open(hooks);
        return agent;
      } catch (err) {
        const unusable = err instanceof AgentUnavailableError || err instanceof UntrustedSocketError;
        if (this._socketExplicit || !unusable) throw err;
        if (err instanceof UntrustedSocketError) {
          process.emitWarning(`auth-sidecar: ignoring the agent socket: ${err.message}; running without the agent`);
        }
      }
    }
    const pipes = new ProcessPipes(findBinary(this.binary ?? undefined), { args: this.args, env: this.env, cwd: this.cwd });
    await pipes.open(hooks);
    return pipes;
  }

  /** Send `initialize` with these configuration keys (done by start() when any are given). */
  async initialize(config = {}, options = {}) {
    this.serverInfo = await this._call('initialize', configParams(config), options);
    return this.serverInfo;
  }

  /** Cancel what is in flight, `shutdown` + `exit`, wait; SIGKILL after `shutdownTimeout`.
   * Resolves to the exit code (null for an agent connection: it is closed, the agent runs on). */
  async close({ graceful = true } = {}) {
    const transport = this._transport;
    if (!transport) return null;
    if (this._closed) { await this._exited; return transport.exitCode; }
    this._closed = true;
    if (graceful && !this.dead) {
      for (const id of this._pending.keys()) this._write({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id } });
      try {
        await this._call('shutdown', undefined, { timeout: this.shutdownTimeout });
        this._write({ jsonrpc: '2.0', method: 'exit' });
      } catch { /* already gone, or not answering: killed below */ }
    }
    transport.endOutput();
    const timer = setTimeout(() => transport.forceClose(), graceful ? this.shutdownTimeout : 500);
    await this._exited;
    clearTimeout(timer);
    return transport.exitCode;
  }

  /** Kill the process (or drop the agent connection) at once: pending calls reject with SidecarExitedError. */
  kill(signal = 'SIGKILL') { this._transport?.kill(signal); }

  async [Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose')]() { await this.close(); }

  // ---- raw JSON-RPC

  /** Send any request; resolves to its `result`, rejects with its error. Options: signal, timeout (ms). */
  call(method, params, options = {}) { return this._call(method, params, options); }

  /** Send a notification. */
  notify(method, params) {
    this._ensureAlive();
    this._write(clean({ jsonrpc: '2.0', method, params }));
  }

  // ---- methods

  ping(options) { return this._call('ping', {}, options); }
  getDeviceInformation(options) { return this._call('getDeviceInformation', {}, options); }
  getCurrentAccount(options) { return this._call('getCurrentAccount', {}, options); }
  async getAccounts(params = {}, options) {
    return (await this._call('getAccounts', clean({ username: params.username }), options)).accounts;
  }
  /** What the cache holds for this client, without a secret: {accessTokens, refreshTokenAccounts, lastRefreshError}. */
  getCacheSummary(options) { return this._call('getCacheSummary', {}, options); }
  /** Make a cached account the current one (MSAL.js's setActiveAccount): {account, previousAccount}. */
  setCurrentAccount(account, options) {
    if (account == null) throw new TypeError('setCurrentAccount needs an account (an Account, an AccountRef or a username)');
    return this._call('setCurrentAccount', { account: accountRef(account) }, options);
  }
  acquireToken(params = {}, options = {}) {
    return this._call('acquireToken', clean({
      ...params, scopes: scopeList(params.scopes), account: accountRef(params.account),
      extraScopesToConsent: scopeList(params.extraScopesToConsent),
    }), options);
  }
  acquireTokenSilent(params = {}, options = {}) {
    return this._call('acquireTokenSilent', clean({
      ...params, scopes: scopeList(params.scopes), account: accountRef(params.account),
    }), options);
  }
  signout(params = {}, options) {
    return this._call('signout', clean({ ...params, account: accountRef(params.account) }), options);
  }
  /** A fresh signed HTTP request (PoP) with the cached PoP token: {signedHttpRequest, authorizationHeader, ...}. */
  signHttpRequest(params = {}, options = {}) {
    if (!params.resourceId && (!params.method || !params.url)) {
      throw new TypeError('signHttpRequest needs the request\'s method and url, or a resourceId');
    }
    return this._call('signHttpRequest', clean({
      ...params, scopes: scopeList(params.scopes), account: accountRef(params.account),
    }), options);
  }
  callGraph(params = {}, options = {}) {
    const p = typeof params === 'string' ? { path: params } : params;
    return this._call('callGraph', clean({
      ...p, scopes: scopeList(p.scopes), account: accountRef(p.account),
      method: typeof p.method === 'string' ? p.method.toUpperCase() : p.method,
    }), options);
  }

  // ---- engine

  async _call(method, params, options = {}) {
    if (!this._transport) await this.start();
    this._ensureAlive();
    const { signal, onDeviceCode } = options || {};
    const timeout = options?.timeout ?? this.timeout;
    if (signal?.aborted) {
      throw new RequestCancelledError(`${method} was cancelled`, { cause: signal.reason });
    }
    const id = this._nextId++;
    return new Promise((resolve, reject) => {
      const entry = { method, onDeviceCode, settle: null };
      let cancelled = null; // 'abort' | 'timeout'
      let timer = null;
      let graceTimer = null;
      const cleanup = () => {
        this._pending.delete(id);
        if (timer) clearTimeout(timer);
        if (graceTimer) clearTimeout(graceTimer);
        signal?.removeEventListener('abort', onAbort);
      };
      const finishCancelled = (reply) => {
        cleanup();
        const err = reply?.error && reply.error.code === -32800 ? reply.error : null;
        const Cls = cancelled === 'timeout' ? RequestTimeoutError : RequestCancelledError;
        const message = cancelled === 'timeout'
          ? `${method} timed out after ${timeout} ms and was cancelled` : (err?.message ?? `${method} was cancelled`);
        reject(new Cls(message, { data: err?.data, raw: err ?? undefined,
          cause: cancelled === 'abort' ? signal?.reason : undefined }));
      };
      const cancel = (why) => {
        if (cancelled) return;
        cancelled = why;
        this._write({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id } });
        graceTimer = setTimeout(() => finishCancelled(null), CANCEL_GRACE_MS);
      };
      const onAbort = () => cancel('abort');
      entry.settle = (reply, processError) => {
        if (processError) { cleanup(); reject(processError); return; }
        if (cancelled) { finishCancelled(reply); return; }
        cleanup();
        if ('error' in reply) reject(errorFromObject(reply.error, this.env ?? process.env));
        else resolve(reply.result);
      };
      this._pending.set(id, entry);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeout != null && timeout !== Infinity) timer = setTimeout(() => cancel('timeout'), timeout);
      this._write(clean({ jsonrpc: '2.0', id, method, params }));
    });
  }

  _ensureAlive() {
    if (this.dead) throw this._deadError('before the call was sent');
  }

  _deadError(what) {
    return this._transport.endedError(what, this._endInfo);
  }

  _write(message) {
    if (!this._transport || this.dead) return;
    // JSON.stringify never emits a raw newline, so every message is one line
    this._transport.write(`${JSON.stringify(message)}\n`);
  }

  _onStderr(chunk) {
    if (this.stderrStream) this.stderrStream.write(chunk);
    if (this.listenerCount('stderr')) this.emit('stderr', chunk.toString('utf8'));
  }

  _onData(chunk) {
    this._inputBuf = this._inputBuf.length ? Buffer.concat([this._inputBuf, chunk]) : chunk;
    let newline;
    while ((newline = this._inputBuf.indexOf(0x0a)) !== -1) {
      const line = this._inputBuf.subarray(0, newline).toString('utf8').trim();
      this._inputBuf = this._inputBuf.subarray(newline + 1);
      if (!line) continue;
      let message;
      try { message = JSON.parse(line); } catch { continue; }
      for (const m of Array.isArray(message) ? message : [message]) this._dispatch(m);
    }
  }

  _dispatch(msg) {
    if (!msg || typeof msg !== 'object') return;
    if (typeof msg.method === 'string') {
      if ('id' in msg) { this._answerServerRequest(msg); return; }
      this._onNotification(msg.method, msg.params);
      return;
    }
    if ('id' in msg && ('result' in msg || 'error' in msg)) {
      this._pending.get(msg.id)?.settle(msg, null);
    }
  }

  _onNotification(method, params) {
    if (method === 'deviceCode' && params && typeof params === 'object') {
      const entry = this._pending.get(params.requestId);
      const handler = entry?.onDeviceCode;
      if (handler) { safely(() => handler(params)); return; }
      if (this.listenerCount('deviceCode')) { safely(() => this.emit('deviceCode', params)); return; }
    }
    if (this.listenerCount('notification')) safely(() => this.emit('notification', method, params));
  }

  async _answerServerRequest(msg) {
    const { id, method } = msg;
    const params = msg.params || {};
    let reply;
    const refuse = (message) => ({ error: { code: BrowserUnavailableError.code, message, data: { name: 'browserUnavailable' } } });
    if (method === 'openUrl') {
      if (!this.onOpenUrl) reply = refuse('the client has no onOpenUrl handler');
      else {
        try {
          const ok = await this.onOpenUrl(params.url, params);
          reply = ok === false ? refuse('the client could not open the URL') : { result: {} };
        } catch (err) {
          reply = refuse(`onOpenUrl failed: ${err?.message ?? err}`);
        }
      }
    } else if (method === 'pasteSignIn' && this.onPasteSignIn) {
      const giveUp = (message) => ({ error: { code: -32000, message, data: { name: 'noPastedAddress' } } });
      try {
        const pasted = await this.onPasteSignIn(params.url, params);
        reply = typeof pasted === 'string' && pasted.trim() ? { result: { redirectedTo: pasted } } : giveUp('no address was pasted');
      } catch (err) {
        reply = giveUp(`onPasteSignIn failed: ${err?.message ?? err}`);
      }
    } else {
      reply = { error: { code: -32601, message: 'Method not found', data: { name: 'methodNotFound' } } };
    }
    this._write({ jsonrpc: '2.0', id, ...reply });
  }

  _finalize(info) {
    if (this.dead) return;
    this._endInfo = info;
    this.dead = this._deadError('');
    for (const [id, entry] of [...this._pending]) {
      entry.settle(null, info.spawnError ? this.dead : this._deadError(`while ${entry.method} (id ${id}) was pending`));
    }
    this._pending.clear();
    this._resolveExited();
    if (this.listenerCount('exit')) this.emit('exit', this.dead);
  }
}

function safely(fn) {
  try {
    const result = fn();
    if (result && typeof result.catch === 'function') result.catch((err) => console.error(err));
  } catch (err) {
    console.error(err);
  }
}

export default SidecarClient;
