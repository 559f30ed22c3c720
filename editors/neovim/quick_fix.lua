-- Drives Neovim's own LSP client against `trellis lsp`, headless: opens a `.graph` file with a
-- typo, waits for its diagnostic, applies the quick fix the server offers, waits for the
-- diagnostics to clear, and writes the file. Exits 0 when all of that happened, 1 (with the
-- reason) when not.
-- Run by editors/check: TRELLIS=<binary> GRAPH=<file> nvim --headless -u NONE -c 'luafile quick_fix.lua'
-- Written for Neovim 0.7 (Debian's), whose API the later versions keep.

local function say(text)
  io.stdout:write(text .. '\n')
end

local function fail(reason)
  io.stderr:write('neovim: ' .. reason .. '\n')
  vim.cmd('cquit 1')
end

local trellis, graph = os.getenv('TRELLIS'), os.getenv('GRAPH')
if not trellis or not graph then
  fail('set TRELLIS (the trellis binary) and GRAPH (a .graph file with a typo)')
end

vim.cmd('edit ' .. vim.fn.fnameescape(graph))
local buffer = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start_client({
  name = 'trellis',
  cmd = { trellis, 'lsp' },
  root_dir = vim.fn.fnamemodify(graph, ':h'),
})
if not client_id then
  fail('the language server did not start')
end
vim.lsp.buf_attach_client(buffer, client_id)

-- The typo's diagnostic, with the language's code.
local found = vim.wait(15000, function()
  return #vim.diagnostic.get(buffer) > 0
end, 50)
if not found then
  fail('no diagnostic within 15 s')
end
local diagnostic = vim.diagnostic.get(buffer)[1]
-- As the server sent it (range in UTF-16 units, code), for the code action request.
local lsp_diagnostic = vim.lsp.diagnostic.get_line_diagnostics(buffer, diagnostic.lnum)[1] or {}
local code = lsp_diagnostic.code or diagnostic.code
if code ~= 'E0202' then
  fail('expected E0202, got ' .. tostring(code) .. ': ' .. diagnostic.message)
end
say('diagnostic: ' .. code .. ' ' .. diagnostic.message:gsub('\n', ' | '))

-- The quick fix the server offers for it, applied as Neovim applies any workspace edit.
local client = vim.lsp.get_client_by_id(client_id)
local params = {
  textDocument = { uri = vim.uri_from_bufnr(buffer) },
  range = lsp_diagnostic.range,
  context = { diagnostics = { lsp_diagnostic } },
}
local response = client.request_sync('textDocument/codeAction', params, 10000, buffer)
if response and response.err then fail('codeAction: ' .. vim.inspect(response.err)) end
local actions = response and response.result or {}
local fix = actions[1]
if not fix or not fix.edit then
  fail('no quick fix offered')
end
say('quick fix: ' .. fix.title)
vim.lsp.util.apply_workspace_edit(fix.edit, client.offset_encoding or 'utf-16')

-- The edit goes to the server as a change; its diagnostics clear.
local cleared = vim.wait(15000, function()
  return #vim.diagnostic.get(buffer) == 0
end, 50)
if not cleared then
  fail('the diagnostics did not clear: ' .. vim.inspect(vim.diagnostic.get(buffer)))
end
say('fixed line: ' .. vim.fn.getline(lsp_diagnostic.range.start.line + 1))
vim.cmd('silent write')
say('neovim: the quick fix cleared the diagnostic')
client.stop()
vim.cmd('qall!')
