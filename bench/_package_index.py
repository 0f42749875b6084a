"""Find a source distribution on the package indexes pip is configured with, not on a host named
in code: a machine behind a mirror (or with PyPI reached only through one) fetches the same file
pip would.

The indexes are read from pip's own configuration (`pip config list`, which covers pip.conf at
every level and the PIP_* environment variables, later lines overriding earlier ones), else
PyPI. Each index is read through the simple API (PEP 503 HTML or PEP 691 JSON); a link is
resolved against the page it is on, since mirrors often list relative ones ("../../packages/…"),
and its `#sha256=` fragment is checked after the download. `file://` indexes (a directory with an
index.html per project) are read too.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import urllib.parse
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

DEFAULT_INDEX = "https://pypi.org/simple/"
_JSON = "application/vnd.pypi.simple.v1+json"
# The sections pip reads for `pip download` / `pip install`, in its own order (later wins).
_SECTIONS = ("global", "download", "install", ":env:")


@dataclass(frozen=True)
class Distribution:
    filename: str
    url: str
    sha256: str | None


def pip_config(python: str = sys.executable) -> dict[str, str]:
    """`pip config list` as {key: value}, the later (more specific) line winning."""
    try:
        listed = subprocess.run(
            [python, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=60
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    config: dict[str, str] = {}
    for line in listed.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        section, _, name = key.rpartition(".")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        config[f"{section}.{name}"] = value
    return config


def configured_indexes(config: dict[str, str] | None = None) -> list[str]:
    """The index URL, then the extra ones, as pip would search them (order of preference)."""
    config = pip_config() if config is None else config

    def setting(name: str) -> str | None:
        found = None
        for section in _SECTIONS:
            found = config.get(f"{section}.{name}", found)
        return found

    if (setting("no-index") or "").lower() in ("1", "true", "yes", "on"):
        main: list[str] = []
    else:
        main = (setting("index-url") or DEFAULT_INDEX).split()
    extra = (setting("extra-index-url") or "").split()
    indexes = []
    for url in main + extra:
        if url not in indexes:
            indexes.append(url)
    return indexes


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href)


def normalise(project: str) -> str:
    return re.sub(r"[-_.]+", "-", project).lower()


def _read(url: str, timeout: float) -> tuple[str, str, str]:
    """(text, content type, final URL) of a simple-API page; a file:// directory is read through
    its index.html, as pip does."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file":
        path = Path(urllib.request.url2pathname(parsed.path))
        if path.is_dir():
            path = path / "index.html"
            url = path.as_uri()
        return path.read_text(encoding="utf-8"), "text/html", url
    request = urllib.request.Request(url, headers={"Accept": f"{_JSON}, text/html;q=0.1"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        charset = response.headers.get_content_charset() or "utf-8"
        return response.read().decode(charset), response.headers.get_content_type(), response.geturl()


def project_files(index: str, project: str, timeout: float = 60) -> list[Distribution]:
    """Every file an index lists for a project, with absolute URLs."""
    page = urllib.parse.urljoin(index.rstrip("/") + "/", normalise(project) + "/")
    text, content_type, final = _read(page, timeout)
    if content_type == _JSON or text.lstrip().startswith("{"):
        entries = [
            (f["url"], f.get("filename"), (f.get("hashes") or {}).get("sha256"))
            for f in json.loads(text).get("files", [])
        ]
    else:
        links = _Links()
        links.feed(text)
        entries = [(href, None, None) for href in links.hrefs]
    files = []
    for href, filename, sha256 in entries:
        absolute, _, fragment = urllib.parse.urljoin(final, href).partition("#")
        if sha256 is None and fragment.startswith("sha256="):
            sha256 = fragment.removeprefix("sha256=")
        name = filename or urllib.parse.unquote(absolute.rsplit("/", 1)[-1])
        files.append(Distribution(filename=name, url=absolute, sha256=sha256))
    return files


def _version(filename: str, project: str):
    """The version of an sdist named `<project>-<version>.tar.gz`, or None for another project's
    file or an unparseable name."""
    from packaging.version import InvalidVersion, Version

    name, sep, version = filename.removesuffix(".tar.gz").rpartition("-")
    if not sep or normalise(name) != normalise(project):
        return None
    try:
        return Version(version)
    except InvalidVersion:
        return None


def newest_sdist(project: str, indexes: list[str] | None = None, timeout: float = 60) -> Distribution:
    """The newest `.tar.gz` of a project across the configured indexes (an index that does not
    list the project, or cannot be read, is skipped; if none has it, say which were asked)."""
    indexes = configured_indexes() if indexes is None else indexes
    best = None
    problems = []
    for index in indexes:
        try:
            files = project_files(index, project, timeout)
        except (OSError, ValueError) as exc:
            problems.append(f"{_safe(index)}: {exc}")
            continue
        for dist in files:
            if not dist.filename.endswith(".tar.gz"):
                continue
            version = _version(dist.filename, project)
            if version is not None and (best is None or version > best[0]):
                best = (version, dist)
    if best is None:
        asked = ", ".join(_safe(i) for i in indexes) or "none (no-index is set)"
        raise LookupError(f"no sdist of {project} on the configured indexes ({asked}) {problems}")
    return best[1]


def download(dist: Distribution, target: Path, timeout: float = 600) -> Path:
    """Download to target (written whole), checking the index's sha256 when it gave one."""
    partial = target.with_name(target.name + ".part")
    digest = hashlib.sha256()
    with urllib.request.urlopen(dist.url, timeout=timeout) as response, partial.open("wb") as out:
        while chunk := response.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)
    if dist.sha256 and digest.hexdigest() != dist.sha256.lower():
        partial.unlink()
        raise ValueError(f"{dist.filename}: sha256 {digest.hexdigest()} != the index's {dist.sha256}")
    partial.replace(target)
    return target


def _safe(url: str) -> str:
    """An index URL without its credentials, for messages."""
    parts = urllib.parse.urlsplit(url)
    if parts.username or parts.password:
        parts = parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else ""))
    return urllib.parse.urlunsplit(parts)
