-- auth_sidecar.nvim commands. Configure with require('auth_sidecar').setup({...}).
if vim.g.loaded_auth_sidecar then return end
vim.g.loaded_auth_sidecar = true

local function plugin() return require('auth_sidecar') end
local cmd = vim.api.nvim_create_user_command

cmd('AuthSidecarSignIn', function(o)
  local flow = o.fargs[1]
  if flow ~= nil and flow ~= 'browser' and flow ~= 'deviceCode' and flow ~= 'paste' then
    vim.notify('auth-sidecar: flow must be browser, deviceCode or paste', vim.log.levels.ERROR)
    return
  end
  local scopes = { unpack(o.fargs, 2) }
  plugin().sign_in({ flow = flow, scopes = #scopes > 0 and scopes or nil })
end, { nargs = '*', complete = function() return { 'deviceCode', 'browser', 'paste' } end,
       desc = 'Sign in (device code, browser or paste-back) [flow [scopes...]]' })

cmd('AuthSidecarCancel', function() plugin().cancel() end, { desc = 'Cancel the sign-in in progress' })

-- :AuthSidecarToken[!] [x] [scopes...]: a one-character first argument is the register
-- (scopes never are one character); ! forces a refresh.
cmd('AuthSidecarToken', function(o)
  local args, reg = o.fargs, nil
  if args[1] and #args[1] == 1 then reg = args[1]; args = { unpack(args, 2) } end
  plugin().token({ scopes = args, register = reg, forceRefresh = o.bang })
end, { nargs = '*', bang = true,
       desc = 'Get an access token silently into a register: [x] [scopes...]; ! forces a refresh' })

cmd('AuthSidecarAccount', function() plugin().account() end, { desc = 'Show the current account' })

cmd('AuthSidecarGraphMe', function() plugin().graph_me() end, { desc = 'GET Graph /me into a scratch buffer' })

cmd('AuthSidecarGraph', function(o)
  local method, path = 'GET', o.fargs[1]
  if #o.fargs >= 2 then method, path = o.fargs[1]:upper(), o.fargs[2] end
  plugin().graph({ method = method, path = path })
end, { nargs = '+', desc = 'Call Graph: [METHOD] /path' })

cmd('AuthSidecarSignOut', function() plugin().sign_out() end, { desc = 'Sign out the current account' })

cmd('AuthSidecarStop', function() plugin().stop() end, { desc = 'Stop the auth-sidecar process' })

vim.api.nvim_create_autocmd('VimLeavePre', {
  group = vim.api.nvim_create_augroup('auth_sidecar', { clear = true }),
  callback = function() if package.loaded['auth_sidecar'] then plugin().stop() end end,
})
