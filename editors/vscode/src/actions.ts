// Forge's code actions in VS Code. The server lists and resolves them (textDocument/codeAction,
// codeAction/resolve); VS Code passes every diagnostic of the range (TypeScript's, ESLint's, any
// extension's). Two commands they name run here, in the extension:
// - forge.run (the Fix and Explain actions): the same turn as "Forge: Run Agent", with its progress
//   notification, Cancel and error messages (the languageclient's executeCommand middleware);
// - forge.editSelection (Edit selection…): asks for an instruction in an input box, then forge.run
//   on the selection.
import * as vscode from "vscode";

export const EDIT_SELECTION = "forge.editSelection";

/** forge.run's argument as the server's actions and the palette send it. */
export interface RunArg {
  prompt: string;
  uri?: string;
  range?: unknown;
}

/** The prompt of an Edit selection turn: the user's instruction about the selected lines (which go along). */
export function editSelectionPrompt(instruction: string): string {
  return `Edit the selected code: ${instruction.trim()}`;
}

/** The current editor's file and selection for a turn's context (the server reads the text itself). */
export function editorContext(toRange: (r: vscode.Range) => unknown): { uri?: string; range?: unknown } {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== "file") {
    return {};
  }
  const out: { uri?: string; range?: unknown } = { uri: editor.document.uri.toString() };
  if (!editor.selection.isEmpty) {
    out.range = toRange(editor.selection);
  }
  return out;
}

/** Registers forge.editSelection; runTurn runs forge.run with the extension's progress and errors. */
export function registerActions(context: vscode.ExtensionContext, runTurn: (arg: RunArg) => Promise<unknown>): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(EDIT_SELECTION, async (arg?: { uri?: string; range?: unknown }) => {
      const instruction = await vscode.window.showInputBox({
        prompt: "Forge: edit the selection how?",
        placeHolder: "e.g. handle the empty list, rename x to count",
        ignoreFocusOut: true,
      });
      if (!instruction || !instruction.trim()) {
        return undefined;
      }
      return runTurn({ prompt: editSelectionPrompt(instruction), uri: arg?.uri, range: arg?.range });
    }),
  );
}
