// Test helpers: the binary (skip when missing unless $CI), the mock identity platform, env.
import { spawn } from 'node:child_process';
import { existsSync, accessSync, constants, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(HERE, '..', '..', '..');
export const MOCK_DIR = path.join(REPO, 'mock');
export const SCRIPTED_BROWSER = path.join(MOCK_DIR, 'scripted_browser.py');
export const CLIENT_ID = '00001111-aaaa-2222-bbbb-3333cccc4444';
export const APP_ID = '11111111-2222-3333-4444-555555555555';
export const ALICE = 'alice@contoso.com';
export const BOB = 'bob@contoso.com';
export const QUICK = 10000;
export const SIGN_IN = 25000;

export const BINARY = process.env.AUTH_SIDECAR_BIN || path.join(REPO, '.build', 'release', 'auth-sidecar');

// The clients under test reach the user's own agent only where a test says so.
delete process.env.AUTH_SIDECAR_SOCK;

function binaryMissing() {
  try { accessSync(BINARY, constants.X_OK); return existsSync(BINARY) ? null : 'missing'; } catch { return 'missing'; }
}

/** node:test option: skip when the binary is missing (fail instead when $CI is set). */
export const needsBinary = (() => {
  if (!binaryMissing()) return {};
  const reason = `auth-sidecar binary not found at ${BINARY} (set AUTH_SIDECAR_BIN)`;
  if (process.env.CI) return { failReason: reason };
  return { skip: reason };
})();

/** Wrap a test body: with $CI set and no binary, the test fails with the reason. */
export function guarded(fn) {
  return async (t) => {
    if (needsBinary.failReason) throw new Error(needsBinary.failReason);
    return fn(t);
  };
}

export function tmpDir(prefix = 'auth-sidecar-node-') {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A clean environment: own HOME and cache dir, no machine policy, no scripted-browser settings,
 * standalone (never forwarding to an agent the user may be running). */
export function baseEnv(dir = tmpDir()) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SCRIPTED_BROWSER_')) env[k] = v;
  mkdirSync(path.join(dir, 'home'), { recursive: true });
  // No kernel keyring needed: the cache is plaintext, chosen in the default configuration file.
  writeFileSync(path.join(dir, 'plaintext-config.json'), '{"cacheProtection": "plaintext"}');
  Object.assign(env, {
    HOME: path.join(dir, 'home'), XDG_CACHE_HOME: path.join(dir, 'xdg-cache'),
    AUTH_SIDECAR_POLICY_FILE: path.join(dir, 'no-such-policy.json'), AUTH_SIDECAR_NO_AGENT: '1',
    AUTH_SIDECAR_CONFIG: path.join(dir, 'plaintext-config.json'),
  });
  return env;
}

/**
 * Start `auth-sidecar agent --socket DIR/agent.sock ...args` (DIR: a new 0700 directory, short
 * enough for a socket path) and wait for its "agent listening" line. `log`: its stderr;
 * `stop()`: SIGTERM (SIGKILL after 15 s), resolves when it has exited.
 */
export async function startAgent(env, args = [], timeoutMs = 15000) {
  const dir = tmpDir('as-agent-');
  const socket = path.join(dir, 'agent.sock');
  const child = spawn(BINARY, ['agent', '--socket', socket, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const agent = {
    dir, socket, child, exited, log: '',
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the agent did not start:\n${agent.log}`)), timeoutMs);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text) => {
      agent.log += text;
      if (agent.log.includes('agent listening')) { clearTimeout(timer); resolve(); }
    });
    exited.then(() => { clearTimeout(timer); reject(new Error(`the agent exited at start:\n${agent.log}`)); });
  }).catch(async (err) => { await agent.stop(); throw err; });
  return agent;
}

/** Start the mock: `python3 -m mock_idp --port 0 --state-dir DIR --exit-on-stdin-eof`, read its ready line. */
export async function startMock(timeoutMs = 15000) {
  const stateDir = tmpDir('mock-idp-');
  const child = spawn(process.env.PYTHON || 'python3',
    ['-m', 'mock_idp', '--port', '0', '--state-dir', stateDir, '--exit-on-stdin-eof'],
    { cwd: MOCK_DIR, stdio: ['pipe', 'pipe', 'inherit'] });
  const ready = await new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => { child.kill(); reject(new Error('mock_idp did not start')); }, timeoutMs);
    child.stdout.on('data', (chunk) => {
      buf += chunk;
      const nl = buf.indexOf('\n');
      if (nl !== -1) { clearTimeout(timer); resolve(JSON.parse(buf.slice(0, nl))); }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`mock_idp exited early (${code})`)); });
  });
  child.removeAllListeners('exit');
  const ca = readFileSync(ready.caFile);
  const mock = {
    ...ready,
    child,
    /** POST/GET /_admin/<name> */
    admin(name, body) {
      return new Promise((resolve, reject) => {
        const url = new URL(`/_admin/${name}`, ready.url);
        const data = body === undefined ? undefined : JSON.stringify(body);
        const req = https.request(url, {
          method: data === undefined ? 'GET' : 'POST', ca, timeout: 10000,
          headers: data === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
        }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c) => { text += c; });
          res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text))
            : reject(new Error(`admin ${name}: ${res.statusCode} ${text}`))));
        });
        req.on('timeout', () => req.destroy(new Error(`admin ${name} timed out`)));
        req.on('error', reject);
        req.end(data);
      });
    },
    reset() { return this.admin('reset', {}); },
    async count(endpoint) { return (await this.admin('counts'))[endpoint] ?? 0; },
    stop() { child.stdin.end(); child.kill(); },
    /** Environment for a sidecar signing in through the scripted browser. */
    env(dir, action = 'complete', extra = {}) {
      return {
        ...baseEnv(dir), SSL_CERT_FILE: ready.caFile, BROWSER: SCRIPTED_BROWSER, SCRIPTED_BROWSER_CA: ready.caFile,
        SCRIPTED_BROWSER_COOKIES: path.join(dir, 'cookies.txt'), SCRIPTED_BROWSER_ACTION: action, ...extra,
      };
    },
    /** initialize keys for the mock. */
    config(dir) {
      return {
        clientId: CLIENT_ID, authority: `${ready.url}/common`, knownAuthorities: ['127.0.0.1'],
        graphEndpoint: `${ready.url}/`, cache: path.join(dir, 'cache.json'),
        cacheProtection: 'plaintext', // chosen: the tests must not depend on a kernel keyring
      };
    },
  };
  return mock;
}
