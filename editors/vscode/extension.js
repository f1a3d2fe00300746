// Starts `envdsl lsp` (stdio) for envdsl documents; everything else is the server's.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("envdsl").get("server.command", "envdsl");
  const server = { command, args: ["lsp"] };
  client = new LanguageClient(
    "envdsl",
    "envdsl language server",
    { run: server, debug: server },
    { documentSelector: [{ scheme: "file", language: "envdsl" }] }
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
