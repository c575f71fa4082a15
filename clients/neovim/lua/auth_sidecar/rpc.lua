-- auth_sidecar.rpc: a JSON-RPC 2.0 client for the auth-sidecar process over NDJSON.
--
-- Why vim.fn.jobstart + NDJSON and not vim.lsp.rpc.start (Content-Length framing)?
-- Both work on Neovim 0.7.2, but vim.lsp.rpc in 0.7.2
--   * decodes with `luanil = {object = true}`, so JSON nulls vanish from results
--     (a Graph /me body loses `"jobTitle": null`);
--   * silently drops every -32800 (RequestCancelled) reply, so a cancelled sign-in
--     never calls its callback;
--   * asserts that errors returned to server requests (our `openUrl` answer) use LSP
--     error codes only;
--   * copies the server's stderr into lsp.log.
-- jobstart gives the exact JSON (nulls as vim.NIL), every reply, and a one-line framing.
local M = {}
M.__index = M

--- Start the sidecar.
--- opts: cmd (list), env (table|nil), on_notification(method, params),
---       on_request(method, params) -> result, err, on_exit(code)
function M.start(opts)
  local self = setmetatable({
    next_id = 0,
    pending = {},   -- id -> callback(err, result)
    partial = '',
    stderr = {},    -- last lines of stderr, for error messages
    opts = opts,
  }, M)
  local job_opts = {
    on_stdout = function(_, data) self:_on_stdout(data) end,
    on_stderr = function(_, data)
      for _, line in ipairs(data) do
        if line ~= '' then
          table.insert(self.stderr, line)
          if #self.stderr > 50 then table.remove(self.stderr, 1) end
        end
      end
    end,
    on_exit = function(_, code) self:_on_exit(code) end,
  }
  if opts.env and next(opts.env) then job_opts.env = opts.env end
  local ok, job = pcall(vim.fn.jobstart, opts.cmd, job_opts)
  if not ok or job <= 0 then
    return nil, string.format('cannot start %s (%s)', opts.cmd[1],
      ok and (job == -1 and 'not executable' or 'invalid arguments') or tostring(job))
  end
  self.job = job
  return self
end

function M:_send(msg)
  if not self.job then return false end
  local ok = pcall(vim.fn.chansend, self.job, vim.json.encode(msg) .. '\n')
  return ok
end

function M:_on_stdout(data)
  -- data: lines split on "\n"; the first continues the previous partial line and the
  -- last is the (possibly empty) start of the next one.
  self.partial = self.partial .. data[1]
  for i = 2, #data do
    local line = self.partial
    self.partial = data[i]
    if line:match('%S') then self:_on_message(line) end
  end
end

function M:_on_message(line)
  local ok, msg = pcall(vim.json.decode, line)
  if not ok or type(msg) ~= 'table' then return end
  if msg.method ~= nil and msg.id ~= nil and msg.id ~= vim.NIL then
    -- server-to-client request (openUrl; pasteSignIn, answered later: the handler returns a
    -- function that is given respond(result, err))
    local handler = self.opts.on_request
    local result, err
    local function respond(r, e)
      if e then
        self:_send({ jsonrpc = '2.0', id = msg.id, error = e })
      else
        self:_send({ jsonrpc = '2.0', id = msg.id, result = r == nil and vim.empty_dict() or r })
      end
    end
    if handler then
      local hok, r, e = pcall(handler, msg.method, msg.params)
      if hok then result, err = r, e
      else err = { code = -32603, message = tostring(r), data = { name = 'internalError' } } end
    else
      err = { code = -32601, message = 'Method not found', data = { name = 'methodNotFound' } }
    end
    if type(result) == 'function' and not err then
      local dok, derr = pcall(result, respond)
      if not dok then respond(nil, { code = -32603, message = tostring(derr), data = { name = 'internalError' } }) end
    else
      respond(result, err)
    end
  elseif msg.method ~= nil then
    if self.opts.on_notification then self.opts.on_notification(msg.method, msg.params) end
  elseif msg.id ~= nil and msg.id ~= vim.NIL then
    local cb = self.pending[msg.id]
    self.pending[msg.id] = nil
    if cb then
      if msg.error ~= nil and msg.error ~= vim.NIL then cb(msg.error, nil)
      else cb(nil, msg.result) end
    end
  end
end

function M:_on_exit(code)
  self.job = nil
  local pending = self.pending
  self.pending = {}
  local tail = self.stderr[#self.stderr]
  for _, cb in pairs(pending) do
    cb({ code = -32603, message = 'auth-sidecar exited with code ' .. tostring(code)
         .. (tail and (': ' .. tail) or ''), data = { name = 'sidecarExited' } }, nil)
  end
  if self.opts.on_exit then self.opts.on_exit(code) end
end

--- Send a request; callback(err, result). Returns the request id, or nil if not running.
function M:request(method, params, callback)
  if not self.job then
    callback({ code = -32603, message = 'auth-sidecar is not running', data = { name = 'sidecarExited' } })
    return nil
  end
  self.next_id = self.next_id + 1
  local id = self.next_id
  self.pending[id] = callback
  local msg = { jsonrpc = '2.0', id = id, method = method }
  if params ~= nil then msg.params = params end
  if not self:_send(msg) then
    self.pending[id] = nil
    callback({ code = -32603, message = 'cannot write to auth-sidecar', data = { name = 'sidecarExited' } })
    return nil
  end
  return id
end

function M:notify(method, params)
  local msg = { jsonrpc = '2.0', method = method }
  if params ~= nil then msg.params = params end
  return self:_send(msg)
end

--- Cancel a request in flight: $/cancelRequest, and its callback gets -32800 now
--- (the server's own -32800 reply is then ignored).
function M:cancel(id)
  local cb = self.pending[id]
  if not cb then return end
  self.pending[id] = nil
  self:notify('$/cancelRequest', { id = id })
  cb({ code = -32800, message = 'Request cancelled', data = { name = 'requestCancelled' } }, nil)
end

function M:is_running() return self.job ~= nil end

--- SIGTERM: the sidecar cancels what is in flight, flushes its cache and exits 0.
function M:stop()
  if self.job then pcall(vim.fn.jobstop, self.job) end
end

return M
