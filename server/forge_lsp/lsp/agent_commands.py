"""forge.setAgent and forge.listAgents: which agent the workspace's conversation uses."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from forge_lsp.core.errors import UnknownAgent
from forge_lsp.lsp.folders import runtime_for
from forge_lsp.lsp.handlers import object_argument
from forge_lsp.lsp.language_server import ForgeLanguageServer


async def forge_set_agent(ls: ForgeLanguageServer, *args: Any) -> dict[str, Any]:
    """{id, uri?}: the current conversation uses this agent from its next turn; {agent, title}."""
    await ls.wait_configured()
    arg = object_argument(args, "forge.setAgent")
    agent_id = arg.get("id")
    if not isinstance(agent_id, str) or not agent_id.strip():
        raise JsonRpcInvalidParams("forge.setAgent needs {id: string}: an agent id from forge.listAgents")
    runtime = runtime_for(ls, arg.get("uri"))
    try:
        agent = runtime.set_agent(agent_id.strip())
    except UnknownAgent as exc:
        raise JsonRpcInvalidParams(f"forge.setAgent: {exc}") from None
    ls.log(f"{runtime.root}: agent {agent.id} for this conversation")
    return {"agent": agent.id, "title": agent.title or agent.id}


async def forge_list_agents(ls: ForgeLanguageServer, *args: Any) -> dict[str, Any]:
    """{uri?}: {agents: [{id, title, description, source, tools}], current}."""
    await ls.wait_configured()
    arg = object_argument(args, "forge.listAgents")
    return runtime_for(ls, arg.get("uri")).list_agents()
