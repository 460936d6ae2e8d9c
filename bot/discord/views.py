"""The buttons under an answer and the form `/panic` opens: discord.ui items.

Their custom ids carry what a press needs (vote and record, the author, the records to show
more of), so they work across restarts (`add_dynamic_items`). What a press does is the
client's (`AnswerHost`): the items only hand it on.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Collection, Sequence
from typing import Any, Protocol, runtime_checkable

import discord

from bot.app import Triage
from bot.discord import listener as L
from bot.render import texts

NONE = discord.AllowedMentions.none()  # every message the bot sends mentions nobody


@runtime_checkable
class AnswerHost(Protocol):
    """What the buttons and the form need of the client they run in (`TriageBot`)."""

    triage: Triage

    async def guarded(self, interaction: discord.Interaction, work: Awaitable[object]) -> None: ...

    async def report_error(
        self, interaction: discord.Interaction, error: BaseException
    ) -> None: ...

    async def on_feedback(
        self, interaction: discord.Interaction, vote: str, record_id: str
    ) -> None: ...

    async def on_dismiss(self, interaction: discord.Interaction, author_id: int) -> None: ...

    async def more_payload(
        self, message: discord.Message | None, record_ids: list[str]
    ) -> dict[str, Any]: ...

    async def answer_command(
        self,
        interaction: discord.Interaction,
        text: str,
        *,
        ephemeral: bool,
        notes: Collection[str] = (),
    ) -> None: ...


def host(interaction: discord.Interaction) -> AnswerHost:
    bot = interaction.client
    assert isinstance(bot, AnswerHost)
    return bot


class FeedbackButton(
    discord.ui.DynamicItem[discord.ui.Button],
    template=r"triage:fb:(?P<vote>up|down):(?P<record>[A-Za-z0-9_.-]+)",
):
    """ "Helpful" / "Wrong match" under an answer; the custom id carries the vote and record."""

    def __init__(self, vote: str, record_id: str, label_suffix: str = "") -> None:
        helpful = vote == "up"
        super().__init__(
            discord.ui.Button(
                label=(texts.HELPFUL if helpful else texts.WRONG_MATCH) + label_suffix,
                style=discord.ButtonStyle.success if helpful else discord.ButtonStyle.secondary,
                custom_id=L.feedback_id("up" if helpful else "down", record_id),
            )
        )
        self.vote = vote
        self.record_id = record_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> FeedbackButton:
        return cls(match["vote"], match["record"])

    async def callback(self, interaction: discord.Interaction) -> None:
        bot = host(interaction)
        await bot.guarded(interaction, bot.on_feedback(interaction, self.vote, self.record_id))


class ShowMoreButton(
    discord.ui.DynamicItem[discord.ui.Button], template=r"triage:more:(?P<ids>[A-Za-z0-9_.,-]+)"
):
    """Show more: the rest of the answer, ephemeral, for whoever presses it (built in
    bot/render/discord.py from the record ids the custom id carries)."""

    def __init__(self, custom_id: str) -> None:
        super().__init__(
            discord.ui.Button(
                label=texts.MORE_DISCORD, style=discord.ButtonStyle.primary, custom_id=custom_id
            )
        )
        self.record_ids = custom_id.rsplit(":", 1)[-1].split(",")

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ShowMoreButton:
        return cls(f"triage:more:{match['ids']}")

    async def callback(self, interaction: discord.Interaction) -> None:
        bot = host(interaction)
        more = await bot.more_payload(interaction.message, list(self.record_ids))
        embeds = [discord.Embed.from_dict(e) for e in more["embeds"]]
        work = interaction.response.send_message(
            embeds=embeds, ephemeral=True, allowed_mentions=NONE
        )
        await bot.guarded(interaction, work)


class DismissButton(
    discord.ui.DynamicItem[discord.ui.Button], template=r"triage:x:(?P<author>[0-9]+)"
):
    """Lets the author of the answered message remove the answer."""

    def __init__(self, author_id: int) -> None:
        super().__init__(
            discord.ui.Button(
                label=texts.DISMISS,
                style=discord.ButtonStyle.secondary,
                custom_id=L.dismiss_id(author_id),
            )
        )
        self.author_id = author_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> DismissButton:
        return cls(int(match["author"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        bot = host(interaction)
        await bot.guarded(interaction, bot.on_dismiss(interaction, self.author_id))


class PanicModal(discord.ui.Modal):
    """The form `/panic` opens when no text is given: room for a long paste."""

    def __init__(self, *, share: bool) -> None:
        super().__init__(title=texts.MODAL_TITLE, timeout=600)
        self.share = share
        self.paste: discord.ui.TextInput[PanicModal] = discord.ui.TextInput(
            label=texts.MODAL_LABEL,
            style=discord.TextStyle.paragraph,
            placeholder=texts.MODAL_PLACEHOLDER,
            max_length=4000,
        )
        self.add_item(self.paste)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        bot = host(interaction)
        await bot.answer_command(interaction, self.paste.value, ephemeral=not self.share)

    # Modal's own on_error drops the `item` of the View one it inherits: discord.py's signatures.
    async def on_error(  # type: ignore[override]
        self, interaction: discord.Interaction, error: Exception
    ) -> None:
        bot = host(interaction)
        await bot.report_error(interaction, error)


def answer_view(
    record_ids: Sequence[str], author_id: int | None, show_more: str | None
) -> discord.ui.View:
    """The buttons under an answer: a vote on each record it shows (at most 4), Dismiss for
    the author of the answered message, Show more when the renderer left something out."""
    view = discord.ui.View(timeout=None)
    for number, record_id in enumerate(record_ids[:4], start=1):
        suffix = texts.RECORD_NUMBER.format(number=number) if len(record_ids) > 1 else ""
        row = number - 1
        for vote in ("up", "down"):
            button = FeedbackButton(vote, record_id, suffix)
            button.item.row = row
            view.add_item(button)
    if author_id is not None:
        dismiss = DismissButton(author_id)
        dismiss.item.row = min(len(record_ids), 4)
        view.add_item(dismiss)
    if show_more:
        more = ShowMoreButton(show_more)
        more.item.row = min(len(record_ids), 4)
        view.add_item(more)
    return view
