// @forge in the Chat view, and "Forge" as a model in the chat's model picker. Both run a forge.run turn
// on the server and show its forge/event stream; the agent's own model (forge.model) answers.
//
// Why a model as well as the participant: VS Code's extension host refuses a chat request before any
// participant runs ("Language model unavailable") unless the request names a model the user picked or
// a Copilot default model exists. An open-source build (code-server) has no Copilot, so the extension
// registers a language model provider; picking "Forge" in the model picker is what lets @forge run.
import * as path from "node:path";
import * as vscode from "vscode";
import { ExecuteCommandRequest, LanguageClient } from "vscode-languageclient/node";
import { editorContext } from "./actions";
import { agentArgument, agentList } from "./agents";
import { chatParts, ForgeEvent } from "./events";
import { chatPrompt } from "./slash";

/** The participant's id (package.json contributes.chatParticipants) and the model vendor. */
export const PARTICIPANT_ID = "forge-lsp.forge";
export const MODEL_VENDOR = "forge-lsp";
/** The prompt of the turn that Continue starts (the server's own Continue uses the same). */
export const CONTINUE_PROMPT = "Continue.";

interface TurnResult {
  turnId: string;
  status: string;
  text?: string;
}

// The parts of vscode.lm that 1.104 added (engines.vscode stays lower: the provider is registered only
// where the running VS Code has it).
interface ModelInfo {
  id: string;
  name: string;
  family: string;
  version: string;
  maxInputTokens: number;
  maxOutputTokens: number;
  tooltip?: string;
  detail?: string;
  capabilities: Record<string, unknown>;
  isUserSelectable?: boolean;
}
interface ChatProvider {
  provideLanguageModelChatInformation(options: unknown, token: vscode.CancellationToken): ModelInfo[];
  provideLanguageModelChatResponse(
    model: ModelInfo,
    messages: readonly { role: number; content: readonly unknown[] | string }[],
    options: unknown,
    progress: vscode.Progress<unknown>,
    token: vscode.CancellationToken,
  ): Promise<void>;
  provideTokenCount(model: ModelInfo, text: unknown, token: vscode.CancellationToken): Promise<number>;
}
type LmWithProviders = {
  registerLanguageModelChatProvider?: (vendor: string, provider: ChatProvider) => vscode.Disposable;
};
type TextPartCtor = new (value: string) => unknown;

/**
 * Runs one turn and hands each of its events to `onEvent`. Events before this turn's turnStarted, and
 * those of other turns, are not this turn's (one turn runs at a time per workspace).
 */
export async function runTurn(
  client: LanguageClient,
  events: vscode.Event<ForgeEvent>,
  prompt: string,
  onEvent: (e: ForgeEvent) => void,
  token: vscode.CancellationToken,
): Promise<TurnResult> {
  let turnId: string | undefined;
  const sub = events((e) => {
    if (turnId === undefined && e.type === "turnStarted") {
      turnId = e.turnId;
    }
    if (turnId !== undefined && e.turnId === turnId) {
      onEvent(e);
    }
  });
  try {
    // Cancelling the chat request sends $/cancelRequest, which cancels the turn on the server.
    // The file the user is in and its selection go along (the server adds the unsaved buffers).
    const arg = { prompt, ...editorContext((r) => client.code2ProtocolConverter.asRange(r)) };
    return (await client.sendRequest(ExecuteCommandRequest.type, { command: "forge.run", arguments: [arg] }, token)) as TurnResult;
  } finally {
    sub.dispose();
  }
}

function fileUri(p: string): vscode.Uri {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
  return vscode.Uri.file(path.isAbsolute(p) ? p : path.join(root, p));
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** `@forge /agent ID`: that agent for the conversation from its next turn; `/agent` alone lists them. */
async function chooseAgent(
  c: LanguageClient,
  prompt: string,
  stream: vscode.ChatResponseStream,
  onAgent: (agent: string) => void,
): Promise<vscode.ChatResult> {
  const id = agentArgument(prompt);
  try {
    if (!id) {
      stream.markdown(agentList(await c.sendRequest(ExecuteCommandRequest.type, { command: "forge.listAgents", arguments: [{}] })));
      return {};
    }
    const result = (await c.sendRequest(ExecuteCommandRequest.type, { command: "forge.setAgent", arguments: [{ id }] })) as {
      agent: string;
      title: string;
    };
    onAgent(result.agent);
    stream.markdown(`Agent **${result.agent}** (${result.title}) for this conversation, from the next prompt.`);
    return { metadata: { agent: result.agent } };
  } catch (err) {
    return { errorDetails: { message: `Forge: ${messageOf(err)}` } };
  }
}

/** Registers @forge, its Continue command and (where VS Code has the API) the Forge model. */
export function registerChat(
  context: vscode.ExtensionContext,
  client: () => LanguageClient | undefined,
  events: vscode.Event<ForgeEvent>,
  onAgent: (agent: string) => void = () => undefined,
): void {
  const handler: vscode.ChatRequestHandler = async (request, _chat, stream, token) => {
    const c = client();
    if (!c) {
      stream.markdown("The Forge server is not running: **Forge: Restart Server**, and see the *Forge* output.");
      return {};
    }
    if (request.command === "agent") {
      return chooseAgent(c, request.prompt, stream, onAgent);
    }
    // /review, /test, /explain (contributed) go to the server as "/name text"; it expands them, and any other
    // "/name args" typed in the text (the user's and the workspace's own commands).
    const prompt = request.command === "continue" ? CONTINUE_PROMPT : chatPrompt(request.command, request.prompt);
    if (!prompt.trim()) {
      stream.markdown("Tell @forge what to do, e.g. `@forge fix the failing test`.");
      return {};
    }
    const referenced = new Set<string>();
    try {
      const result = await runTurn(
        c,
        events,
        prompt,
        (e) => {
          for (const part of chatParts(e)) {
            if (part.kind === "markdown") {
              stream.markdown(part.text);
            } else if (part.kind === "progress") {
              stream.progress(part.text);
            } else if (part.kind === "reference") {
              if (!referenced.has(part.path)) {
                referenced.add(part.path);
                stream.reference(fileUri(part.path));
              }
            } else {
              stream.markdown(`\n\n**Interrupted:** ${part.message}.`);
            }
          }
        },
        token,
      );
      if (result.status === "interrupted") {
        stream.button({ command: "forge.chatContinue", title: "Continue", tooltip: "A new turn with a fresh failure count" });
      } else if (result.status === "cancelled") {
        stream.markdown("\n\n*Cancelled.*");
      } else if (result.status === "failed") {
        stream.markdown("\n\n**The turn failed**: see the *Forge* output.");
      }
      return { metadata: { turnId: result.turnId, status: result.status } };
    } catch (err) {
      if (token.isCancellationRequested) {
        return {};
      }
      return { errorDetails: { message: `Forge: ${messageOf(err)}` } };
    }
  };
  const participant = vscode.chat.createChatParticipant(PARTICIPANT_ID, handler);
  participant.iconPath = vscode.Uri.joinPath(context.extensionUri, "icon.png");
  context.subscriptions.push(
    participant,
    // The interrupt's Continue button: the next request to @forge, in the same chat.
    vscode.commands.registerCommand("forge.chatContinue", () =>
      vscode.commands.executeCommand("workbench.action.chat.open", { query: "@forge /continue" }),
    ),
  );

  const lm = vscode.lm as unknown as LmWithProviders;
  const TextPart = (vscode as unknown as { LanguageModelTextPart?: TextPartCtor }).LanguageModelTextPart;
  if (typeof lm.registerLanguageModelChatProvider !== "function" || !TextPart) {
    return;
  }
  const model: ModelInfo = {
    id: "forge",
    name: "Forge",
    family: "forge-lsp",
    version: "1",
    tooltip: "The Forge agent (forge-lsp): its model is forge.model",
    detail: "forge-lsp",
    maxInputTokens: 128_000,
    maxOutputTokens: 16_000,
    // Agent mode (the Chat view's default) lists only models that call tools; Forge calls its own.
    capabilities: { toolCalling: true },
    isUserSelectable: true,
  };
  const textOf = (content: readonly unknown[] | string): string =>
    typeof content === "string"
      ? content
      : content.map((p) => (p && typeof (p as { value?: unknown }).value === "string" ? (p as { value: string }).value : "")).join("");
  context.subscriptions.push(
    lm.registerLanguageModelChatProvider(MODEL_VENDOR, {
      provideLanguageModelChatInformation: () => [model],
      // Asked directly (without @forge), the model runs a Forge turn on the last user message.
      async provideLanguageModelChatResponse(_model, messages, _options, progress, token) {
        const c = client();
        if (!c) {
          throw new Error("the Forge server is not running");
        }
        const user = [...messages].reverse().find((m) => m.role === vscode.LanguageModelChatMessageRole.User);
        const prompt = user ? textOf(user.content) : "";
        await runTurn(
          c,
          events,
          prompt,
          (e) => {
            if (e.type === "assistantText" && typeof e.text === "string") {
              progress.report(new TextPart(e.text));
            }
          },
          token,
        );
      },
      provideTokenCount: async (_model, text) => Math.ceil((typeof text === "string" ? text : JSON.stringify(text)).length / 4),
    }),
  );
  // The workbench asks a vendor for its models only when someone selects from it: until then the model
  // picker has none but Copilot's sign-in (and a chat request fails "Language model unavailable").
  void Promise.resolve(vscode.lm.selectChatModels({ vendor: MODEL_VENDOR })).catch(() => undefined);
}
