-- auth_sidecar.json: pretty-print a value decoded by vim.json.decode (nulls are vim.NIL,
-- empty objects carry vim.empty_dict()'s metatable). Object keys keep no order in Lua,
-- so they are sorted: the output is deterministic.
local M = {}

local empty_dict_mt = getmetatable(vim.empty_dict())

local function is_array(t)
  if getmetatable(t) == empty_dict_mt then return false end
  if next(t) == nil then return true end
  return vim.tbl_islist(t)
end

local function scalar(v)
  if v == vim.NIL or v == nil then return 'null' end
  if type(v) == 'number' and v == math.floor(v) and math.abs(v) < 2^53 then
    return string.format('%d', v)
  end
  return vim.json.encode(v):gsub('\\/', '/')
end

local function encode(v, indent, out_lines, prefix, suffix)
  local pad = string.rep('  ', indent)
  if type(v) ~= 'table' then
    table.insert(out_lines, pad .. prefix .. scalar(v) .. suffix)
    return
  end
  local arr = is_array(v)
  local open, close = arr and '[' or '{', arr and ']' or '}'
  if next(v) == nil then
    table.insert(out_lines, pad .. prefix .. open .. close .. suffix)
    return
  end
  table.insert(out_lines, pad .. prefix .. open)
  local keys = {}
  if arr then
    for i = 1, #v do keys[i] = i end
  else
    for k in pairs(v) do table.insert(keys, k) end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  end
  for i, k in ipairs(keys) do
    local p = arr and '' or (scalar(tostring(k)) .. ': ')
    encode(v[k], indent + 1, out_lines, p, i < #keys and ',' or '')
  end
  table.insert(out_lines, pad .. close .. suffix)
end

--- Lines of pretty JSON (2-space indent, sorted keys).
function M.pretty_lines(v)
  local lines = {}
  encode(v, 0, lines, '', '')
  return lines
end

return M
