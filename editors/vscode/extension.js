// Starts `trellis lsp` for .graph files: everything the editor shows (diagnostics, quick fixes,
// hover, definition, references, rename, completion, outline, formatting) comes from it.
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration('trellis').get('server.path') || 'trellis';
  client = new LanguageClient(
    'trellis',
    'Trellis .graph',
    { command, args: ['lsp'] },
    { documentSelector: [{ language: 'trellis-graph' }] },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
