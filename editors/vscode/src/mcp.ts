// Pure: forge.mcpServers' answer -> what "Forge: MCP Servers" shows. No `vscode` import, so it is unit-tested in node.

/** One tool of a server, as forge.mcpServers gives it. */
export interface McpTool {
  name: string;
  description?: string | null;
}

/** One server, as forge.mcpServers gives it. */
export interface McpServer {
  name: string;
  state: "starting" | "ready" | "failed" | "disabled" | string;
  source?: string | null;
  reason?: string | null;
  /** forge.mcpServers lists them; forge.status and forge.restartMcpServer give their number. */
  tools?: McpTool[] | number | null;
}

/** A quick pick row (the fields of vscode.QuickPickItem it uses) and the server or tool it stands for. */
export interface McpItem {
  label: string;
  description?: string;
  detail?: string;
  server?: string;
  restart?: boolean;
}

/** Where a server is configured, as a person reads it (forge.mcpServers' source). */
const SOURCES: Record<string, string> = {
  user: "~/.config/forge-lsp/mcp.json",
  editor: "settings (forge.mcpServers)",
  workspace: ".mcp.json",
  session: "the ACP session",
};

export function sourceText(source: string | null | undefined): string {
  return source ? (SOURCES[source] ?? source) : "";
}

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, " · ").trim();

/** A server's state as a person reads it: "ready (2 tools)", "failed: reason", "starting", "disabled". */
export function stateText(server: McpServer): string {
  const tools = typeof server.tools === "number" ? server.tools : (server.tools?.length ?? 0);
  if (server.state === "ready") {
    return `ready (${tools} tool${tools === 1 ? "" : "s"})`;
  }
  const reason = server.reason ? oneLine(server.reason) : "";
  return reason ? `${server.state}: ${reason}` : String(server.state);
}

function toolList(server: McpServer): McpTool[] {
  return Array.isArray(server.tools) ? server.tools : [];
}

/** The servers of forge.mcpServers' answer (none for an answer of another shape). */
export function mcpServers(result: unknown): McpServer[] {
  const servers = (result as { servers?: unknown } | undefined)?.servers;
  return Array.isArray(servers) ? (servers.filter((s) => s && typeof s.name === "string") as McpServer[]) : [];
}

/** The first quick pick: one row per server, its state and source, its tools' names below. */
export function serverItems(result: unknown): McpItem[] {
  return mcpServers(result).map((s) => {
    const tools = toolList(s).map((t) => t.name);
    const where = sourceText(s.source);
    const detail = tools.length > 0 ? `${where ? where + " · " : ""}${tools.join(", ")}` : where || undefined;
    return { label: s.name, description: stateText(s), detail, server: s.name };
  });
}

/** The second quick pick, for one server: Restart, then its tools with their descriptions. */
export function serverActions(server: McpServer): McpItem[] {
  const items: McpItem[] = [{ label: `$(debug-restart) Restart ${server.name}`, description: stateText(server), server: server.name, restart: true }];
  for (const tool of toolList(server)) {
    items.push({ label: tool.name, description: tool.description ? oneLine(tool.description) : undefined, server: server.name });
  }
  return items;
}
