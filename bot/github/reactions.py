"""`triage-bot stats --refresh`: the 👍/👎 reactions on the bot's GitHub comments, read into
the store as votes (the stats then count them)."""

from __future__ import annotations

from bot.config.settings import Settings
from bot.github.adapter import GitHubAdapter
from bot.github.auth import GitHubClients
from bot.github.triage_command.run import CommandHandler
from bot.store.interface import TriageStore


def refresh_reactions(settings: Settings, store: TriageStore, repo: str | None = None) -> int:
    """Read the reactions on every bot comment the store knows; returns the votes stored."""
    settings.require_github()
    clients = GitHubClients(settings)
    try:
        handler = CommandHandler(GitHubAdapter(clients), store, catalog=None)
        total = 0
        for state in store.list_issue_states():
            if repo and state.repo != repo.lower():
                continue
            if state.comment_id is None or not state.record_ids or state.verdict != "match":
                continue
            total += handler.sync_reactions(
                state.repo, state.number, None, state.comment_id, state.record_ids
            )
        return total
    finally:
        clients.close()
