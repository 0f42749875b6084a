"""A results folder: one per evaluation run, `<root>/<UTC date-time>-<short id>/`, so anyone can
audit a score and an interrupted run can be resumed.

    judge_check.json     the judge's verdict on every labelled pair and its agreement (judge_check.py)
    manifest.json        what was run: dataset (path, sha256, item ids), git commit, researcher
                         models, judge (model, server, prompt hash, its agreement check), k, flags,
                         start and end times
    items/NNN-<id>.json  one per item, written as soon as the item is finished: per run the answer,
                         the units and sources, every statement the judge was shown with its
                         passages and verdict, the scores; or the error that stopped the item
    summary.json         written at the end: the means per category and overall, the judge's usage
                         (and after --replay-from, the comparison with its intervals)

Every file is written whole or not at all (a temporary file renamed over it): a run killed at any
moment leaves readable files."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import json
import os
import re
import subprocess
import uuid
from pathlib import Path

from .observed import CitedSource, ModelWords, Observation, Unit

RESULTS_VERSION = 3
PROMPTS_FILE = Path(__file__).resolve().parent.parent / "agent" / "engine" / "prompts.py"


class ResultsError(Exception):
    pass


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def git_commit() -> str:
    """The commit the code ran at (with "+dirty" when files differ from it); "unknown" outside git."""
    root = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


def research_prompts_sha256() -> str:
    """The researcher's instructions (the engine's prompts): a resumed run must use the same ones."""
    return file_sha256(PROMPTS_FILE)[:16]


def _write(path: Path, data: dict) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(data, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    os.replace(temporary, path)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")[:60] or "item"


class ResultsFolder:
    def __init__(self, path: Path):
        self.path = Path(path)

    @classmethod
    def create(cls, root: Path, manifest: dict) -> ResultsFolder:
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
        folder = cls(Path(root) / f"{stamp}-{uuid.uuid4().hex[:6]}")
        (folder.path / "items").mkdir(parents=True)
        folder.write_manifest(manifest)
        return folder

    @classmethod
    def open(cls, path: str | Path) -> ResultsFolder:
        path = Path(path)
        if path.is_file():  # the operator may name a file of the folder
            path = path.parent
        folder = cls(path)
        if not (path / "manifest.json").is_file():
            raise ResultsError(f"{path} is not a results folder of deep_research_eval (no manifest.json)")
        try:
            manifest = folder.manifest
        except ValueError as exc:
            raise ResultsError(f"{path}/manifest.json cannot be read: {exc}") from None
        if not isinstance(manifest, dict) or "dataset" not in manifest or "judge" not in manifest:
            raise ResultsError(f"{path}/manifest.json is not the manifest of a deep_research_eval run")
        return folder

    @property
    def manifest(self) -> dict:
        return json.loads((self.path / "manifest.json").read_text(encoding="utf-8"))

    def write_manifest(self, manifest: dict) -> None:
        _write(self.path / "manifest.json", manifest)

    def update_manifest(self, **changes) -> None:
        self.write_manifest({**self.manifest, **changes})

    def item_file(self, index: int, item_id: str) -> Path:
        return self.path / "items" / f"{index:03d}-{_slug(item_id)}.json"

    def write_item(self, index: int, row: dict) -> Path:
        path = self.item_file(index, row["id"])
        _write(path, {"index": index, **row})
        return path

    def items(self) -> dict[str, dict]:
        """The item files written so far, by item id."""
        rows = {}
        for path in sorted((self.path / "items").glob("*.json")):
            try:
                row = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                continue  # cannot happen with _write; a hand-edited file is treated as not finished
            rows[row["id"]] = row
        return rows

    def finished(self) -> dict[str, dict]:
        """Items that ran to the end (an item stopped by an error is run again on --resume)."""
        return {i: row for i, row in self.items().items() if row.get("status") == "done"}

    def write_file(self, name: str, data: dict) -> None:
        _write(self.path / name, data)

    def write_summary(self, summary: dict) -> None:
        _write(self.path / "summary.json", summary)

    @property
    def summary(self) -> dict | None:
        path = self.path / "summary.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


# --------------------------------------------------------------------------- what a run stored


def observation_record(observation: Observation) -> dict:
    """What the reader of a results folder needs of an answer, and what --replay-from re-judges:
    the answer, and the whole observation the scoring read (units, cited sources with the passage
    read, what the tools returned, the report's limitation codes and claim records)."""
    return {"answer": observation.answer, "observation": dataclasses.asdict(observation)}


def _known(cls, data: dict) -> dict:
    names = {f.name for f in dataclasses.fields(cls)}
    return {key: value for key, value in data.items() if key in names}


def _source(data: dict) -> CitedSource:
    return CitedSource(**_known(CitedSource, data))


def stored_observation(run: dict) -> Observation:
    """A stored run as the scoring reads it, to be judged again (a run stopped by an error has no
    observation: it is rebuilt as a failed one)."""
    data = dict(run.get("observation") or {})
    if not data:
        return Observation(
            task_uuid=run.get("task_uuid", ""),
            status=run.get("status") or "failed",
            error=run.get("error", ""),
        )
    data["units"] = [Unit(**_known(Unit, u)) for u in data.get("units", [])]
    # Folders of every results version load: a field a version did not have takes its default.
    data["model_words"] = [ModelWords(**_known(ModelWords, w)) for w in data.get("model_words") or []]
    data["sources"] = {int(n): _source(s) for n, s in (data.get("sources") or {}).items()}
    if data.get("retrieved") is not None:
        data["retrieved"] = [_source(s) for s in data["retrieved"]]
    return Observation(**_known(Observation, data))
