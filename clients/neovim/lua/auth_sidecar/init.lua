-- auth_sidecar: Microsoft identity platform sign-in, tokens and Graph calls in Neovim,
-- through the auth-sidecar process (JSON-RPC 2.0 over stdio, see rpc.lua).
local rpc = require('auth_sidecar.rpc')
local json = require('auth_sidecar.json')

local M = {}

-- Keys forwarded to the sidecar in `initialize` (protocol/README.md, Configuration).
local CONFIG_KEYS = {
  'clientId', 'authority', 'redirectUri', 'knownAuthorities', 'scopes', 'graphEndpoint',
  'cache', 'sharedDeviceMode', 'clientCapabilities', 'browser',
}

local defaults = {
  binary = nil,        -- default: $AUTH_SIDECAR_BIN, else "auth-sidecar" on PATH
  args = {},           -- extra command-line arguments, e.g. {"--config", "~/.config/auth-sidecar.json"}
  profile = nil,       -- a profile of the configuration file (its "profiles"): started with --profile NAME
  env = nil,           -- extra environment for the sidecar, e.g. {SSL_CERT_FILE = "..."}
  flow = 'deviceCode', -- default :AuthSidecarSignIn flow: "deviceCode", "browser" or "paste"
  register = nil,      -- register for :AuthSidecarToken; default "+" with a clipboard, else '"'
  notify = nil,        -- function(msg, level); default vim.notify
  open_url = nil,      -- browser = "client": function(url) or command list (URL appended);
                       -- default $BROWSER, else xdg-open
  float = true,        -- show the device code in a floating window
}

local config = vim.deepcopy(defaults)
local state = { client = nil, ready = false, waiting = {}, signin = nil, float = nil }

local function notify(msg, level)
  (config.notify or vim.notify)('auth-sidecar: ' .. msg, level or vim.log.levels.INFO)
end

local function is_null(v) return v == nil or v == vim.NIL end

local function format_error(err)
  if type(err) ~= 'table' then return tostring(err) end
  local name = type(err.data) == 'table' and err.data.name or nil
  local s = string.format('%s (%s%s)', tostring(err.message), tostring(err.code),
    name and (' ' .. name) or '')
  if err.code == -50002 then s = s .. '; run :AuthSidecarSignIn' end
  return s
end
M.format_error = format_error

local function report(err)
  local level = vim.log.levels.ERROR
  if err.code == -50002 or err.code == -32800 or err.code == -50005 then level = vim.log.levels.WARN end
  notify(format_error(err), level)
end

local function describe_account(a)
  if is_null(a) then return 'nobody' end
  local name = not is_null(a.name) and a.name or nil
  if name then return string.format('%s <%s>', name, a.username) end
  return tostring(a.username)
end

-- Device code window -------------------------------------------------------------------

local function close_float()
  local f = state.float
  state.float = nil
  if not f then return end
  if vim.api.nvim_win_is_valid(f.win) then pcall(vim.api.nvim_win_close, f.win, true) end
  if vim.api.nvim_buf_is_valid(f.buf) then pcall(vim.api.nvim_buf_delete, f.buf, { force = true }) end
end

local function wrap(text, width)
  local lines, line = {}, ''
  for word in tostring(text):gmatch('%S+') do
    if line ~= '' and #line + 1 + #word > width then
      table.insert(lines, line); line = word
    else
      line = line == '' and word or (line .. ' ' .. word)
    end
  end
  if line ~= '' then table.insert(lines, line) end
  return lines
end

local function show_device_code(p)
  close_float()
  local width = math.max(40, math.min(72, vim.o.columns - 6))
  local lines = { 'Microsoft sign-in', '' }
  vim.list_extend(lines, wrap(p.message, width))
  vim.list_extend(lines, { '', 'Code: ' .. tostring(p.userCode), 'URL:  ' .. tostring(p.verificationUri),
    '', ':AuthSidecarCancel (or q in this window) cancels' })
  local w = 0
  for _, l in ipairs(lines) do w = math.max(w, vim.fn.strdisplaywidth(l)) end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(buf, 'modifiable', false)
  vim.api.nvim_buf_set_option(buf, 'bufhidden', 'wipe')
  vim.api.nvim_buf_set_var(buf, 'auth_sidecar_user_code', tostring(p.userCode))
  for _, key in ipairs({ 'q', '<Esc>' }) do
    vim.api.nvim_buf_set_keymap(buf, 'n', key, '<Cmd>AuthSidecarCancel<CR>', { noremap = true, silent = true })
  end
  local ok, win = pcall(vim.api.nvim_open_win, buf, false, {
    relative = 'editor', row = 1, col = math.max(0, vim.o.columns - w - 4),
    width = w, height = #lines, style = 'minimal', border = 'rounded', focusable = true,
  })
  if ok then state.float = { win = win, buf = buf } else
    vim.api.nvim_buf_delete(buf, { force = true })
  end
end

-- Process ------------------------------------------------------------------------------

local function on_notification(method, params)
  if method == 'deviceCode' and type(params) == 'table' then
    if config.float then show_device_code(params) end
    notify(tostring(params.message))
  end
end

local function open_url(url)
  local opener = config.open_url
  if type(opener) == 'function' then return opener(url) end
  local cmd
  if type(opener) == 'table' then cmd = vim.deepcopy(opener)
  elseif vim.env.BROWSER and vim.env.BROWSER ~= '' then cmd = { vim.env.BROWSER }
  else cmd = { 'xdg-open' } end
  table.insert(cmd, url)
  local job = vim.fn.jobstart(cmd, { detach = true })
  if job <= 0 then return false, 'cannot run ' .. cmd[1] end
  return true
end

local function on_request(method, params)
  if method == 'openUrl' then
    local ok, why = open_url(params.url)
    if ok == false then
      return nil, { code = -51006, message = 'Browser unavailable: ' .. tostring(why),
                    data = { name = 'browserUnavailable' } }
    end
    notify('opened the sign-in page in the browser')
    return vim.empty_dict()
  end
  if method == 'pasteSignIn' then
    -- The paste-back sign-in: the URL is shown (and put in the unnamed register); the user
    -- signs in in any browser and pastes back the address it ends on (vim.ui.input).
    return function(respond)
      pcall(vim.fn.setreg, '"', tostring(params.url))
      notify('to sign in, open this URL in any browser (also in register "): ' .. tostring(params.url))
      vim.ui.input({ prompt = 'auth-sidecar: paste the address the browser ended on (http://localhost...): ' },
        function(input)
          if input == nil or not input:match('%S') then
            respond(nil, { code = -32000, message = 'no address was pasted', data = { name = 'noPastedAddress' } })
          else
            respond({ redirectedTo = input })
          end
        end)
    end
  end
  return nil, { code = -32601, message = 'Method not found', data = { name = 'methodNotFound' } }
end

local function initialize_params()
  if config.clientId == nil then return nil end -- configured by args (--client-id / --config)
  local p = {}
  for _, k in ipairs(CONFIG_KEYS) do
    if config[k] ~= nil then p[k] = config[k] end
  end
  p.clientInfo = { name = 'auth_sidecar.nvim', version = '0.1.0' }
  return p
end

local function flush_waiting(err, client)
  local waiting = state.waiting
  state.waiting = {}
  for _, cb in ipairs(waiting) do cb(err, client) end
end

-- cb(err, client) once the sidecar is running and initialized.
local function ensure(cb)
  local c = state.client
  if c and c:is_running() then
    if state.ready then return cb(nil, c) end
    table.insert(state.waiting, cb)
    return
  end
  local binary = config.binary or vim.env.AUTH_SIDECAR_BIN
  if binary == nil or binary == '' then binary = 'auth-sidecar' end
  local cmd = { vim.fn.expand(binary) }
  if config.profile then vim.list_extend(cmd, { '--profile', config.profile }) end
  for _, a in ipairs(config.args or {}) do table.insert(cmd, a) end
  local client
  client, c = rpc.start({
    cmd = cmd, env = config.env,
    on_notification = on_notification, on_request = on_request,
    on_exit = function()
      if state.client == client then
        state.client, state.ready = nil, false
        if state.signin then close_float(); state.signin = nil end
      end
    end,
  })
  if not client then
    return cb({ code = -32603, message = c, data = { name = 'sidecarUnavailable' } })
  end
  state.client, state.ready, state.waiting = client, false, { cb }
  local params = initialize_params()
  if params == nil then
    state.ready = true
    return flush_waiting(nil, client)
  end
  client:request('initialize', params, function(err, result)
    if err then
      client:stop()
      if state.client == client then state.client = nil end
      return flush_waiting(err, nil)
    end
    state.ready = true
    state.server_info = result
    flush_waiting(nil, client)
  end)
end

--- Send any request to the sidecar (starting it if needed); cb(err, result).
function M.request(method, params, cb)
  ensure(function(err, client)
    if err then return cb(err) end
    client:request(method, params, cb)
  end)
end

-- Commands (each takes opts and an optional callback(err, result); without a callback
-- the outcome is reported with notify) -------------------------------------------------

local function finish(cb, err, result, on_ok)
  if err then
    if cb then cb(err) else report(err) end
    return
  end
  if on_ok then on_ok(result) end
  if cb then cb(nil, result) end
end

--- Interactive sign-in. opts: flow ("deviceCode"|"browser"|"paste"), scopes, loginHint, promptType.
function M.sign_in(opts, cb)
  opts = opts or {}
  if state.signin then
    local err = { code = -51007, message = 'a sign-in is already in progress (:AuthSidecarCancel)',
                  data = { name = 'interactiveInProgress' } }
    return finish(cb, err)
  end
  local params = { flow = opts.flow or config.flow }
  for _, k in ipairs({ 'scopes', 'loginHint', 'promptType', 'domainHint', 'claims' }) do
    if opts[k] ~= nil then params[k] = opts[k] end
  end
  state.signin = { pending = true }
  ensure(function(err, client)
    if err then state.signin = nil; return finish(cb, err) end
    local token = state.signin
    local id = client:request('acquireToken', params, function(e, result)
      if state.signin == token then state.signin = nil end
      close_float()
      finish(cb, e, result, function(r)
        notify('signed in as ' .. describe_account(r.account))
      end)
    end)
    if id and state.signin == token then token.id, token.client = id, client end
  end)
end

--- Cancel the sign-in in progress ($/cancelRequest).
function M.cancel()
  local s = state.signin
  if not (s and s.id and s.client) then
    notify('no sign-in in progress', vim.log.levels.WARN)
    return
  end
  s.client:cancel(s.id) -- its callback reports -32800
end

--- A token without interaction; copies it to a register. opts: scopes, register, forceRefresh.
function M.token(opts, cb)
  opts = opts or {}
  local params = vim.empty_dict()
  if opts.scopes and #opts.scopes > 0 then params = { scopes = opts.scopes } end
  if opts.forceRefresh then
    if getmetatable(params) then params = {} end
    params.forceRefresh = true
  end
  M.request('acquireTokenSilent', params, function(err, result)
    finish(cb, err, result, function(r)
      local reg = opts.register or config.register
      if reg == nil then reg = vim.fn.has('clipboard') == 1 and '+' or '"' end
      if reg ~= false then vim.fn.setreg(reg, r.accessToken) end
      local expires = os.date('%H:%M', tonumber(r.expiresOn) or 0)
      notify(string.format('token for %s (expires %s%s)%s: %s…', describe_account(r.account), expires,
        r.fromCache and ', cached' or '', reg and (' copied to register ' .. reg) or '',
        string.sub(r.accessToken, 1, 12)))
    end)
  end)
end

--- The current account.
function M.account(cb)
  M.request('getCurrentAccount', vim.empty_dict(), function(err, result)
    finish(cb, err, result, function(r)
      if is_null(r.account) then
        local prev = not is_null(r.previousAccount) and (' (previously ' .. describe_account(r.previousAccount) .. ')') or ''
        notify('no account signed in' .. prev)
      else
        local a = r.account
        notify(string.format('signed in as %s, tenant %s, %s', describe_account(a), tostring(a.tenantId),
          tostring(a.homeAccountId)))
      end
    end)
  end)
end

local function show_scratch(name, lines, status)
  local buf = vim.fn.bufnr(name)
  if buf <= 0 or not vim.api.nvim_buf_is_valid(buf) then
    buf = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.api.nvim_buf_set_option(buf, 'buftype', 'nofile')
    vim.api.nvim_buf_set_option(buf, 'bufhidden', 'hide')
    vim.api.nvim_buf_set_option(buf, 'swapfile', false)
  end
  vim.api.nvim_buf_set_option(buf, 'modifiable', true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(buf, 'modifiable', false)
  vim.api.nvim_buf_set_option(buf, 'filetype', 'json')
  vim.api.nvim_buf_set_var(buf, 'auth_sidecar_status', status)
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, buf)
  else
    vim.api.nvim_set_current_win(win)
  end
  return buf
end

--- Call Microsoft Graph; shows the JSON body in a scratch buffer. opts: path, method,
--- apiVersion, query, headers, body, scopes.
function M.graph(opts, cb)
  opts = opts or {}
  local params = { path = opts.path or '/me' }
  for _, k in ipairs({ 'method', 'apiVersion', 'query', 'headers', 'body', 'scopes' }) do
    if opts[k] ~= nil then params[k] = opts[k] end
  end
  M.request('callGraph', params, function(err, result)
    finish(cb, err, result, function(r)
      local lines
      if type(r.body) == 'string' then lines = vim.split(r.body, '\n', { plain = true })
      else lines = json.pretty_lines(r.body) end
      local name = 'auth-sidecar://graph' .. params.path:gsub('%?.*$', '')
      local buf = show_scratch(name, lines, r.status)
      local level = (tonumber(r.status) or 0) >= 400 and vim.log.levels.WARN or vim.log.levels.INFO
      notify(string.format('%s %s: HTTP %s (buffer %d)', opts.method or 'GET', params.path,
        tostring(r.status), buf), level)
    end)
  end)
end

function M.graph_me(cb) return M.graph({ path = '/me' }, cb) end

--- Sign out the current account (or opts.account = {username=...}).
function M.sign_out(opts, cb)
  opts = opts or {}
  local params = vim.empty_dict()
  if opts.account then params = { account = opts.account } end
  M.request('signout', params, function(err, result)
    finish(cb, err, result, function(r)
      notify('signed out ' .. (is_null(r.account) and '' or describe_account(r.account)))
    end)
  end)
end

--- Stop the sidecar (SIGTERM: it cancels what is in flight and flushes its cache).
function M.stop()
  close_float()
  state.signin = nil
  if state.client then state.client:stop() end
  state.client, state.ready = nil, false
end

function M.is_running() return state.client ~= nil and state.client:is_running() end
function M.device_code_window() return state.float end

function M.setup(opts)
  local was_running = state.client ~= nil
  M.stop()
  config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  if opts and opts.args then config.args = opts.args end
  if was_running then notify('configuration changed; the sidecar restarts on the next command') end
end

function M.config() return config end

return M
