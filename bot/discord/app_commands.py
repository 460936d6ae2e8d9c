"""The slash commands `/panic` and `/error` and the "Explain this panic" message menu.

`TriageBot.setup_hook` adds them to its command tree; each hands its work to the client
(`CommandHost`), which answers through the same path as a pasted panic.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Protocol, runtime_checkable

import discord
from discord import app_commands

from bot.core.analysis import Analysis
from bot.discord import listener as L
from bot.discord.attachments import AttachmentReader, incoming
from bot.discord.listener import AttachmentInfo, IncomingMessage
from bot.discord.views import AnswerHost, PanicModal
from bot.render import texts


@runtime_checkable
class CommandHost(AnswerHost, Protocol):
    """What the commands need of the client they run in (`TriageBot`), besides `AnswerHost`."""

    records: list[tuple[str, str]]  # (id, message) of every record, for the search
    attachments: AttachmentReader

    async def short(self, interaction: discord.Interaction, text: str) -> None: ...

    def command_busy(self, interaction: discord.Interaction) -> str | None: ...

    def lookup(self, query: str) -> tuple[str, str] | None: ...

    def render(
        self, analysis: Analysis, *, author_id: int | None, notes: Collection[str] = ()
    ) -> dict[str, Any]: ...


def _bot(interaction: discord.Interaction) -> CommandHost:
    bot = interaction.client
    assert isinstance(bot, CommandHost)
    return bot


@app_commands.command(name="panic", description="Explain a Rust panic from the catalog.")
@app_commands.describe(
    text="The panic output (leave out for a form with room for long pastes)",
    file="A text file with the panic output",
    share="Show the answer to everyone in the channel",
)
async def panic_command(
    interaction: discord.Interaction,
    text: str | None = None,
    file: discord.Attachment | None = None,
    share: bool = False,
) -> None:
    bot = _bot(interaction)
    if text is None and file is None:
        await interaction.response.send_modal(PanicModal(share=share))
        return
    pasted = text or ""
    notes: list[str] = []
    if file is not None:
        info = AttachmentInfo(file.filename, file.size, file.url, file.content_type)
        msg = IncomingMessage(0, 0, None, interaction.user.id, False, pasted, (info,))
        pasted, notes = await bot.attachments.read_message(msg, [file])
        if not pasted.strip():
            await bot.short(interaction, texts.NOTHING_TO_READ)
            return
    await bot.answer_command(interaction, pasted, ephemeral=not share, notes=notes)


@app_commands.command(name="error", description="Look up a known error in the catalog.")
@app_commands.describe(query="Words from the error message", share="Show the answer to everyone")
async def error_command(interaction: discord.Interaction, query: str, share: bool = False) -> None:
    bot = _bot(interaction)
    found = bot.lookup(query)
    if found is None:
        shown = query[:100].replace("`", "'")
        await bot.short(interaction, texts.ERROR_NOT_FOUND.format(query=shown))
        return
    busy = bot.command_busy(interaction)
    if busy:
        await bot.short(interaction, busy)
        return
    record_id, message = found
    analysis = L.analysis_for_record(record_id, message)
    await interaction.response.send_message(
        ephemeral=not share, **bot.render(analysis, author_id=None)
    )


@error_command.autocomplete("query")
async def _error_autocomplete(
    interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    bot = _bot(interaction)
    found = L.search_records(bot.records, current)
    places = []
    for record_id, message in found:
        record = bot.triage.catalog.get(record_id)
        place = L.record_place(record.file_path, record.line_number) if record else ""
        places.append((record_id, message, place))
    return [app_commands.Choice(name=name, value=value) for name, value in L.choices(places)]


async def _explain(interaction: discord.Interaction, message: discord.Message) -> None:
    bot = _bot(interaction)
    msg = incoming(message)
    text, notes = await bot.attachments.read_message(msg, message.attachments)
    if not text.strip():
        await bot.short(interaction, texts.NO_PANIC_FOUND)
        return
    await bot.answer_command(interaction, text, ephemeral=True, notes=notes)


explain_menu = app_commands.ContextMenu(name=texts.EXPLAIN_MENU, callback=_explain)
