// The Node client without the identity service: lifecycle, errors, cancellation, a missing /
// crashing / killed process.
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import * as sidecar from '../index.js';
import { BINARY, CLIENT_ID, QUICK, APP_ID, baseEnv, guarded, needsBinary, tmpDir } from './helpers.js';

const { SidecarClient } = sidecar;
const diagnostics = () => ({ binary: BINARY, args: ['--client-id', APP_ID, '--enable-diagnostics'], env: baseEnv(), timeout: QUICK });

describe('client without the identity service', { ...needsBinary, timeout: 60000 }, () => {
  test('initialize and the no-service methods', guarded(async () => {
    const client = await SidecarClient.start({
      binary: BINARY, env: baseEnv(), clientId: CLIENT_ID, cache: 'memory', knownAuthorities: 'example.b2clogin.com',
      httpTimeoutSeconds: 7, timeout: QUICK,
    });
    try {
      assert.equal(client.serverInfo.serverInfo.name, 'auth-sidecar');
      assert.equal(client.serverInfo.protocolVersion, '1.0');
      assert.deepEqual(client.serverInfo.configuration.cache, { persistence: 'memory' });
      assert.deepEqual(client.serverInfo.configuration.knownAuthorities, ['example.b2clogin.com']);
      assert.equal(client.serverInfo.configuration.httpTimeoutSeconds, 7);
      assert.equal(client.serverInfo.configuration.interactiveTimeoutSeconds, 600);
      assert.deepEqual(await client.ping(), {});
      const device = await client.getDeviceInformation();
      assert.equal(device.deviceMode, 'private');
      assert.deepEqual(await client.getCurrentAccount(), { account: null, previousAccount: null });
      assert.deepEqual(await client.getAccounts(), []);
      assert.deepEqual(await client.getAccounts({ username: 'nobody@example.com' }), []);
      const pings = await Promise.all(Array.from({ length: 20 }, () => client.ping()));
      assert.equal(pings.length, 20);
    } finally {
      assert.equal(await client.close(), 0);
    }
    assert.equal(await client.close(), 0); // idempotent
  }));

  test('config object, shared device mode, binary from $AUTH_SIDECAR_BIN', guarded(async () => {
    const saved = process.env.AUTH_SIDECAR_BIN;
    process.env.AUTH_SIDECAR_BIN = BINARY;
    try {
      const client = await SidecarClient.start({ env: baseEnv(), config: { clientId: CLIENT_ID, sharedDeviceMode: true, cache: 'memory' } });
      assert.equal(client.binary, BINARY);
      assert.equal((await client.getDeviceInformation()).deviceMode, 'shared');
      await client.close();
    } finally {
      if (saved === undefined) delete process.env.AUTH_SIDECAR_BIN; else process.env.AUTH_SIDECAR_BIN = saved;
    }
  }));

  test('configured from the command line, no initialize', guarded(async () => {
    const client = await SidecarClient.start({ binary: BINARY, args: ['--client-id', APP_ID, '--cache', 'memory'], env: baseEnv() });
    assert.equal(client.serverInfo, null);
    assert.deepEqual(await client.getAccounts(), []);
    await client.close();
  }));

  test('not configured: the default file as the sidecar reads it', () => {
    const error = { code: -32002, message: 'Server not initialized', data: { name: 'serverNotInitialized' } };
    for (const [env, file] of [[{ HOME: '/h' }, '/h/.config/auth-sidecar/config.json'],
      [{ HOME: '/h', XDG_CONFIG_HOME: '/x' }, '/x/auth-sidecar/config.json'],
      [{ HOME: '/h', XDG_CONFIG_HOME: 'rel', AUTH_SIDECAR_CONFIG: '/c.json' }, '/c.json'],
      [{ XDG_CONFIG_HOME: 'rel' }, '$XDG_CONFIG_HOME/auth-sidecar/config.json']]) {
      const err = sidecar.errorFromObject(error, env);
      assert.ok(err instanceof sidecar.ServerNotInitializedError && err.code === -32002);
      assert.ok(err.message.startsWith('no client id configured: ') && err.message.endsWith(` to ${file}`), err.message);
    }
  });

  test('error classes', guarded(async () => {
    const env = baseEnv();
    const client = await SidecarClient.start({ binary: BINARY, env, initialize: false, timeout: QUICK });
    try {
      // The command line's sentence: what is missing and the file to write (the sidecar's
      // $AUTH_SIDECAR_CONFIG here); the server's own words stay in raw.
      await assert.rejects(client.getAccounts(), (err) => err instanceof sidecar.ServerNotInitializedError
        && err.code === -32002 && err.errorName === 'serverNotInitialized' && err instanceof sidecar.JsonRpcError
        && err.message === `no client id configured: pass clientId: 'ID', or write {"clientId": "ID"} to ${env.AUTH_SIDECAR_CONFIG}`
        && err.raw.message.includes('initialize'));
      await assert.rejects(client.initialize({ clientId: CLIENT_ID, clientSecret: 'nope' }),
        (err) => err instanceof sidecar.InvalidParamsError && err.member === 'clientSecret');
      await client.initialize({ clientId: CLIENT_ID, cache: 'memory' });
      await assert.rejects(client.initialize({ clientId: CLIENT_ID }),
        (err) => err instanceof sidecar.InvalidRequestError && err.errorName === 'alreadyInitialized');
      await assert.rejects(client.call('noSuchMethod'), sidecar.MethodNotFoundError);
      await assert.rejects(client.call('ping', []), sidecar.InvalidParamsError);
      await assert.rejects(client.callGraph({ path: 'me' }), (err) => err instanceof sidecar.InvalidParamsError && err.member === 'path');
      await assert.rejects(client.acquireTokenSilent({ scopes: ['User.Read'] }),
        (err) => err instanceof sidecar.InteractionRequiredError && err.code === -50002 && err instanceof sidecar.MsalError);
      await assert.rejects(client.signout({ account: 'nobody@contoso.example' }),
        (err) => err instanceof sidecar.AccountNotFoundError && err.code === -51011 && err instanceof sidecar.PlatformError);
    } finally {
      await client.close();
    }
  }));

  test('error mapping table', () => {
    const expected = {
      '-32700': 'ParseError', '-32600': 'InvalidRequestError', '-32601': 'MethodNotFoundError',
      '-32602': 'InvalidParamsError', '-32603': 'InternalRpcError', '-32002': 'ServerNotInitializedError',
      '-32800': 'RequestCancelledError', '-50000': 'InternalError', '-50001': 'WorkplaceJoinRequiredError',
      '-50002': 'InteractionRequiredError', '-50003': 'ServerDeclinedScopesError',
      '-50004': 'ServerProtectionPoliciesRequiredError', '-50005': 'UserCanceledError', '-50006': 'ServerError',
      '-51001': 'NetworkError', '-51002': 'ServiceTimeoutError', '-51003': 'TlsError', '-51004': 'MalformedResponseError',
      '-51005': 'CacheUnavailableError', '-51006': 'BrowserUnavailableError', '-51007': 'InteractiveInProgressError',
      '-51008': 'AuthorityNotTrustedError', '-51009': 'InsecureAuthorityError', '-51010': 'InvalidConfigurationError',
      '-51011': 'AccountNotFoundError', '-51012': 'AmbiguousAccountError', '-51013': 'PasswordResetRequiredError',
      '-51014': 'ForwardRefusedError', '-51015': 'BrokerUnavailableError', '-51016': 'TokenKindNotServedError',
      '-51017': 'PastedAddressRefusedError', '-51018': 'DeviceCodeBlockedError',
    };
    for (const [code, name] of Object.entries(expected)) {
      const err = sidecar.errorFromObject({ code: Number(code), message: 'm', data: { name: 'n', claims: '{}' } });
      assert.equal(err.constructor, sidecar[name]);
      assert.equal(err.name, name);
      assert.equal(err.code, Number(code));
      assert.equal(err.claims, '{}');
      assert.ok(err instanceof sidecar.SidecarError && err instanceof Error);
    }
    assert.equal(sidecar.errorFromObject({ code: -51999, message: 'x', data: { name: 'x' } }).constructor, sidecar.PlatformError);
    assert.equal(sidecar.errorFromObject({ code: -50999, message: 'x', data: { name: 'x' } }).constructor, sidecar.MsalError);
    assert.ok(new sidecar.RequestTimeoutError('t') instanceof sidecar.RequestCancelledError);
    assert.equal(new sidecar.RequestTimeoutError('t').code, -32800);
  });

  test('missing binary', async () => {
    const dir = tmpDir();
    const missing = path.join(dir, 'no-such-auth-sidecar');
    assert.throws(() => new SidecarClient({ binary: missing }), (err) => err instanceof sidecar.SidecarNotFoundError
      && err.message.includes(missing) && err.code === null);
    const saved = { bin: process.env.AUTH_SIDECAR_BIN, path: process.env.PATH };
    try {
      process.env.AUTH_SIDECAR_BIN = missing;
      assert.throws(() => new SidecarClient(), /AUTH_SIDECAR_BIN/);
      delete process.env.AUTH_SIDECAR_BIN;
      process.env.PATH = dir;
      assert.throws(() => new SidecarClient(), /on PATH \(scripts\/install\.sh installs it/);
    } finally {
      if (saved.bin === undefined) delete process.env.AUTH_SIDECAR_BIN; else process.env.AUTH_SIDECAR_BIN = saved.bin;
      process.env.PATH = saved.path;
    }
    const notExecutable = path.join(dir, 'auth-sidecar');
    writeFileSync(notExecutable, '#!/bin/sh\n');
    assert.throws(() => new SidecarClient({ binary: notExecutable }), /not executable/);
  });

  test('a process that exits at start reports its stderr', guarded(async () => {
    const started = Date.now();
    await assert.rejects(SidecarClient.start({ binary: BINARY, args: ['--no-such-option'], env: baseEnv(), clientId: CLIENT_ID }),
      (err) => err instanceof sidecar.SidecarExitedError && err.exitCode === 64
        && err.stderrTail.includes('no-such-option') && err.message.includes('no-such-option'));
    assert.ok(Date.now() - started < QUICK);
  }));

  test('a fake binary that dies', async () => {
    const dir = tmpDir();
    const fake = path.join(dir, 'fake-sidecar');
    writeFileSync(fake, "#!/bin/sh\necho 'fake sidecar: something broke' >&2\nexit 3\n");
    chmodSync(fake, 0o755);
    await assert.rejects(SidecarClient.start({ binary: fake, env: baseEnv(dir), clientId: CLIENT_ID, startTimeout: QUICK }),
      (err) => err instanceof sidecar.SidecarExitedError && err.exitCode === 3 && /something broke/.test(err.message));
  });

  test('killed while a call is pending', guarded(async () => {
    const client = await SidecarClient.start(diagnostics());
    const exits = [];
    client.on('exit', (err) => exits.push(err));
    setTimeout(() => client.kill(), 300);
    const started = Date.now();
    await assert.rejects(client.call('diagnostics/sleep', { ms: 20000 }),
      (err) => err instanceof sidecar.SidecarExitedError && err.signal === 'SIGKILL' && /SIGKILL/.test(err.message));
    assert.ok(Date.now() - started < 5000);
    await assert.rejects(client.ping(), sidecar.SidecarExitedError); // later calls fail at once
    assert.equal(exits.length, 1);
    await client.close();
  }));

  test('killed by SIGTERM: pending requests are answered -32800 or fail, never hang', guarded(async () => {
    const client = await SidecarClient.start(diagnostics());
    setTimeout(() => client.kill('SIGTERM'), 300);
    await assert.rejects(client.call('diagnostics/sleep', { ms: 20000 }),
      (err) => err instanceof sidecar.RequestCancelledError || err instanceof sidecar.SidecarExitedError);
    await client.close();
  }));

  test('AbortSignal sends $/cancelRequest', guarded(async () => {
    const client = await SidecarClient.start(diagnostics());
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('user gave up')), 200);
      const started = Date.now();
      await assert.rejects(client.call('diagnostics/sleep', { ms: 20000 }, { signal: controller.signal }),
        (err) => err instanceof sidecar.RequestCancelledError && err.raw.code === -32800
          && err.errorName === 'requestCancelled' && err.cause?.message === 'user gave up');
      assert.ok(Date.now() - started < 5000);
      // an already-aborted signal rejects at once
      await assert.rejects(client.call('diagnostics/sleep', { ms: 20000 }, { signal: controller.signal }), sidecar.RequestCancelledError);
      await assert.rejects(client.call('diagnostics/sleep', { ms: 20000 }, { signal: AbortSignal.timeout(200) }),
        sidecar.RequestCancelledError);
      assert.deepEqual(await client.ping(), {});
    } finally {
      await client.close();
    }
  }));

  test('timeout cancels the request', guarded(async () => {
    const client = await SidecarClient.start(diagnostics());
    try {
      await assert.rejects(client.call('diagnostics/sleep', { ms: 20000 }, { timeout: 300 }),
        (err) => err instanceof sidecar.RequestTimeoutError && err instanceof sidecar.RequestCancelledError
          && err.raw.code === -32800);
    } finally {
      await client.close();
    }
  }));

  test('concurrent calls, out-of-order replies', guarded(async () => {
    const client = await SidecarClient.start(diagnostics());
    try {
      const calls = Array.from({ length: 40 }, (_, i) => (i % 5 === 0
        ? client.call('diagnostics/sleep', { ms: 200 }) : client.call('diagnostics/echo', { i })));
      const results = await Promise.all(calls);
      results.forEach((r, i) => { if (i % 5) assert.deepEqual(r, { i }); });
    } finally {
      await client.close();
    }
  }));

  test('close cancels in-flight requests and exits 0', guarded(async () => {
    const client = await SidecarClient.start(diagnostics());
    const slow = client.call('diagnostics/sleep', { ms: 30000 }).then(() => null, (err) => err);
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    assert.equal(await client.close(), 0);
    assert.ok(Date.now() - started < 5000);
    const err = await slow;
    assert.ok(err instanceof sidecar.RequestCancelledError || err instanceof sidecar.SidecarExitedError, String(err));
  }));

  test('stderr is collected and can be streamed', guarded(async () => {
    const chunks = [];
    const client = await SidecarClient.start({ binary: BINARY, args: ['--client-id', APP_ID, '--log-level', 'debug'], env: baseEnv() });
    client.on('stderr', (text) => chunks.push(text));
    await client.ping();
    await client.close();
    assert.ok(client.stderrTail.length > 0);
  }));
});

test('index.d.ts declares every export of index.js', async () => {
  const { readFileSync } = await import('node:fs');
  const dts = readFileSync(new URL('../index.d.ts', import.meta.url), 'utf8');
  const declared = new Set([...dts.matchAll(/^export declare (?:class|function|const) (\w+)/gm)].map((m) => m[1]));
  const missing = Object.keys(sidecar).filter((name) => name !== 'default' && !declared.has(name));
  assert.deepEqual(missing, []);
  assert.match(dts, /^export default SidecarClient;$/m);
});
