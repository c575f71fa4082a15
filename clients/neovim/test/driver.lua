-- Headless test driver for auth_sidecar.nvim (run by test/run.sh, which starts the mock
-- identity platform and exports MOCK_URL, MOCK_CA, MOCK_CLIENT_ID, TEST_TMP).
local env = vim.env
local results, failures = {}, 0

local function log(s) io.stderr:write(s .. '\n') end

-- Capture what the plugin tells the user (it goes through vim.notify).
local messages = {}
local real_notify = vim.notify
vim.notify = function(msg, level)
  table.insert(messages, { msg = msg, level = level or vim.log.levels.INFO })
end

local function wait_for(what, cond, ms)
  local ok = vim.wait(ms or 15000, cond, 20)
  if not ok then error('timed out waiting for ' .. what, 2) end
end

-- Wait for a message containing the plain string `pattern` (from index `from`).
local function wait_message(pattern, from)
  local found
  wait_for('message ' .. pattern, function()
    for i = from or 1, #messages do
      if messages[i].msg:find(pattern, 1, true) then found = messages[i]; return true end
    end
    return false
  end)
  return found
end

local function check(cond, what)
  if not cond then error('assertion failed: ' .. what, 2) end
end

local function admin(path, body)
  local out = vim.fn.system({ 'curl', '-sS', '--fail', '--max-time', '10', '--cacert', env.MOCK_CA,
    '-H', 'Content-Type: application/json', '-X', 'POST', '-d', vim.json.encode(body), env.MOCK_URL .. path })
  if vim.v.shell_error ~= 0 then error('admin ' .. path .. ' failed: ' .. out) end
  return vim.json.decode(out)
end

local function test(name, fn)
  local mark = #messages + 1
  local ok, err = xpcall(function() fn(mark) end, debug.traceback)
  if ok then log('ok   - ' .. name) else
    failures = failures + 1
    log('FAIL - ' .. name .. '\n' .. tostring(err))
    for i = mark, #messages do log('       message: ' .. messages[i].msg) end
  end
end

vim.cmd('runtime plugin/auth_sidecar.lua')
local sidecar = require('auth_sidecar')
local base = {
  binary = env.AUTH_SIDECAR_BIN,
  clientId = env.MOCK_CLIENT_ID,
  authority = env.MOCK_URL .. '/common',
  knownAuthorities = { '127.0.0.1' },
  graphEndpoint = env.MOCK_URL .. '/',
  cache = { path = env.TEST_TMP .. '/nvim-cache.json' },
  env = { SSL_CERT_FILE = env.MOCK_CA },
  register = 'a',
}
sidecar.setup(base)

test('commands are defined', function()
  for _, c in ipairs({ 'AuthSidecarSignIn', 'AuthSidecarToken', 'AuthSidecarAccount', 'AuthSidecarGraphMe',
                       'AuthSidecarSignOut', 'AuthSidecarCancel' }) do
    check(vim.fn.exists(':' .. c) == 2, c .. ' exists')
  end
end)

test('account before sign-in: nobody', function(mark)
  vim.cmd('AuthSidecarAccount')
  wait_message('no account signed in', mark)
end)

test('token before sign-in: interaction required, register untouched', function(mark)
  vim.fn.setreg('a', 'untouched')
  vim.cmd('AuthSidecarToken')
  local m = wait_message('-50002', mark)
  check(m.level == vim.log.levels.WARN, 'warning level')
  check(m.msg:find('AuthSidecarSignIn', 1, true), 'hint to sign in: ' .. m.msg)
  check(vim.fn.getreg('a') == 'untouched', 'register a untouched')
end)

test('device code sign-in: floating window, approve, signed in', function(mark)
  vim.cmd('AuthSidecarSignIn')
  wait_for('device code window', function() return sidecar.device_code_window() ~= nil end)
  local f = sidecar.device_code_window()
  check(vim.api.nvim_win_get_config(f.win).relative == 'editor', 'a floating window')
  local text = table.concat(vim.api.nvim_buf_get_lines(f.buf, 0, -1, false), '\n')
  local code = vim.api.nvim_buf_get_var(f.buf, 'auth_sidecar_user_code')
  check(text:find('Code: ' .. code, 1, true), 'window shows the code: ' .. text)
  check(text:find(env.MOCK_URL .. '/devicelogin', 1, true), 'window shows the URL')
  wait_message('enter the code ' .. code, mark) -- also in :messages
  local r = admin('/_admin/devicecode', { user_code = code, action = 'approve' })
  check(r.status == 'approved', 'mock approved')
  wait_message('signed in as Alice Example <alice@contoso.com>', mark)
  check(sidecar.device_code_window() == nil and not vim.api.nvim_win_is_valid(f.win), 'window closed')
end)

test('token: silent, into register a, only a prefix echoed', function(mark)
  vim.fn.setreg('a', '')
  vim.cmd('AuthSidecarToken')
  local m = wait_message('token for', mark)
  local tok = vim.fn.getreg('a')
  check(tok:match('^eyJ[%w_-]+%.[%w_-]+%.[%w_-]+$'), 'register a holds a JWT: ' .. tok:sub(1, 20))
  check(m.msg:find('register a', 1, true) and m.msg:find('alice@contoso.com', 1, true), m.msg)
  check(m.msg:find(tok:sub(1, 12), 1, true), 'prefix echoed')
  check(not m.msg:find(tok:sub(1, 40), 1, true), 'token redacted in the message')
  check(m.msg:find('cached', 1, true), 'from cache')
end)

test('token with register and scope arguments, forced refresh', function(mark)
  vim.cmd('AuthSidecarToken! b User.Read')
  local m = wait_message('token for', mark)
  check(vim.fn.getreg('b'):match('^eyJ'), 'register b holds the token')
  check(not m.msg:find('cached', 1, true), 'forceRefresh: not from cache: ' .. m.msg)
end)

test('account: signed in', function(mark)
  vim.cmd('AuthSidecarAccount')
  local m = wait_message('signed in as', mark)
  check(m.msg:find('Alice Example <alice@contoso.com>', 1, true), m.msg)
  check(m.msg:find('aaaabbbb-0000-cccc-1111-dddd2222eeee', 1, true), 'tenant shown')
end)

test('Graph /me: JSON in a scratch buffer', function(mark)
  vim.cmd('AuthSidecarGraphMe')
  wait_message('GET /me: HTTP 200', mark)
  local buf = vim.fn.bufnr('auth-sidecar://graph/me')
  check(buf > 0, 'buffer auth-sidecar://graph/me')
  check(vim.api.nvim_get_current_buf() == buf, 'shown in the current window')
  check(vim.api.nvim_buf_get_option(buf, 'buftype') == 'nofile', 'scratch')
  check(vim.api.nvim_buf_get_option(buf, 'filetype') == 'json', 'json filetype')
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local body = vim.json.decode(table.concat(lines, '\n'))
  check(body.userPrincipalName == 'alice@contoso.com', 'userPrincipalName')
  check(body.displayName == 'Alice Example', 'displayName')
  check(vim.tbl_contains(lines, '  "jobTitle": null,'), 'nulls kept, pretty printed')
  check(vim.tbl_contains(lines, '  "businessPhones": [],'), 'empty arrays kept')
  check(vim.api.nvim_buf_get_var(buf, 'auth_sidecar_status') == 200, 'b:auth_sidecar_status')
  -- again: the same buffer is reused
  vim.cmd('AuthSidecarGraphMe')
  wait_message('GET /me: HTTP 200', mark + 1)
  check(vim.fn.bufnr('auth-sidecar://graph/me') == buf, 'buffer reused')
end)

test('sign out, then nobody', function(mark)
  vim.cmd('AuthSidecarSignOut')
  wait_message('signed out Alice Example <alice@contoso.com>', mark)
  vim.cmd('AuthSidecarAccount')
  wait_message('no account signed in', mark)
  vim.cmd('AuthSidecarToken')
  wait_message('-50002', mark)
end)

test('cancel a device code sign-in', function(mark)
  vim.cmd('AuthSidecarSignIn deviceCode')
  wait_for('device code window', function() return sidecar.device_code_window() ~= nil end)
  vim.cmd('AuthSidecarCancel')
  local m = wait_message('-32800', mark)
  check(m.level == vim.log.levels.WARN, 'warning')
  check(sidecar.device_code_window() == nil, 'window closed')
  -- a new sign-in can start, and a second one at the same time is refused
  vim.cmd('AuthSidecarSignIn')
  vim.cmd('AuthSidecarSignIn')
  wait_message('already in progress', mark)
  wait_for('device code window', function() return sidecar.device_code_window() ~= nil end)
  vim.cmd('AuthSidecarCancel')
  wait_for('second cancel', function()
    local n = 0
    for i = mark, #messages do if messages[i].msg:find('-32800', 1, true) then n = n + 1 end end
    return n == 2
  end)
end)

test('browser sign-in, system browser ($BROWSER for the sidecar)', function(mark)
  sidecar.setup(vim.tbl_extend('force', base, {
    env = { SSL_CERT_FILE = env.MOCK_CA, BROWSER = env.SCRIPTED_BROWSER, SCRIPTED_BROWSER_CA = env.MOCK_CA },
  }))
  vim.cmd('AuthSidecarSignIn browser')
  wait_message('signed in as Alice Example', mark)
end)

test('browser sign-in, browser = "client" (the plugin answers openUrl)', function(mark)
  vim.cmd('AuthSidecarSignOut')
  wait_message('signed out', mark)
  vim.env.SCRIPTED_BROWSER_CA = env.MOCK_CA
  sidecar.setup(vim.tbl_extend('force', base, {
    browser = 'client', open_url = { 'python3', env.SCRIPTED_BROWSER },
  }))
  vim.cmd('AuthSidecarSignIn browser')
  wait_message('opened the sign-in page', mark)
  wait_message('signed in as Alice Example', mark)
  vim.cmd('AuthSidecarAccount')
  wait_message('signed in as Alice Example <alice@contoso.com>, tenant', mark)
end)

test('paste-back sign-in: the URL shown, the address asked with vim.ui.input', function(mark)
  vim.cmd('AuthSidecarSignOut')
  wait_message('signed out', mark)
  sidecar.setup(base)
  local real_input, asked = vim.ui.input, nil
  vim.ui.input = function(opts, on_confirm)
    -- The user: opens the URL in the scripted browser, copies the address it ends on.
    asked = opts.prompt
    local url = vim.fn.getreg('"')
    local address = vim.fn.system({ 'env', 'SCRIPTED_BROWSER_ADDRESS=1', 'SCRIPTED_BROWSER_CA=' .. env.MOCK_CA,
      'python3', env.SCRIPTED_BROWSER, url })
    check(vim.v.shell_error == 0, 'the scripted browser ended on an address: ' .. address)
    on_confirm(vim.trim(address))
  end
  vim.cmd('AuthSidecarSignIn paste')
  local shown = wait_message('open this URL in any browser', mark)
  check(shown.msg:find('redirect_uri=http%3A%2F%2Flocalhost&', 1, true), 'the URL: ' .. shown.msg)
  wait_message('signed in as Alice Example', mark)
  check(asked and asked:find('paste the address', 1, true), 'asked with vim.ui.input: ' .. tostring(asked))
  vim.ui.input = function(_, on_confirm) on_confirm(nil) end -- the user gives up
  vim.cmd('AuthSidecarSignIn paste')
  wait_message('-50005', mark)
  vim.ui.input = real_input
end)

test('a new process reads the same cache', function(mark)
  sidecar.stop()
  check(not sidecar.is_running(), 'stopped')
  vim.cmd('AuthSidecarToken')
  wait_message('token for Alice Example', mark)
end)

test('profile: the sidecar starts with --profile NAME of the configuration file', function(mark)
  local file = env.TEST_TMP .. '/profiles.json'
  local shared = { authority = base.authority, knownAuthorities = base.knownAuthorities, clientId = base.clientId }
  vim.fn.writefile({ vim.json.encode(vim.tbl_extend('force', shared, {
    defaultProfile = 'empty',
    profiles = { lab = { cache = base.cache }, empty = { cache = { path = env.TEST_TMP .. '/empty-cache.json' } } },
  })) }, file)
  local from_file = { binary = base.binary, env = { SSL_CERT_FILE = env.MOCK_CA, AUTH_SIDECAR_CONFIG = file } }
  sidecar.setup(vim.tbl_extend('force', from_file, { profile = 'lab' }))
  vim.cmd('AuthSidecarAccount')
  wait_message('signed in as Alice Example <alice@contoso.com>', mark)
  sidecar.stop()
  sidecar.setup(from_file) -- the file's default profile, whose cache is empty
  vim.cmd('AuthSidecarAccount')
  wait_message('no account signed in', mark)
end)

test('bad binary: a clear error', function(mark)
  sidecar.setup(vim.tbl_extend('force', base, { binary = env.TEST_TMP .. '/no-such-binary' }))
  vim.cmd('AuthSidecarAccount')
  local m = wait_message('cannot start', mark)
  check(m.level == vim.log.levels.ERROR, 'error level')
end)

test('invalid configuration: the initialize error is reported', function(mark)
  sidecar.setup(vim.tbl_extend('force', base, { authority = 'http://example.com/common' }))
  vim.cmd('AuthSidecarAccount')
  local m = wait_message('-32602', mark)
  check(m.msg:find('invalidParams', 1, true), m.msg)
end)

test('a typo in the configuration file: the sidecar\'s own line, naming the file and the key', function(mark)
  local file = env.TEST_TMP .. '/typo.json'
  vim.fn.writefile({ vim.json.encode({ clientid = base.clientId }) }, file)
  sidecar.setup({ binary = base.binary, env = { SSL_CERT_FILE = env.MOCK_CA, AUTH_SIDECAR_CONFIG = file } })
  vim.cmd('AuthSidecarAccount')
  local m = wait_message("did you mean 'clientId'", mark)
  check(m.msg:find("unknown key 'clientid'", 1, true) and m.msg:find(file, 1, true), m.msg)
end)

test('no configuration at all: the server\'s own line names the file to write', function(mark)
  sidecar.setup({ binary = base.binary, env = { SSL_CERT_FILE = env.MOCK_CA } })
  vim.cmd('AuthSidecarAccount')
  local m = wait_message('-32002', mark)
  check(m.msg:find(env.XDG_CONFIG_HOME .. '/auth-sidecar/config.json', 1, true)
    and m.msg:find('--client-id', 1, true), m.msg)
end)

-- A sign-in that cannot succeed ends within 10 s with the cause and the fix, instead of
-- waiting the interactive time limit (600 s) for a redirect that will not come.
local function sign_in_fails(mark, overrides, flow, expected)
  sidecar.setup(vim.tbl_extend('force', base, overrides, {
    env = { SSL_CERT_FILE = env.MOCK_CA, BROWSER = env.SCRIPTED_BROWSER, SCRIPTED_BROWSER_CA = env.MOCK_CA },
  }))
  local started = vim.loop.hrtime()
  vim.cmd('AuthSidecarSignIn ' .. flow)
  local ok = vim.wait(10000, function()
    for i = mark, #messages do
      if messages[i].msg:find(expected, 1, true) then return true end
    end
    return false
  end, 20)
  check(ok, expected .. ' within 10 s')
  check((vim.loop.hrtime() - started) / 1e9 < 10, 'within 10 s')
  sidecar.stop()
end

test('a wrong client id: the browser sign-in fails at once naming AADSTS700016', function(mark)
  sign_in_fails(mark, { clientId = '99999999-8888-7777-6666-555555555555' }, 'browser', 'AADSTS700016')
  wait_message('clientId', mark)
end)

test('the identity service unreachable: both sign-ins fail at once, naming what to check', function(mark)
  local dead = { authority = 'https://127.0.0.1:9/common' }
  sign_in_fails(mark, dead, 'browser', 'network failure reaching the identity service (https://127.0.0.1:9)')
  wait_message('check the network connection', mark)
  sign_in_fails(#messages + 1, dead, 'deviceCode', 'network failure reaching the identity service (https://127.0.0.1:9)')
end)

sidecar.stop()
vim.notify = real_notify
log(string.format('neovim: %d failure(s)', failures))
vim.cmd((failures == 0) and 'qall!' or 'cquit! 1')
