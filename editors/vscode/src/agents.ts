// Pure: the agents (forge.listAgents) as quick-pick items, the status bar naming the agent, and the chat's
// `/agent` command.

/** An agent as forge.listAgents gives it. */
export interface AgentInfo {
  id: string;
  title: string;
  description: string;
  source: string;
  tools: string[] | null;
}

/** The quick-pick items of "Forge: Select Agent": the id, its title (and "current"), what it is for. */
export function agentItems(list: unknown): { label: string; description: string; detail: string; id: string }[] {
  const result = (typeof list === "object" && list !== null ? list : {}) as { agents?: unknown; current?: unknown };
  if (!Array.isArray(result.agents)) {
    return [];
  }
  return (result.agents as AgentInfo[])
    .filter((a) => a && typeof a.id === "string")
    .map((a) => ({
      label: a.id,
      description: [a.title && a.title !== a.id ? a.title : "", a.id === result.current ? "current" : "", a.source !== "builtin" ? a.source : ""]
        .filter(Boolean)
        .join(" · "),
      detail: a.description || "",
      id: a.id,
    }));
}

/** The status bar's text with the agent named when it is not forge: "$(check) Forge (sage): idle". */
export function withAgent(text: string, agent: string | undefined): string {
  if (!agent || agent === "forge") {
    return text;
  }
  return text.replace("Forge:", `Forge (${agent}):`);
}

/** The chat's `/agent ID` (or `/agent` alone): the id asked for, "" for none. */
export function agentArgument(prompt: string): string {
  return prompt.trim().split(/\s+/)[0] ?? "";
}

/** The chat's answer to `/agent` alone: each agent on a line, the current one marked. */
export function agentList(list: unknown): string {
  const items = agentItems(list);
  if (items.length === 0) {
    return "No agents: is the Forge server running?";
  }
  const lines = items.map((i) => `- \`${i.id}\`${i.description ? ` (${i.description})` : ""}${i.detail ? `: ${i.detail}` : ""}`);
  return `Agents (\`@forge /agent ID\` chooses one for this conversation):\n\n${lines.join("\n")}`;
}
