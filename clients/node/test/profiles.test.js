// `profile`: a profile of the configuration file chosen by name, through a process of the
// client's own and through a running agent (which serves every profile at once).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';

import * as sidecar from '../index.js';
import { ALICE, BINARY, BOB, CLIENT_ID, QUICK, SIGN_IN, guarded, needsBinary, startAgent, startMock, tmpDir } from './helpers.js';

const { SidecarClient } = sidecar;
const SCOPES = ['User.Read'];
const LAB_CLIENT = '00002222-aaaa-4444-bbbb-5555dddd6666';

describe('profiles', { ...needsBinary, timeout: 120000 }, () => {
  let mock;
  let agents = [];
  before(async () => { if (!needsBinary.skip && !needsBinary.failReason) mock = await startMock(); });
  after(() => mock?.stop());
  beforeEach(async () => { await mock?.reset(); });
  afterEach(async () => { await Promise.all(agents.map((agent) => agent.stop())); agents = []; });

  /** The environment of a configuration file ($AUTH_SIDECAR_CONFIG) with two profiles: work and lab (a second client id). */
  const profilesEnv = async (dir) => {
    await mock.admin('clients', { client_id: LAB_CLIENT });
    const config = {
      authority: `${mock.url}/common`, knownAuthorities: ['127.0.0.1'], graphEndpoint: `${mock.url}/`,
      cacheProtection: 'plaintext', defaultProfile: 'work',
      profiles: {
        work: { clientId: CLIENT_ID, cache: { path: path.join(dir, 'work.json') } },
        lab: { clientId: LAB_CLIENT, cache: { path: path.join(dir, 'lab.json') } },
      },
    };
    writeFileSync(path.join(dir, 'profiles.json'), JSON.stringify(config));
    return mock.env(dir, 'complete', { AUTH_SIDECAR_CONFIG: path.join(dir, 'profiles.json') });
  };

  test('profile chooses the configuration, in a process and through the agent', guarded(async () => {
    const dir = tmpDir();
    const env = await profilesEnv(dir);
    const lab = await SidecarClient.start({ binary: BINARY, env, timeout: QUICK, profile: 'lab' });
    try {
      assert.equal(lab.serverInfo.profile, 'lab');
      assert.equal(lab.serverInfo.configuration.clientId, LAB_CLIENT);
      assert.equal((await lab.acquireToken({ scopes: SCOPES, loginHint: BOB }, { timeout: SIGN_IN })).account.username, BOB);
    } finally { await lab.close(); }
    const work = await SidecarClient.start({ binary: BINARY, env, timeout: QUICK });
    try {
      assert.equal(work.serverInfo, null); // configured by the file's default profile: no initialize
      assert.equal((await work.acquireToken({ scopes: SCOPES, loginHint: ALICE }, { timeout: SIGN_IN })).account.username, ALICE);
    } finally { await work.close(); }
    await assert.rejects(SidecarClient.start({ binary: BINARY, env, timeout: QUICK, profile: 'nope' }),
      /unknown profile 'nope'.*work, lab/);

    const agent = await startAgent(env);
    agents.push(agent);
    const both = await Promise.all(['lab', 'work'].map((profile) =>
      SidecarClient.start({ socketPath: agent.socket, timeout: QUICK, profile })));
    try {
      const [onLab, onWork] = await Promise.all(both.map((client) => client.acquireTokenSilent({ scopes: SCOPES })));
      assert.equal(onLab.account.username, BOB);
      assert.equal(onWork.account.username, ALICE);
      assert.deepEqual(both.map((client) => client.serverInfo.profile), ['lab', 'work']);
    } finally { await Promise.all(both.map((client) => client.close())); }
  }));
});
