// Forge commands (/review, /test, /explain and the user's and workspace's own): pure helpers, no vscode
// import, so `npm test` covers them. The server expands "/name args" (forge.run); these only build it.

/** One entry of forge.listCommands. */
export interface ForgeCommand {
  name: string;
  description: string;
  source: string;
  takesArgs?: boolean;
  agent?: string;
}

/** A command's source as people read it: "built-in", "user", "workspace". */
function sourceText(source: string): string {
  return source === "builtin" ? "built-in" : source;
}

/** Quick pick items for forge.listCommands' answer: "/name", where it comes from (and its agent), what it does. */
export function commandItems(
  answer: unknown,
): { label: string; description: string; detail: string; name: string; takesArgs: boolean }[] {
  const list = (answer as { commands?: unknown } | undefined)?.commands;
  if (!Array.isArray(list)) {
    return [];
  }
  return (list as ForgeCommand[])
    .filter((c) => c && typeof c.name === "string")
    .map((c) => ({
      label: `/${c.name}`,
      description: c.agent ? `${sourceText(c.source)} · agent ${c.agent}` : sourceText(c.source),
      detail: c.description ?? "",
      name: c.name,
      takesArgs: c.takesArgs !== false, // an older server does not say: ask
    }));
}

/** The prompt that runs a command: "/name" and its arguments, if any. */
export function commandPrompt(name: string, args: string | undefined): string {
  const rest = (args ?? "").trim();
  return rest ? `/${name} ${rest}` : `/${name}`;
}

/**
 * The prompt of an @forge chat request: a slash command VS Code recognised (request.command, one the
 * extension contributes) goes back in front of its text for the server to expand; "/mine args" typed for
 * a command VS Code does not know is in the text already.
 */
export function chatPrompt(command: string | undefined, prompt: string): string {
  return command ? commandPrompt(command, prompt) : prompt;
}
