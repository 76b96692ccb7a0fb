"""The clean-up planner (lakemark.planning.cleanup): properties over a model file system.

A model of runs that took files (some committed, some not), files rewritten between runs and
clean-up passes killed after any number of file operations (a move even between its copy and
its delete), then a pass that runs to the end. Whatever happens, no file version that no
committed run took is ever removed, and the pending work is completed exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lakemark.errors import ConfigError
from lakemark.planning.cleanup import (CleanEntry, Seen, archive_destination,
                                       check_clean_options, decide, parse_retention,
                                       plan_cleanup, relative_to_root)
from lakemark.planning.files import FileEntry

ROOT = "/src"
ARCHIVE = "/arch"
PATHS = [f"{ROOT}/{d}f{i}.json" for d in ("", "a/") for i in range(3)]


@dataclass
class Model:
    """Files by path -> (mtime, size); the archive likewise; a log of every removal."""

    files: dict[str, tuple[int, int]] = field(default_factory=dict)
    archive: dict[str, tuple[int, int]] = field(default_factory=dict)
    removed: list[tuple[str, int, int]] = field(default_factory=list)
    done: set[str] = field(default_factory=set)
    ops: int = 0


class Killed(Exception):
    pass


def _seen(value: tuple[int, int] | None) -> Seen | None:
    return None if value is None else Seen(*value)


def _pass(model: Model, entries: list[CleanEntry], kill_after: int | None,
          now_ms: int | None = None) -> None:
    """One clean-up pass at ``now_ms``, as lakemark.\\_cleanup does it, killed after
    ``kill_after`` steps."""

    def step() -> None:
        model.ops += 1
        if kill_after is not None and model.ops > kill_after:
            raise Killed

    current = [CleanEntry(e.run_id, e.key, e.committed, e.run_id in model.done, e.mode,
                          e.files, e.roots, e.archive_to, e.not_before_ms) for e in entries]
    for task in plan_cleanup(current, now_ms):
        entry = task.entry
        assert now_ms is None or entry.not_before_ms <= now_ms  # never inside its retention
        for f in task.files:
            now = model.files.get(f.path)
            if entry.mode == "delete":
                out = decide(f, _seen(now), "delete")
                if out.action == "delete":
                    step()
                    model.removed.append((f.path, *model.files.pop(f.path)))
                continue
            dest = archive_destination(f.path, entry.roots, ARCHIVE)
            there = model.archive.get(dest)
            out = decide(f, _seen(now), "archive", destination=_seen(there),
                         same_at_destination=there is not None and there == now)
            if out.action == "move":
                step()
                model.archive[dest] = model.files[f.path]  # the copy ...
                step()
                model.removed.append((f.path, *model.files.pop(f.path)))  # ... the delete
            elif out.action == "finish-move":
                step()
                model.removed.append((f.path, *model.files.pop(f.path)))
        step()
        model.done.add(entry.run_id)


runs = st.lists(
    st.tuples(st.booleans(),  # committed
              st.sets(st.sampled_from(PATHS), max_size=4),  # files it took
              st.sets(st.sampled_from(PATHS), max_size=2),  # rewritten after it planned
              st.integers(0, 3)),  # its retention, in runs
    min_size=1, max_size=5)


@settings(max_examples=150, deadline=None)
@given(runs=runs, mode=st.sampled_from(["delete", "archive"]),
       kills=st.lists(st.integers(0, 12), max_size=3))
def test_never_removes_an_uncommitted_version_and_finishes_exactly_once(
        runs: list[tuple[bool, set[str], set[str], int]], mode: str,
        kills: list[int]) -> None:
    model = Model(files={p: (1, 10) for p in PATHS})
    entries: list[CleanEntry] = []
    clock = 1
    for index, (committed, took, rewritten, retention) in enumerate(runs):
        files = tuple(FileEntry(model.files[p][0], p, model.files[p][1])
                      for p in sorted(took) if p in model.files)
        for path in rewritten:  # a writer replaces the file after the run planned it
            clock += 1
            model.files[path] = (clock, 10 + clock)
        entries.append(CleanEntry(f"r{index}", "clean:source", committed, False, mode, files,
                                  (ROOT,), ARCHIVE if mode == "archive" else None,
                                  index + retention))
        for kill in [*kills, None]:  # passes after this run's commit, some dying part way
            model.ops = 0
            try:
                _pass(model, entries, kill, index)
            except Killed:
                pass
    model.ops = 0
    _pass(model, entries, None)  # once every retention has passed

    committed_versions = {(f.path, f.mtime, f.size) for e in entries if e.committed
                          for f in e.files}
    # 1. only versions a committed run took are ever removed, each at most once
    assert set(model.removed) <= committed_versions
    assert len(model.removed) == len(set(model.removed))
    # 2. every committed entry is done; none of a run that did not commit
    assert model.done == {e.run_id for e in entries if e.committed}
    # 3. no committed version is left in the source; an archive holds each one it moved
    left = {(p, *v) for p, v in model.files.items()}
    for path, mtime, size in left & committed_versions:  # only a conflict keeps one
        assert mode == "archive"
        held = model.archive[archive_destination(path, (ROOT,), ARCHIVE)]
        assert held != (mtime, size)
    if mode == "archive":
        for path, mtime, size in model.removed:
            assert model.archive[archive_destination(path, (ROOT,), ARCHIVE)] == (mtime, size)
    # 4. planning again finds nothing to do
    again = [CleanEntry(e.run_id, e.key, e.committed, e.run_id in model.done, e.mode, e.files,
                        e.roots, e.archive_to, e.not_before_ms) for e in entries]
    assert plan_cleanup(again) == []


def test_a_file_two_pending_entries_name_goes_to_the_oldest() -> None:
    f = FileEntry(5, "/src/x", 3)
    older = CleanEntry("r1", "clean:s", True, False, "delete", (f,))
    newer = CleanEntry("r2", "clean:s", True, False, "delete", (f, FileEntry(6, "/src/y", 1)))
    failed = CleanEntry("r3", "clean:s", False, False, "delete", (FileEntry(7, "/src/z", 1),))
    tasks = plan_cleanup([older, newer, failed])
    assert [t.entry.run_id for t in tasks] == ["r1", "r2"]
    assert tasks[1].files == (FileEntry(6, "/src/y", 1),) and tasks[1].duplicates == (f,)


def test_decide_keeps_changed_files_and_conflicts() -> None:
    taken = FileEntry(100, "/src/a", 7)
    assert decide(taken, Seen(100, 7), "delete").action == "delete"
    assert decide(taken, Seen(101, 7), "delete").counted_as == "changed"
    assert decide(taken, Seen(100, 8), "archive").counted_as == "changed"
    assert decide(taken, None, "delete").counted_as == "gone"
    assert decide(taken, Seen(100, 7), "archive", destination=Seen(1, 7)).counted_as \
        == "conflict"
    assert decide(taken, Seen(100, 7), "archive", destination=Seen(100, 7),
                  same_at_destination=True).action == "finish-move"


def test_paths_relative_to_the_source_root() -> None:
    assert relative_to_root("/src/a/b.json", ["/src"]) == "a/b.json"
    assert relative_to_root("/src/a/b.json", ["/src", "/src/a"]) == "b.json"
    assert relative_to_root("/one/file.json", ["/one/file.json"]) == "file.json"
    assert archive_destination("s3://b/in/d=1/x", ["s3://b/in"], "s3://arch/keep/") \
        == "s3://arch/keep/d=1/x"


@pytest.mark.parametrize(("mode", "archive", "roots", "message"), [
    ("move", None, ["/src"], "must be one of"),
    ("archive", None, ["/src"], "needs archive_to"),
    ("delete", "/arch", ["/src"], "goes with clean_source archive"),
    ("archive", "/src/archive", ["/src"], "overlaps the source /src"),
    ("archive", "/src", ["/src"], "overlaps"),
    ("archive", "/", ["/src"], "overlaps"),
    ("archive", "s3://b/in/old", ["s3://b/in"], "overlaps"),
    ("archive", "s3://b/x", ["s3://b"], "overlaps"),
    ("archive", "s3://b/x", ["/src"], "both be local or both be on S3"),
])
def test_bad_clean_options(mode: str, archive: str | None, roots: list[str],
                           message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check_clean_options(mode, archive, roots)


def test_good_clean_options() -> None:
    check_clean_options("off", None, ["/src"])
    check_clean_options("archive", "/srcx", ["/src"])  # a sibling, not inside
    check_clean_options("archive", "s3://b/inx", ["s3://b/in"])
    check_clean_options("archive", "s3://other/in", ["s3://b/in"])


def test_retention_holds_an_entry_and_its_files_back() -> None:
    f = FileEntry(5, "/src/x", 3)
    waiting = CleanEntry("r1", "clean:s", True, False, "delete", (f,), not_before_ms=100)
    younger = CleanEntry("r2", "clean:s", True, False, "delete", (f,), not_before_ms=50)
    assert [(t.entry.run_id, t.files) for t in plan_cleanup([waiting, younger], 60)] \
        == [("r2", ())]  # the older entry keeps its file until its own time
    assert [t.entry.run_id for t in plan_cleanup([waiting, younger], 100)] == ["r1", "r2"]


@pytest.mark.parametrize(("value", "seconds"), [
    (None, 0), (0, 0), (90, 90), ("90", 90), ("30m", 1800), ("12 hours", 43_200), ("7d", 604_800),
    ("2 weeks", 1_209_600), ("1.5h", 5400)])
def test_parse_retention(value: object, seconds: float) -> None:
    assert parse_retention(value) == seconds  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["-1", -1, "7 parsecs", "soon", "", float("nan")])
def test_parse_retention_refuses(value: object) -> None:
    with pytest.raises(ConfigError, match="clean_source_retention"):
        parse_retention(value)  # type: ignore[arg-type]
