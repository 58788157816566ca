"""One workspace's conversations: its state store (opened on first use), the sessions that continue its
conversations, and the agent each conversation uses."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from forge_lsp.core.definitions import Definitions
from forge_lsp.core.errors import TurnInProgress
from forge_lsp.core.session import Session
from forge_lsp.domain.agents import DEFAULT_AGENT, Agent
from forge_lsp.domain.messages import ChatMessage
from forge_lsp.state.dirs import stored_state_file
from forge_lsp.state.store import StateStore
from forge_lsp.state.turn_files import TurnFiles
from forge_lsp.tools.base import DiskFiles, FileStore


class Conversations:
    """The workspace's stored conversations and the sessions of them; the state store they live in."""

    def __init__(self, root: Path, definitions: Definitions, notify: Callable[[str], None]) -> None:
        self.root = root
        self.definitions = definitions
        self.notify = notify
        """Told about state problems the user should see (a state file moved aside)."""
        self._store: StateStore | None = None

    def has_state(self) -> bool:
        """Whether the workspace has state to read: open, or stored (self.store makes .forge/ where there is none)."""
        return self._store is not None or stored_state_file(self.root) is not None

    @property
    def store(self) -> StateStore:
        """The workspace's state, opened on first use (.forge/ is created only when needed).

        Opened with the trust in force then: a state file in .forge/ that this user's forge-lsp did not
        create is used only in a trusted workspace; trust granted later applies from the next start."""
        if self._store is None:
            self._store = StateStore(self.root, notify=self.notify, trusted=self.definitions.trusted)
        return self._store

    def conversation_of(self, session: Session) -> str:
        """The conversation a session's next turn continues; a session of its own makes it the current one."""
        if session.conversation_id is None:
            return self.store.current_conversation()
        self.store.select_conversation(session.conversation_id)
        return session.conversation_id

    def new_session(self, files: FileStore | None = None) -> Session:
        """A session of a new conversation (ACP's session/new)."""
        return Session(self.store.new_conversation(), files or DiskFiles())

    def load_session(self, conversation_id: str, files: FileStore | None = None) -> Session:
        """A session that resumes a stored conversation, its todo list as its last todo_write left it
        (ACP's session/load). KeyError when there is no such conversation."""
        if not self.store.select_conversation(conversation_id):
            raise KeyError(conversation_id)
        session = Session(conversation_id, files or DiskFiles())
        session.restore_todos(self.store.history(conversation_id))
        return session

    def history(self, session: Session) -> list[ChatMessage]:
        """Every stored message of the session's conversation, in order."""
        return self.store.history(self.conversation_of(session))

    def list_conversations(self) -> list[dict[str, Any]]:
        """forge.listConversations: [{id, title, turns, lastStatus, tokens, updated, turnFiles}], the latest
        first; turnFiles: [{turnId, files: [{path, action}], undone}] for each turn that changed files."""
        listed = self.store.conversations()
        touched = TurnFiles(self.store).by_conversation()
        for conversation in listed:
            conversation["turnFiles"] = touched.get(conversation["id"], [])
        return listed

    def open_conversation(self, conversation_id: str) -> dict[str, Any]:
        """Make a stored conversation current: the next turn continues it. KeyError when unknown."""
        if not self.store.open_conversation(conversation_id):
            raise KeyError(conversation_id)
        found = next((c for c in self.store.conversations() if c["id"] == conversation_id), {"title": "", "turns": 0})
        return {"conversationId": conversation_id, "title": found["title"], "turns": found["turns"]}

    def delete_conversation(self, conversation_id: str) -> dict[str, Any]:
        """Delete a stored conversation (messages, turns, compactions). Refused while a turn runs in
        another process; KeyError when unknown."""
        holder = self.store.turn_lock.acquire("(deleting a conversation)")
        if holder is not None:
            raise TurnInProgress(f"a turn is running in this workspace ({holder}); delete after it ends")
        try:
            if not self.store.delete_conversation(conversation_id):
                raise KeyError(conversation_id)
        finally:
            self.store.turn_lock.release()
        return {"deleted": True, "conversationId": conversation_id}

    def agent_of(self, session: Session) -> Agent:
        """The agent a session's conversation uses (forge.setAgent, session/set_mode); forge when none was
        chosen, or when the chosen one is gone (its file removed, the workspace no longer trusted)."""
        # Nothing stored yet, nothing chosen: asking would make .forge/ (a turn refused at once, forge.status).
        stored = session.conversation_id is not None or self.has_state()
        chosen = self.store.conversation_agent(self.conversation_of(session)) if stored else None
        found = self.definitions.agents.agents.get(chosen) if chosen else None
        return found or self.definitions.agent(DEFAULT_AGENT)

    def set_agent(self, agent_id: str, session: Session) -> Agent:
        """forge.setAgent: the session's conversation uses this agent from its next turn (kept with it)."""
        agent = self.definitions.agent(agent_id)
        self.store.set_conversation_agent(self.conversation_of(session), agent.id)
        return agent

    def close(self) -> None:
        """Close the state database (opened again when next needed)."""
        if self._store is not None:
            self._store.close()
            self._store = None
