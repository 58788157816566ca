"""edit_review = "confirm" in the core (core/edit_review.py): each change is an EditReviewAsked in the stream that
the frontend answers; the file store only writes what was allowed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from forge_lsp.core.edit_review import ReviewedFiles, answer_review, nobody_reviews
from forge_lsp.core.session import Session
from forge_lsp.domain.events import Event
from forge_lsp.domain.questions import EditReviewAsked, Reviewed
from forge_lsp.tools.base import DiskFiles, ToolFailure


def reviewed(
    root: Path, answers: list[Reviewed], seen: list[EditReviewAsked], mode: str = "confirm", take: bool = True
) -> tuple[ReviewedFiles, Session]:
    """The session's disk files, reviewed in a stream whose frontend answers each edit with the next answer."""
    replies = iter(answers)

    async def review(asked: EditReviewAsked) -> Reviewed:
        return next(replies)

    def emit(event: Event) -> None:
        assert isinstance(event, EditReviewAsked)
        seen.append(event)
        if take:
            answer_review(event, review)

    session = Session("c1", DiskFiles())
    files = ReviewedFiles(DiskFiles(), session, emit, "t1", lambda: mode, root, lambda: 1024, call_id=lambda: "call_1")
    return files, session


async def test_each_edit_is_asked_in_the_stream_with_its_old_and_new_text(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("old\n")
    seen: list[EditReviewAsked] = []
    files, session = reviewed(tmp_path, [Reviewed("allow"), Reviewed("deny"), Reviewed("allow")], seen)
    await files.write_text(tmp_path / "app.py", "new\n", "patch")
    assert (tmp_path / "app.py").read_text() == "new\n"
    with pytest.raises(ToolFailure, match="the user rejected the edit to app.py"):
        await files.write_text(tmp_path / "app.py", "newer\n", "write")
    assert (tmp_path / "app.py").read_text() == "new\n"
    await files.delete(tmp_path / "app.py", "remove")
    assert not (tmp_path / "app.py").exists()
    assert [(e.turn_id, e.rel, e.old, e.new, e.tool, e.call_id) for e in seen] == [
        ("t1", "app.py", "old\n", "new\n", "patch", "call_1"),
        ("t1", "app.py", "new\n", "newer\n", "write", "call_1"),
        ("t1", "app.py", "new\n", None, "remove", "call_1"),
    ]
    assert seen[2].to_dict() == {
        "type": "editReviewAsked",
        "turnId": "t1",
        "path": "app.py",
        "tool": "remove",
        "callId": "call_1",
        "removes": True,
    }
    assert session.allowed == set()


async def test_allow_for_this_conversation_lets_later_edits_land_unasked(tmp_path: Path) -> None:
    seen: list[EditReviewAsked] = []
    files, session = reviewed(tmp_path, [Reviewed("always")], seen)
    await files.write_text(tmp_path / "a.txt", "1\n", "write")
    await files.write_text(tmp_path / "b.txt", "2\n", "write")
    assert [e.rel for e in seen] == ["a.txt"] and seen[0].old is None  # a new file: nothing to show before
    assert (tmp_path / "b.txt").read_text() == "2\n"
    session.reset()  # another conversation: asked again (and with no answer left, the test's frontend fails)
    with pytest.raises(ToolFailure, match="the user rejected"):
        await files.write_text(tmp_path / "c.txt", "3\n", "write")
    assert not (tmp_path / "c.txt").exists()


async def test_a_review_that_lands_the_edit_itself_is_not_written_again(tmp_path: Path) -> None:
    seen: list[EditReviewAsked] = []
    files, _ = reviewed(tmp_path, [Reviewed("applied", note="kept in the buffer"), Reviewed("applied")], seen)
    assert await files.write_text(tmp_path / "app.py", "new\n", "write") == "kept in the buffer"
    assert not (tmp_path / "app.py").exists()  # the frontend's review made it (the editor's applyEdit), not the store
    (tmp_path / "gone.py").write_text("x")
    await files.delete(tmp_path / "gone.py", "remove")
    assert (tmp_path / "gone.py").exists()


async def test_nobody_to_review_and_a_failed_review_change_nothing(tmp_path: Path) -> None:
    seen: list[EditReviewAsked] = []
    files, _ = reviewed(tmp_path, [], seen, take=False)
    with pytest.raises(ToolFailure, match='edit_review is "confirm" and nobody can review the edit to app.py here'):
        await files.write_text(tmp_path / "app.py", "new\n", "write")
    assert not (tmp_path / "app.py").exists() and len(seen) == 1

    failing, _ = reviewed(tmp_path, [Reviewed("failed", failure=ToolFailure("the editor cannot show it", "app.py"))], [])
    with pytest.raises(ToolFailure, match="the editor cannot show it"):
        await failing.write_text(tmp_path / "app.py", "new\n", "write")

    async def broken(_asked: EditReviewAsked) -> Reviewed:
        raise ConnectionError("client went away")

    def emit(event: Event) -> None:
        assert isinstance(event, EditReviewAsked)
        answer_review(event, broken)

    session = Session("c1", DiskFiles())
    files = ReviewedFiles(DiskFiles(), session, emit, "t1", lambda: "confirm", tmp_path, lambda: 1024)
    with pytest.raises(ToolFailure, match="the user rejected the edit to app.py"):  # a broken client means no
        await files.write_text(tmp_path / "app.py", "new\n", "write")

    def no_terminal(event: Event) -> None:
        assert isinstance(event, EditReviewAsked)
        nobody_reviews(event, "nobody can review the edit to app.py here (no terminal)")

    files = ReviewedFiles(DiskFiles(), session, no_terminal, "t1", lambda: "confirm", tmp_path, lambda: 1024)
    with pytest.raises(ToolFailure, match=r"\(no terminal\)"):
        await files.write_text(tmp_path / "app.py", "new\n", "write")
    assert not (tmp_path / "app.py").exists()


async def test_auto_asks_nothing(tmp_path: Path) -> None:
    seen: list[EditReviewAsked] = []
    files, _ = reviewed(tmp_path, [], seen, mode="auto")
    await files.write_text(tmp_path / "app.py", "new\n", "write")
    assert (tmp_path / "app.py").read_text() == "new\n" and seen == []


async def test_a_review_withdrawn_by_a_cancelled_turn_stops_the_frontends_review(tmp_path: Path) -> None:
    waiting = asyncio.Event()
    stopped: list[bool] = []

    async def slow(_asked: EditReviewAsked) -> Reviewed:
        waiting.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            stopped.append(True)
            raise
        return Reviewed("allow")

    def emit(event: Event) -> None:
        assert isinstance(event, EditReviewAsked)
        answer_review(event, slow)

    files = ReviewedFiles(DiskFiles(), Session("c1", DiskFiles()), emit, "t1", lambda: "confirm", tmp_path, lambda: 1024)
    write = asyncio.ensure_future(files.write_text(tmp_path / "app.py", "new\n", "write"))
    await asyncio.wait_for(waiting.wait(), 5)
    write.cancel()
    with pytest.raises(asyncio.CancelledError):
        await write
    await asyncio.sleep(0)
    assert stopped == [True] and not (tmp_path / "app.py").exists()
