// The Forge extension: starts forge-lsp, forwards settings, and shows what the server reports.
// All agent logic is in the server.
import * as fs from "node:fs";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
  WorkDoneProgress,
} from "vscode-languageclient/node";
import { editorContext, registerActions, RunArg } from "./actions";
import { agentItems, withAgent } from "./agents";
import { registerChat } from "./chat";
import { CHAT_COMMANDS, PaletteId } from "./commands";
import { answerDiagnostics, DIAGNOSTICS, DiagnosticsRequest, DiagnosticsWatch, FORGE_SOURCE, LspDiagnostic, withDiagnosticsCapability } from "./diagnostics";
import { cancelNotice, conversationItems, ForgeEvent, Notice, statusText, turnNotice } from "./events";
import { mcpServers, McpItem, McpServer, serverActions, serverItems, stateText } from "./mcp";
import { RELOAD_DOCUMENTS, ReloadRequest, ReloadableDocument, reloadDocuments, withReloadCapability } from "./reloads";
import { SAVE_DOCUMENTS, SaveRequest, saveDocuments, withSaveCapability } from "./saves";
import { ForgeSettings, initializationOptions, serverCommand, serverProblem, serverSettings } from "./settings";
import { commandItems, commandPrompt } from "./slash";

let client: LanguageClient | undefined;
// Why the server was not started (its command is not there), told again by each Forge command meanwhile.
let startProblem: string | undefined;
// A forge.cancel is on its way: its answer tells the cancelled turn's end (what the server stopped).
let cancelAsked = false;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
// Every forge/event, for the chat participant (the client takes one handler per notification).
const forgeEvents = new vscode.EventEmitter<ForgeEvent>();
// The status bar: the turn's state (statusText) with the agent named when it is not forge: the running
// turn's (turnStarted says it), else the conversation's (forge.setAgent, forge.status).
let turnStatus = "$(check) Forge: idle";
let conversationAgent: string | undefined;
let turnAgent: string | undefined;

function showStatus(): void {
  status.text = withAgent(turnStatus, turnAgent ?? conversationAgent);
}

function setAgent(agent: unknown): void {
  conversationAgent = typeof agent === "string" ? agent : undefined;
  showStatus();
}

/** The conversation's agent as the server has it (after another conversation was opened). */
async function refreshAgent(): Promise<void> {
  const s = (await forgeCommand("forge.status")) as { agent?: string } | undefined;
  setAgent(s?.agent);
}

function readSettings(): ForgeSettings {
  const c = vscode.workspace.getConfiguration("forge");
  return {
    serverPath: c.get<string>("serverPath"),
    pythonPath: c.get<string>("pythonPath"),
    model: c.get<string | null>("model"),
    maxToolFailurePerTurn: c.get<number | null>("maxToolFailurePerTurn"),
    maxRequestsPerTurn: c.get<number | null>("maxRequestsPerTurn"),
    maxRepeatedCallsPerTurn: c.get<number | null>("maxRepeatedCallsPerTurn"),
    mcpServers: c.get<Record<string, unknown> | null>("mcpServers"),
    verify: verifySetting(c.get<string | null>("verify.diagnostics")),
  };
}

/** forge.verify.diagnostics as the server's [verify] table (unset: nothing sent, the server's config decides). */
function verifySetting(diagnostics: string | null | undefined): { diagnostics: string } | undefined {
  return diagnostics ? { diagnostics } : undefined;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The one error that says what to set, with a button to the setting (not the language client's two: "Launching
 * server using command forge-lsp failed" and "couldn't create connection to server"). */
function tellStartProblem(): void {
  if (startProblem) {
    void vscode.window.showErrorMessage(startProblem, "Open Settings").then((choice) => {
      if (choice) {
        // A machine setting: in a remote window (code-server, SSH, a container) it is the remote's, whose Settings tab
        // takes no search; its settings.json is where the printed line goes.
        if (vscode.env.remoteName) {
          void vscode.commands.executeCommand("workbench.action.openRemoteSettingsFile");
        } else {
          void vscode.commands.executeCommand("workbench.action.openSettings", "forge.serverPath");
        }
      }
    });
  }
}

async function startClient(): Promise<void> {
  const settings = readSettings();
  startProblem = serverProblem(settings, process.env.PATH ?? "", isExecutable);
  if (startProblem) {
    turnStatus = "$(error) Forge: not started";
    showStatus();
    tellStartProblem();
    return;
  }
  turnStatus = "$(check) Forge: idle";
  showStatus();
  const { command, args } = serverCommand(settings);
  const serverOptions: ServerOptions = { command, args, transport: TransportKind.stdio };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }],
    outputChannel: output,
    // In Restricted Mode VS Code says isTrusted false, and the server ignores the workspace's
    // .forge.toml settings that can run code or send data elsewhere (and offers Trust).
    initializationOptions: initializationOptions(settings, vscode.workspace.isTrusted),
    // No synchronize.configurationSection: the languageclient would push the whole "forge" section (keys no
    // setting of the extension declares, such as forge.tools, and client-only ones) and the server takes the
    // newest settings; a change is told with no settings instead, and the server asks (answered below).
    middleware: {
      // A code action's forge.run (Fix, Explain) runs as a palette turn does: progress, Cancel, errors.
      executeCommand: async (command, args, next) =>
        command === "forge.run" && args.length === 1 && typeof args[0] === "object" ? runTurn(args[0] as RunArg) : next(command, args),
      workspace: {
        // The server asks for section "forge"; answer with what its schema knows.
        configuration: async (params, token, next) => {
          const result = await next(params, token);
          if (!Array.isArray(result)) {
            return result;
          }
          return params.items.map((item, i) => (item.section === "forge" ? serverSettings(readSettings()) : result[i]));
        },
      },
    },
  };
  client = new LanguageClient("forge", "Forge", serverOptions, clientOptions);
  const active = client;
  // The agent's edits reach the disk: the server asks to save the documents it edited (src/saves.ts).
  // What the agent's commands change on disk reaches the unmodified editors: the server asks (src/reloads.ts).
  active.registerFeature({
    fillClientCapabilities: (capabilities) => {
      withSaveCapability(capabilities);
      withReloadCapability(capabilities);
      withDiagnosticsCapability(capabilities);
    },
    initialize: () => undefined,
    getState: () => ({ kind: "static" }),
    clear: () => undefined,
  });
  const openDocument = (uri: string) => {
    const wanted = active.protocol2CodeConverter.asUri(uri).toString();
    return vscode.workspace.textDocuments.find((d) => d.uri.toString() === wanted);
  };
  active.onRequest(SAVE_DOCUMENTS, (params: SaveRequest) => saveDocuments(params, openDocument));
  active.onRequest(RELOAD_DOCUMENTS, (params: ReloadRequest) =>
    reloadDocuments(params, {
      find: openDocument,
      disk: async (uri) => {
        try {
          const bytes = await vscode.workspace.fs.readFile(active.protocol2CodeConverter.asUri(uri));
          return new TextDecoder().decode(bytes);
        } catch {
          return undefined;
        }
      },
      changed: (doc: ReloadableDocument, ms: number) =>
        new Promise<void>((resolve) => {
          const timer = setTimeout(done, ms);
          const listener = vscode.workspace.onDidChangeTextDocument((e) => {
            if (e.document === doc) {
              done();
            }
          });
          function done() {
            clearTimeout(timer);
            listener.dispose();
            resolve();
          }
        }),
    }),
  );
  // After each edit of the agent, the server asks for VS Code's own diagnostics of the file (src/diagnostics.ts).
  active.onRequest(DIAGNOSTICS, (params: DiagnosticsRequest) =>
    answerDiagnostics(
      params,
      {
        open: async (uri) => {
          const code = active.protocol2CodeConverter.asUri(uri);
          const key = code.toString();
          const inTab = vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === key));
          const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key) ?? (await vscode.workspace.openTextDocument(code));
          if (!inTab) {
            // Opened as a tab in the background (not shown, focus kept): the language servers see it, and VS Code's
            // TypeScript validates only files in tabs. Pinned, so that it never replaces the user's preview tab.
            await vscode.commands.executeCommand("vscode.open", code, { preview: false, preserveFocus: true, background: true });
          }
          return { key, version: doc.version, languageId: doc.languageId, openedNow: !inTab };
        },
        diagnostics: (key) => vscode.languages.getDiagnostics(vscode.Uri.parse(key)).filter((d) => d.source !== FORGE_SOURCE).map(asLsp),
        now: () => Date.now(),
      },
      diagnosticsWatch,
    ),
  );
  // The server logs one line per event (window/logMessage, into this channel): the extension adds
  // none of its own, so each event is in the output once.
  client.onNotification("forge/event", (event: ForgeEvent) => {
    turnStatus = statusText(turnStatus, event);
    if (event.type === "turnStarted") {
      turnAgent = typeof event.agent === "string" ? event.agent : undefined;
      // Not known yet (nothing asked since the start): the turn's agent is the best guess of the conversation's.
      conversationAgent ??= turnAgent;
    } else if (event.type === "turnFinished") {
      turnAgent = undefined;
    }
    showStatus();
    forgeEvents.fire(event);
    const notice = turnNotice(event);
    const toldByCancel = cancelAsked && event.type === "turnFinished" && event.status === "cancelled";
    if (notice && !toldByCancel) {
      show(notice);
    }
  });
  await client.start();
  // The conversation's agent is learnt from the next turn (turnStarted), Select Agent or Status: asking at
  // start would open the workspace's state (and make .forge/) in every folder VS Code opens.
}

/** A VS Code diagnostic as an LSP one (what forge/diagnostics answers). */
function asLsp(d: vscode.Diagnostic): LspDiagnostic {
  const code = typeof d.code === "object" && d.code !== null ? d.code.value : d.code;
  return {
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
    severity: d.severity + 1, // VS Code counts from Error = 0, LSP from Error = 1
    source: d.source,
    code,
    message: d.message,
  };
}

/** Every document's diagnostics changes, from activation on (forge/diagnostics waits on them). */
const diagnosticsWatch = new DiagnosticsWatch();

function watchDiagnostics(e: vscode.DiagnosticChangeEvent): void {
  for (const uri of e.uris) {
    const key = uri.toString();
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
    const all = vscode.languages.getDiagnostics(uri);
    const line = (d: vscode.Diagnostic) => `${d.range.start.line}:${d.range.start.character}:${d.severity}:${String(d.code)}:${d.message}`;
    const mine = all.filter((d) => d.source === FORGE_SOURCE).map(line).join("\n");
    const others = all.filter((d) => d.source !== FORGE_SOURCE).map(line).join("\n");
    diagnosticsWatch.record(key, doc?.languageId, doc?.version ?? 0, mine, others, Date.now());
  }
}

/** Forge: Select Agent: the agents in a quick pick, the chosen one the conversation's from its next turn. */
async function selectAgent(): Promise<void> {
  const list = await forgeCommand("forge.listAgents");
  const items = agentItems(list);
  if (items.length === 0) {
    return;
  }
  const current = (list as { current?: string }).current;
  const picked = await vscode.window.showQuickPick(items, {
    placeHolder: `Forge agent for this conversation (now ${String(current)})`,
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!picked) {
    return;
  }
  const result = (await forgeCommand("forge.setAgent", { id: picked.id })) as { agent: string } | undefined;
  if (result) {
    setAgent(result.agent);
    void vscode.window.showInformationMessage(`Forge: agent ${result.agent} for this conversation`);
  }
}

async function runAgent(given?: unknown): Promise<void> {
  if (!client) {
    tellStartProblem();
    return;
  }
  // A prompt given by the caller (Run Command); from the palette, asked for.
  const prompt = typeof given === "string" ? given : await vscode.window.showInputBox({ prompt: "What should Forge do?", ignoreFocusOut: true });
  if (!prompt) {
    return;
  }
  const active = client;
  await runTurn({ prompt, ...editorContext((r) => active.code2ProtocolConverter.asRange(r)) });
}

/** A turn (forge.run {prompt, uri?, range?}) with a progress notification that Cancel cancels. */
async function runTurn(arg: RunArg): Promise<unknown> {
  if (!client) {
    tellStartProblem();
    return undefined;
  }
  const active = client;
  // The result is told by the turn's turnFinished event (turnNotice), the reply text by the server's log.
  // A turn the server refuses (no model set, one already running) is told here, or the user sees nothing.
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Forge", cancellable: true },
    async (progress, cancel) => {
      const workDoneToken = `forge-${Date.now()}`;
      const sub = active.onProgress(WorkDoneProgress.type, workDoneToken, (value) => {
        if (value.kind !== "end" && value.message) {
          progress.report({ message: value.message });
        }
      });
      // Cancel sends forge.cancel first, whose answer says what the server stopped, then $/cancelRequest (for a
      // turn that has not started yet). The request gets a token of its own, cancelled once forge.cancel is
      // answered: given the progress's token, the language client sent $/cancelRequest at once, which could reach
      // the server first and end the turn, so that forge.cancel found nothing running and nothing was said.
      const request = new vscode.CancellationTokenSource();
      const cancelling = cancel.onCancellationRequested(() => void cancelTurn(true).finally(() => request.cancel()));
      try {
        return await active.sendRequest(
          ExecuteCommandRequest.type,
          { command: "forge.run", arguments: [arg], workDoneToken },
          request.token,
        );
      } catch (err) {
        if (!cancel.isCancellationRequested) {
          reportError(err);
        }
        return undefined;
      } finally {
        sub.dispose();
        cancelling.dispose();
        request.dispose();
      }
    },
  );
}

/** Forge: Cancel (and Cancel on a turn's progress): forge.cancel, answered once the turn has ended with what the
 * server stopped, which the one notification says. */
async function cancelTurn(fromProgress = false): Promise<void> {
  cancelAsked = true;
  try {
    const result = await forgeCommand("forge.cancel");
    const notice = cancelNotice(result);
    // From a turn's progress, a turn not started yet is cancelled by the request's own $/cancelRequest.
    if (notice && !(fromProgress && (result as { cancelled?: boolean }).cancelled !== true)) {
      show(notice);
    }
  } finally {
    cancelAsked = false;
  }
}

/** Forge: Run Command…: pick one of the server's commands, give its arguments, run it as "/name args". */
async function runCommand(): Promise<void> {
  const items = commandItems(await forgeCommand("forge.listCommands"));
  if (items.length === 0) {
    return;
  }
  const picked = await vscode.window.showQuickPick(items, {
    placeHolder: "Run a Forge command",
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!picked) {
    return;
  }
  // A command whose prompt uses no {{args}} runs at once.
  const args = picked.takesArgs
    ? await vscode.window.showInputBox({
        prompt: `Arguments for /${picked.name} (optional: Enter runs it without)`,
        placeHolder: picked.detail,
        ignoreFocusOut: true,
      })
    : "";
  if (args === undefined) {
    return; // Escape: nothing runs
  }
  await runAgent(commandPrompt(picked.name, args));
}

/** A request the server refused, as one error notification (its message says what to do). */
function reportError(err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  void vscode.window.showErrorMessage(`Forge: ${message}`);
}

async function trustWorkspace(): Promise<void> {
  const result = (await forgeCommand("forge.trust")) as { root: string; trusted: boolean } | undefined;
  if (result) {
    void vscode.window.showInformationMessage(
      result.trusted ? `Forge: trusted ${result.root}; its .forge.toml and .forge/ now apply.` : `Forge: ${result.root} is not trusted.`,
    );
  }
}

async function openConversation(): Promise<void> {
  const items = conversationItems(await forgeCommand("forge.listConversations"));
  if (items.length === 0) {
    void vscode.window.showInformationMessage("Forge: no conversations in this workspace yet.");
    return;
  }
  const picked = await vscode.window.showQuickPick(items, { placeHolder: "Open a Forge conversation (the next run continues it)", matchOnDetail: true });
  if (!picked || !client) {
    return;
  }
  await client.sendRequest(ExecuteCommandRequest.type, { command: "forge.openConversation", arguments: [{ id: picked.id }] });
  void refreshAgent();
  void vscode.window.showInformationMessage(`Forge: conversation "${picked.label}" is open; the next run continues it.`);
}

/** Forge: Undo Last Turn: the server puts back the files the last turn that changed files touched (open
 * editors through an edit, so VS Code's own undo can take it back), or refuses, naming the file the user
 * changed since: that refusal is shown as the error. */
async function undoLastTurn(): Promise<void> {
  const result = (await forgeCommand("forge.undoTurn")) as { turnId: string; files: { path: string; action: string }[] } | undefined;
  if (result) {
    const what = result.files.map((f) => `${f.action} ${f.path}`).join(", ") || "every file was already as before it";
    void vscode.window.showInformationMessage(`Forge: undid the last turn: ${what}.`);
  }
}

/** Forge: MCP Servers: a quick pick of the servers (state, source, tools); picking one offers Restart. */
async function showMcpServers(): Promise<void> {
  const result = await forgeCommand("forge.mcpServers");
  if (result === undefined) {
    return;
  }
  const items = serverItems(result);
  if (items.length === 0) {
    void vscode.window.showInformationMessage(
      "Forge: no MCP servers configured (forge.mcpServers in settings, ~/.config/forge-lsp/mcp.json, or the workspace's .mcp.json).",
    );
    return;
  }
  const picked = await vscode.window.showQuickPick(items, { placeHolder: "Forge MCP servers: pick one to restart it or see its tools", matchOnDetail: true });
  const server = mcpServers(result).find((s) => s.name === picked?.server);
  if (!server) {
    return;
  }
  const action = await vscode.window.showQuickPick<McpItem>(serverActions(server), { placeHolder: `${server.name}: ${stateText(server)}` });
  if (!action?.restart) {
    return;
  }
  // The answer is the server's status once it is ready or failed: {name, state, tools: N, reason?}.
  const now = (await forgeCommand("forge.restartMcpServer", { name: server.name })) as McpServer | undefined;
  if (now && typeof now.state === "string") {
    const message = `Forge: MCP server ${server.name} restarted: ${stateText(now)}`;
    void (now.state === "failed" ? vscode.window.showWarningMessage(message) : vscode.window.showInformationMessage(message));
  }
}

function show(notice: Notice): void {
  const fn =
    notice.level === "error"
      ? vscode.window.showErrorMessage
      : notice.level === "warning"
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  void fn(notice.message);
}

async function forgeCommand(name: string, arg: Record<string, unknown> = {}): Promise<unknown> {
  if (!client) {
    tellStartProblem();
    return undefined;
  }
  try {
    return await client.sendRequest(ExecuteCommandRequest.type, { command: name, arguments: [arg] });
  } catch (err) {
    reportError(err);
    return undefined;
  }
}

/** The handler of each command of the table (src/commands.ts) but the chat's own: a row without one does not compile. */
const handlers: Record<Exclude<PaletteId, (typeof CHAT_COMMANDS)[number]>, Parameters<typeof vscode.commands.registerCommand>[1]> = {
  "forge.runAgent": runAgent,
  "forge.runCommand": runCommand,
  "forge.cancelTurn": cancelTurn,
  "forge.showStatus": async () => {
    const s = (await forgeCommand("forge.status")) as { running: boolean; model: string; limit: number; agent?: string } | undefined;
    if (s) {
      setAgent(s.agent);
      const agent = s.agent && s.agent !== "forge" ? ` · agent ${s.agent}` : "";
      void vscode.window.showInformationMessage(`Forge: ${s.running ? "running" : "idle"} · ${s.model} · limit ${s.limit}${agent}`);
    }
  },
  "forge.showEffectiveConfig": async () => {
    const config = (await forgeCommand("forge.showConfig")) as Record<string, { value: unknown; source: string }> | undefined;
    if (config) {
      output.appendLine("Effective Forge configuration:");
      for (const [key, { value, source }] of Object.entries(config)) {
        output.appendLine(`  ${key} = ${JSON.stringify(value)} (${source})`);
      }
      output.show(true);
    }
  },
  "forge.startNewConversation": async () => {
    if (await forgeCommand("forge.newConversation")) {
      setAgent("forge"); // a new conversation starts with forge
    }
  },
  "forge.restartServer": async () => {
    await client?.stop();
    client = undefined;
    await startClient();
  },
  "forge.trustWorkspace": trustWorkspace,
  "forge.pickConversation": openConversation,
  "forge.undoLastTurn": undoLastTurn,
  "forge.showMcpServers": showMcpServers,
  "forge.selectAgent": selectAgent,
};

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("Forge");
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  status.text = turnStatus;
  status.command = "forge.showStatus";
  status.show();
  registerChat(context, () => client, forgeEvents.event, setAgent);
  registerActions(context, runTurn);
  context.subscriptions.push(
    output,
    status,
    forgeEvents,
    vscode.languages.onDidChangeDiagnostics(watchDiagnostics),
    vscode.workspace.onDidCloseTextDocument((doc) => diagnosticsWatch.forget(doc.uri.toString())),
    ...Object.entries(handlers).map(([id, handler]) => vscode.commands.registerCommand(id, handler)),
    // The user trusted the folder in VS Code (Manage Workspace Trust): the server hears it at once.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void forgeCommand("forge.trust")),
    // A forge.* setting changed: the server asks for the section again (workspace/configuration).
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("forge") && client?.isRunning()) {
        void client.sendNotification("workspace/didChangeConfiguration", { settings: null });
      } else if (!client && (e.affectsConfiguration("forge.serverPath") || e.affectsConfiguration("forge.pythonPath"))) {
        void startClient(); // the setting the error asked for: the server starts now
      }
    }),
  );
  await startClient();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
