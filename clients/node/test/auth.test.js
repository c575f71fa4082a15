// The Node client against the mock identity platform: browser, client-opened browser and
// device-code sign-in, cache, silent renewal, Graph, sign-out, cancellation.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { after, before, beforeEach, describe, test } from 'node:test';

import * as sidecar from '../index.js';
import { ALICE, BINARY, BOB, QUICK, SCRIPTED_BROWSER, SIGN_IN, guarded, needsBinary, startMock, tmpDir } from './helpers.js';

const { SidecarClient } = sidecar;
const SCOPES = ['User.Read'];

describe('client against the mock identity platform', { ...needsBinary, timeout: 120000 }, () => {
  let mock;
  before(async () => { if (!needsBinary.skip && !needsBinary.failReason) mock = await startMock(); });
  after(() => mock?.stop());
  beforeEach(async () => { await mock?.reset(); });

  const launch = (dir, { action = 'complete', envExtra = {}, ...options } = {}) => SidecarClient.start({
    binary: BINARY, env: mock.env(dir, action, envExtra), timeout: QUICK, ...mock.config(dir), ...options,
  });

  test('browser sign-in, cache, silent, Graph, signout', guarded(async () => {
    const dir = tmpDir();
    const client = await launch(dir);
    try {
      const token = await client.acquireToken({ scopes: SCOPES }, { timeout: SIGN_IN });
      assert.equal(token.tokenType, 'Bearer');
      assert.equal(token.fromCache, false);
      assert.equal(token.account.username, ALICE);
      assert.ok(token.expiresOn > Date.now() / 1000);
      assert.ok(token.scopes.includes('User.Read'));

      const current = await client.getCurrentAccount();
      assert.equal(current.account.homeAccountId, token.account.homeAccountId);
      assert.equal(current.previousAccount, null);
      const accounts = await client.getAccounts();
      assert.deepEqual(accounts.map((a) => a.username), [ALICE]);
      assert.equal((await client.getAccounts({ username: ALICE.toUpperCase() })).length, 1);
      const summary = await client.getCacheSummary();
      assert.deepEqual(summary.refreshTokenAccounts, [token.account.homeAccountId]);
      assert.deepEqual(summary.accessTokens.map((t) => t.homeAccountId), [token.account.homeAccountId]);
      assert.ok(!JSON.stringify(summary).includes(token.accessToken));

      const silent = await client.acquireTokenSilent({ scopes: SCOPES });
      assert.equal(silent.fromCache, true);
      assert.equal(silent.accessToken, token.accessToken);
      const correlationId = '12345678-1234-4123-8123-123456789abc';
      const refreshed = await client.acquireTokenSilent({ scopes: SCOPES, account: token.account, forceRefresh: true, correlationId });
      assert.equal(refreshed.fromCache, false);
      assert.equal(refreshed.correlationId, correlationId);
      assert.notEqual(refreshed.accessToken, token.accessToken);
      assert.equal(await mock.count('token:refresh_token'), 1);

      const me = await client.callGraph('/me');
      assert.equal(me.status, 200);
      assert.equal(me.body.userPrincipalName, ALICE);
      const beta = await client.callGraph({ path: '/me', apiVersion: 'beta', query: { $select: 'displayName' } });
      assert.equal(beta.status, 200);
      const forbidden = await client.callGraph({ path: '/users', query: { $top: '2' } });
      assert.equal(forbidden.status, 403); // a Graph error is a result

      const out = await client.signout();
      assert.equal(out.signedOut, true);
      assert.deepEqual(await client.getAccounts(), []);
      const after = await client.getCurrentAccount();
      assert.equal(after.account, null);
      assert.equal(after.previousAccount.homeAccountId, token.account.homeAccountId);
      await assert.rejects(client.acquireTokenSilent({ scopes: SCOPES }), sidecar.InteractionRequiredError);
    } finally {
      assert.equal(await client.close(), 0);
    }
  }));

  test('proof-of-possession: a PoP token with its signed HTTP request, signHttpRequest', guarded(async () => {
    const dir = tmpDir();
    const client = await launch(dir);
    try {
      await client.acquireToken({ scopes: SCOPES }, { timeout: SIGN_IN });
      const url = `${mock.url}/pop/resource`;
      const pop = await client.acquireTokenSilent({ scopes: SCOPES, proofOfPossession: { method: 'GET', url } });
      assert.equal(pop.tokenType, 'pop');
      assert.equal(pop.authorizationHeader, `PoP ${pop.signedHttpRequest}`);
      const payload = (shr) => JSON.parse(Buffer.from(shr.split('.')[1], 'base64url').toString());
      assert.equal(payload(pop.signedHttpRequest).at, pop.accessToken);
      const signed = await client.signHttpRequest({ method: 'PUT', url, nonce: 'n-1', scopes: SCOPES });
      assert.equal(signed.fromCache, true);
      assert.deepEqual([payload(signed.signedHttpRequest).m, payload(signed.signedHttpRequest).nonce], ['PUT', 'n-1']);
      assert.throws(() => client.signHttpRequest({ url }), TypeError);
      const arc = await client.signHttpRequest({ resourceId: '/subscriptions/1/connectedClusters/c', scopes: SCOPES });
      assert.equal(payload(arc.signedHttpRequest).u, '/subscriptions/1/connectedClusters/c');
      assert.equal(payload(arc.signedHttpRequest).m, undefined);
      const bearer = await client.acquireTokenSilent({ scopes: SCOPES });
      assert.equal(bearer.tokenType, 'Bearer');
      assert.equal(bearer.signedHttpRequest, undefined);
    } finally {
      assert.equal(await client.close(), 0);
    }
  }));

  test('setCurrentAccount switches what silent calls use', guarded(async () => {
    const client = await launch(tmpDir());
    try {
      const alice = (await client.acquireToken({ scopes: SCOPES, loginHint: ALICE }, { timeout: SIGN_IN })).account;
      await client.acquireToken({ scopes: SCOPES, loginHint: BOB }, { timeout: SIGN_IN });
      assert.equal((await client.getCurrentAccount()).account.username, BOB);
      const switched = await client.setCurrentAccount(ALICE);
      assert.equal(switched.account.username, ALICE);
      assert.equal(switched.previousAccount.username, BOB);
      assert.equal((await client.acquireTokenSilent({ scopes: SCOPES })).account.username, ALICE);
      assert.equal((await client.setCurrentAccount(alice)).account.homeAccountId, alice.homeAccountId);
      await assert.rejects(client.setCurrentAccount('nobody@contoso.com'), sidecar.AccountNotFoundError);
      assert.throws(() => client.setCurrentAccount(null), TypeError);
    } finally {
      await client.close();
    }
  }));

  test('the cache survives a restart', guarded(async () => {
    const dir = tmpDir();
    let client = await launch(dir);
    const first = await client.acquireToken({ scopes: SCOPES, loginHint: BOB }, { timeout: SIGN_IN });
    assert.equal(first.account.username, BOB);
    await client.close();
    client = await launch(dir);
    try {
      const again = await client.acquireTokenSilent({ scopes: SCOPES, account: BOB });
      assert.equal(again.fromCache, true);
      assert.equal(again.accessToken, first.accessToken);
    } finally {
      await client.close();
    }
  }));

  test('revoked refresh token: InteractionRequiredError; service failure: ServerError', guarded(async () => {
    const dir = tmpDir();
    const client = await launch(dir);
    try {
      await client.acquireToken({ scopes: SCOPES }, { timeout: SIGN_IN });
      await mock.admin('revoke', { username: ALICE });
      await assert.rejects(client.acquireTokenSilent({ scopes: SCOPES, forceRefresh: true }),
        (err) => err instanceof sidecar.InteractionRequiredError && err.oauthError === 'invalid_grant');
      await client.acquireToken({ scopes: SCOPES }, { timeout: SIGN_IN });
      await mock.admin('faults', { endpoint: 'token', type: 'status', status: 500, times: -1 });
      await assert.rejects(client.acquireTokenSilent({ scopes: SCOPES, forceRefresh: true }),
        (err) => err instanceof sidecar.ServerError && err.code === -50006 && err.data.httpStatus === 500);
    } finally {
      await client.close();
    }
  }));

  test('device code flow: the deviceCode event', guarded(async () => {
    const dir = tmpDir();
    const client = await launch(dir, { timeout: SIGN_IN });
    const seen = [];
    client.on('deviceCode', (code) => {
      seen.push(code);
      mock.admin('devicecode', { action: 'approve', user_code: code.userCode, username: BOB });
    });
    try {
      const token = await client.acquireToken({ scopes: SCOPES, flow: 'deviceCode' });
      assert.equal(token.account.username, BOB);
      assert.equal(seen.length, 1);
      assert.ok(seen[0].message.includes(seen[0].userCode));
      assert.ok(seen[0].verificationUri.startsWith(mock.url));
      assert.equal(typeof seen[0].requestId, 'number');
    } finally {
      await client.close();
    }
  }));

  test('device code declined, per-call handler', guarded(async () => {
    const dir = tmpDir();
    const client = await launch(dir, { timeout: SIGN_IN });
    const eventSeen = [];
    client.on('deviceCode', (code) => eventSeen.push(code));
    try {
      await assert.rejects(client.acquireToken({ scopes: SCOPES, flow: 'deviceCode' }, {
        onDeviceCode: (code) => mock.admin('devicecode', { action: 'decline', user_code: code.userCode }),
      }), (err) => err instanceof sidecar.UserCanceledError && err.oauthError === 'authorization_declined');
      assert.equal(eventSeen.length, 0);
    } finally {
      await client.close();
    }
  }));

  test('onOpenUrl: the client opens the browser', guarded(async () => {
    const dir = tmpDir();
    const opened = [];
    const env = mock.env(dir, 'complete', { SCRIPTED_BROWSER_WAIT: '1' });
    const client = await launch(dir, {
      envExtra: { BROWSER: '/bin/false' }, timeout: SIGN_IN,
      onOpenUrl: (url) => {
        opened.push(url);
        spawn(process.env.PYTHON || 'python3', [SCRIPTED_BROWSER, url], { env, stdio: 'ignore' });
      },
    });
    try {
      assert.equal(client.serverInfo.configuration.browser, 'client');
      const token = await client.acquireToken({ scopes: SCOPES, promptType: 'selectAccount' });
      assert.equal(token.account.username, ALICE);
      assert.equal(opened.length, 1);
      assert.match(opened[0], /\/oauth2\/v2\.0\/authorize\?.*prompt=select_account/);
    } finally {
      await client.close();
    }
  }));

  test('onPasteSignIn: the paste-back sign-in, and a wrong state', guarded(async () => {
    const dir = tmpDir();
    const env = mock.env(dir, 'complete', { SCRIPTED_BROWSER_ADDRESS: '1' });
    const browse = (url) => {
      const done = spawnSync(process.env.PYTHON || 'python3', [SCRIPTED_BROWSER, url], { env, encoding: 'utf8' });
      assert.equal(done.status, 0, done.stderr);
      return done.stdout.trim();
    };
    const shown = [];
    let change = (address) => address;
    const client = await launch(dir, {
      timeout: SIGN_IN,
      onPasteSignIn: async (url, params) => { shown.push(params); return change(browse(url)); },
    });
    try {
      const token = await client.acquireToken({ scopes: SCOPES, flow: 'paste' });
      assert.equal(token.account.username, ALICE);
      assert.equal(shown.length, 1);
      assert.match(shown[0].url, /redirect_uri=http%3A%2F%2Flocalhost&/);
      change = (address) => address.replace('state=', 'state=x');
      await assert.rejects(client.acquireToken({ scopes: SCOPES, flow: 'paste' }),
        (err) => err instanceof sidecar.PastedAddressRefusedError && err.code === -51017 && err.data.name === 'pastedStateMismatch');
    } finally {
      await client.close();
    }
  }));

  test('onOpenUrl refusing: BrowserUnavailableError', guarded(async () => {
    const dir = tmpDir();
    for (const onOpenUrl of [async () => false, () => { throw new Error('no display'); }]) {
      const client = await launch(dir, { onOpenUrl, timeout: SIGN_IN });
      try {
        await assert.rejects(client.acquireToken({ scopes: SCOPES }),
          (err) => err instanceof sidecar.BrowserUnavailableError && err.code === -51006);
      } finally {
        await client.close();
      }
    }
  }));

  test('the user cancels in the browser: UserCanceledError', guarded(async () => {
    const dir = tmpDir();
    const client = await launch(dir, { action: 'deny', timeout: SIGN_IN });
    try {
      await assert.rejects(client.acquireToken({ scopes: SCOPES }), sidecar.UserCanceledError);
    } finally {
      await client.close();
    }
  }));

  test('aborting an interactive sign-in sends $/cancelRequest', guarded(async () => {
    // the browser never answers (the user closed it); the app aborts. The sidecar must have
    // cancelled: a second interactive sign-in is not 'interactiveInProgress'.
    const dir = tmpDir();
    const client = await launch(dir, { action: 'cancel', timeout: SIGN_IN });
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 1000);
      const started = Date.now();
      await assert.rejects(client.acquireToken({ scopes: SCOPES }, { signal: controller.signal }),
        (err) => err instanceof sidecar.RequestCancelledError && err.raw.code === -32800);
      assert.ok(Date.now() - started < 8000);
      await assert.rejects(client.acquireToken({ scopes: SCOPES }, { timeout: 1000 }), sidecar.RequestTimeoutError);
      assert.deepEqual(await client.ping(), {});
    } finally {
      await client.close();
    }
  }));

  test('the sidecar is killed during a sign-in: the call fails, no hang', guarded(async () => {
    const dir = tmpDir();
    const client = await launch(dir, { action: 'cancel', timeout: SIGN_IN });
    setTimeout(() => client.kill(), 500);
    await assert.rejects(client.acquireToken({ scopes: SCOPES }), sidecar.SidecarExitedError);
    await client.close();
  }));
});
