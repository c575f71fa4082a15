// The Node client connected to a running `auth-sidecar agent` on its Unix socket (no process of
// its own): two connections sharing one sign-in, device codes routed to the connection that
// asked, sockets that are not the user's own refused, $AUTH_SIDECAR_SOCK, the agent stopping.
import assert from 'node:assert/strict';
import { chmodSync, chownSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';

import * as sidecar from '../index.js';
import {
  ALICE, BINARY, BOB, CLIENT_ID, QUICK, SIGN_IN, baseEnv, guarded, needsBinary, startAgent, startMock, tmpDir,
} from './helpers.js';

const { SidecarClient } = sidecar;
const SCOPES = ['User.Read'];

/** A listening socket at `socketPath`; `connections` counts who connected. */
async function listen(socketPath) {
  const server = net.createServer((conn) => { server.connections += 1; conn.destroy(); });
  server.connections = 0;
  await new Promise((resolve) => server.listen(socketPath, resolve));
  return server;
}

/** Connects once and resolves with the count of connections the server had seen before ours. */
async function connectionsBeforeOurs(server, socketPath) {
  const seen = new Promise((resolve) => server.once('connection', () => resolve(server.connections)));
  net.createConnection(socketPath).on('error', () => {});
  return seen;
}

function withEnv(vars, fn) {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  const restore = () => {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  };
  return Promise.resolve().then(fn).finally(restore);
}

describe('client through a running agent', { ...needsBinary, timeout: 120000 }, () => {
  let mock;
  let agents = [];
  before(async () => { if (!needsBinary.skip && !needsBinary.failReason) mock = await startMock(); });
  after(() => mock?.stop());
  beforeEach(async () => { await mock?.reset(); });
  afterEach(async () => { await Promise.all(agents.map((agent) => agent.stop())); agents = []; });

  const agentFor = async (env, args) => { const agent = await startAgent(env, args); agents.push(agent); return agent; };
  /** An agent signing in against the mock (the scripted browser is the agent's $BROWSER). */
  const mockAgent = () => {
    const dir = tmpDir();
    return agentFor(mock.env(dir), ['--cache', 'memory', '--client-id', CLIENT_ID]);
  };
  /** initialize keys for the mock; the cache is the agent's (in memory). */
  const config = () => { const { cache, ...rest } = mock.config(tmpDir()); return rest; };

  test('two connections share one sign-in', guarded(async () => {
    const agent = await mockAgent();
    const first = await SidecarClient.start({ socketPath: agent.socket, timeout: QUICK, ...config() });
    const second = await SidecarClient.start({ socketPath: agent.socket, timeout: QUICK, ...config() });
    try {
      assert.equal(first.socketPath, agent.socket);
      assert.equal(first.binary, null);
      assert.equal(first.pid, undefined);
      assert.equal(first.exitCode, null);
      assert.equal(first.stderrTail, '');

      const token = await first.acquireToken({ scopes: SCOPES }, { timeout: SIGN_IN });
      assert.equal(token.account.username, ALICE);
      const silent = await second.acquireTokenSilent({ scopes: SCOPES });
      assert.equal(silent.fromCache, true);
      assert.equal(silent.accessToken, token.accessToken);
      assert.deepEqual((await second.getAccounts()).map((a) => a.username), [ALICE]);
      assert.equal(await mock.count('token:authorization_code'), 1);
      assert.equal(await mock.count('token'), 1);

      assert.equal(await first.close(), null); // the connection only: the agent and the other session go on
      assert.equal(agent.child.exitCode, null);
      assert.equal((await second.callGraph('/me')).body.userPrincipalName, ALICE);
      await assert.rejects(first.ping(), (err) => err instanceof sidecar.SidecarExitedError && /closed the connection/.test(err.message));
    } finally {
      await first.close();
      await second.close();
    }
  }));

  test('the device code reaches the connection that asked', guarded(async () => {
    const agent = await mockAgent();
    const seenBy = { first: [], second: [] };
    const first = await SidecarClient.start({ socketPath: agent.socket, timeout: SIGN_IN, onDeviceCode: (c) => seenBy.first.push(c), ...config() });
    const second = await SidecarClient.start({ socketPath: agent.socket, timeout: SIGN_IN, onDeviceCode: (c) => seenBy.second.push(c), ...config() });
    try {
      // both connections number their requests alike: only the agent's routing tells them apart
      const asked = [];
      const approve = (username) => async (code) => { asked.push(code); await mock.admin('devicecode', { action: 'approve', user_code: code.userCode, username }); };
      const bob = await first.acquireToken({ scopes: SCOPES, flow: 'deviceCode' }, { onDeviceCode: approve(BOB) });
      assert.equal(bob.account.username, BOB);
      assert.equal(asked.length, 1);
      assert.deepEqual(await second.ping(), {});
      const alice = await second.acquireToken({ scopes: SCOPES, flow: 'deviceCode' }, { onDeviceCode: approve(ALICE) });
      assert.equal(alice.account.username, ALICE);
      assert.equal(asked.length, 2);
      assert.notEqual(asked[0].userCode, asked[1].userCode);
      assert.deepEqual(await first.ping(), {});
      assert.deepEqual(seenBy, { first: [], second: [] });
    } finally {
      await first.close();
      await second.close();
    }
  }));

  test('a socket in a directory others may enter is refused, nothing sent', guarded(async () => {
    const dir = tmpDir('as-open-');
    chmodSync(dir, 0o777);
    const socketPath = path.join(dir, 'agent.sock');
    const server = await listen(socketPath);
    try {
      await assert.rejects(SidecarClient.start({ socketPath, clientId: CLIENT_ID }),
        (err) => err instanceof sidecar.UntrustedSocketError && /other users may enter/.test(err.message) && err.message.includes(socketPath));
      // Found in the environment, not named: the one rule of every client and mode (README
      // "The agent"): never connected to, said once (a warning), a process as without an agent.
      const warnings = [];
      const onWarning = (warning) => warnings.push(warning.message);
      process.on('warning', onWarning);
      try {
        await withEnv({ AUTH_SIDECAR_SOCK: socketPath }, async () => {
          const client = await SidecarClient.start({ binary: BINARY, env: baseEnv(), clientId: CLIENT_ID, cache: 'memory' });
          try {
            assert.ok(client.pid !== undefined && client.socketPath === null);
            assert.deepEqual(await client.ping(), {});
          } finally {
            await client.close();
          }
        });
        await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      } finally {
        process.off('warning', onWarning);
      }
      assert.ok(warnings.some((m) => m.includes('ignoring the agent socket') && m.includes(socketPath)), String(warnings));
      assert.equal(await connectionsBeforeOurs(server, socketPath), 1); // ours is the first
    } finally {
      server.close();
      chmodSync(dir, 0o700);
    }
  }));

  test('a symbolic link, a plain file and a linked directory are refused', guarded(async () => {
    const agent = await agentFor(baseEnv(), ['--client-id', CLIENT_ID, '--cache', 'memory']);
    const link = path.join(agent.dir, 'link.sock');
    symlinkSync(agent.socket, link);
    await assert.rejects(SidecarClient.start({ socketPath: link }), (err) => err instanceof sidecar.UntrustedSocketError && /not a socket/.test(err.message));
    const plain = path.join(agent.dir, 'file.sock');
    writeFileSync(plain, '');
    await assert.rejects(SidecarClient.start({ socketPath: plain }), /not a socket/);
    const dirLink = path.join(tmpDir(), 'dir-link');
    symlinkSync(agent.dir, dirLink);
    await assert.rejects(SidecarClient.start({ socketPath: path.join(dirLink, 'agent.sock') }),
      (err) => err instanceof sidecar.UntrustedSocketError && /not a directory/.test(err.message));
  }));

  test('a socket of another user is refused', { skip: process.getuid() !== 0 && 'handing a file to another user needs root' }, async () => {
    const dir = tmpDir('as-other-');
    const socketPath = path.join(dir, 'agent.sock');
    const server = await listen(socketPath);
    try {
      chownSync(socketPath, 65534, 65534);
      await assert.rejects(SidecarClient.start({ socketPath }), /it belongs to uid 65534/);
      chownSync(socketPath, 0, 0);
      chownSync(dir, 65534, 65534);
      await assert.rejects(SidecarClient.start({ socketPath }), /directory .* belongs to uid 65534/);
      assert.equal(await connectionsBeforeOurs(server, socketPath), 1);
    } finally {
      server.close();
      chownSync(dir, 0, 0);
    }
  });

  test('$AUTH_SIDECAR_SOCK by default', guarded(async () => {
    const agent = await agentFor(baseEnv(), ['--client-id', CLIENT_ID, '--cache', 'memory']);
    const noBinary = path.join(tmpDir(), 'no-binary-needed');
    await withEnv({ AUTH_SIDECAR_SOCK: agent.socket, AUTH_SIDECAR_BIN: noBinary }, async () => {
      const client = await SidecarClient.start({ timeout: QUICK }); // configured by the agent's command line
      assert.equal(client.socketPath, agent.socket);
      assert.equal(client.pid, undefined);
      assert.deepEqual(await client.getAccounts(), []);
      assert.equal(await client.close(), null);

      const process1 = await SidecarClient.start({ binary: BINARY, socketPath: false, env: baseEnv(), clientId: CLIENT_ID, cache: 'memory' });
      assert.equal(process1.socketPath, null);
      assert.ok(process1.pid > 0);
      assert.equal(await process1.close(), 0);
    });
    const missing = path.join(agent.dir, 'none.sock');
    await withEnv({ AUTH_SIDECAR_SOCK: missing }, async () => { // no agent there: a process, as without an agent
      const client = await SidecarClient.start({ binary: BINARY, env: baseEnv(), clientId: CLIENT_ID, cache: 'memory' });
      assert.equal(client.socketPath, null);
      assert.ok(client.pid > 0);
      await client.close();
    });
    await assert.rejects(SidecarClient.start({ binary: BINARY, socketPath: missing, clientId: CLIENT_ID }), // named: an error
      (err) => err instanceof sidecar.AgentUnavailableError && err.message.includes('none.sock'));
  }));

  test('the agent stopped: a clear error on the next call', guarded(async () => {
    const agent = await agentFor(baseEnv(), ['--client-id', CLIENT_ID, '--cache', 'memory']);
    const client = await SidecarClient.start({ socketPath: agent.socket, timeout: QUICK });
    const exits = [];
    client.on('exit', (err) => exits.push(err));
    try {
      assert.deepEqual(await client.ping(), {});
      agent.child.kill('SIGTERM');
      assert.deepEqual(await agent.exited, { code: 0, signal: null });
      await assert.rejects(client.ping(), (err) => err instanceof sidecar.SidecarExitedError
        && err.message.includes(`agent at ${agent.socket} closed the connection`) && err.exitCode === null);
      assert.equal(exits.length, 1);
    } finally {
      assert.equal(await client.close(), null);
    }
    await assert.rejects(SidecarClient.start({ socketPath: agent.socket }), sidecar.AgentUnavailableError); // socket removed
  }));
});
