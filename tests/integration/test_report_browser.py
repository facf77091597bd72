"""The report as a reader opens it: headless Chromium (Debian's package) renders the front door
(results/report/index.html) and every page it links, and the test fails on a link to a file that is
not there, an image that does not decode, a table left as raw Markdown text, a console message, or a
page the front door does not reach.

Needs Chromium (installed with apt-get when missing and root); where it cannot be had the test is
skipped with the reason, never silently."""

from __future__ import annotations

import base64
import io
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

pytestmark = pytest.mark.browser
WIRING_TARGETS = ("all",)


def _chromium() -> str:
    """The Chromium binary, installed with apt-get when missing (as root); skips with the reason."""
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        reason = "browser test skipped: Chromium is not installed and apt-get (as root) is not available"
        print(reason)
        pytest.skip(reason)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    installed = subprocess.run(
        ["apt-get", "install", "-y", "-qq", "chromium"], capture_output=True, text=True, timeout=900, env=env
    )
    if installed.returncode != 0:
        update = subprocess.run(["apt-get", "update", "-qq"], capture_output=True, text=True, timeout=600, env=env)
        installed = subprocess.run(
            ["apt-get", "install", "-y", "-qq", "chromium"], capture_output=True, text=True, timeout=900, env=env
        )
        if installed.returncode != 0:
            pytest.fail(f"apt-get could not install chromium: {update.stderr[-1000:]} {installed.stderr[-2000:]}")
    return shutil.which("chromium")


def rendered(chromium: str, page: Path, profile: Path) -> tuple[str, list[str]]:
    """The DOM of ``page`` after Chromium rendered it, and the console lines it logged."""
    result = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout, [line for line in result.stderr.splitlines() if ":CONSOLE" in line]


class Parts(HTMLParser):
    """The links, images, tables and visible text of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.images: list[str] = []
        self.tables = 0
        self.text: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "a" and "href" in attributes:
            self.links.append(attributes["href"])
        elif tag == "img":
            self.images.append(attributes.get("src", ""))
        elif tag == "table":
            self.tables += 1
        elif tag in ("style", "script"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("style", "script"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


def parts_of(dom: str) -> Parts:
    parser = Parts()
    parser.feed(dom)
    return parser


def decodes_as_png(source: str) -> bool:
    import matplotlib.image

    if not source.startswith("data:image/png;base64,"):
        return False
    try:
        image = matplotlib.image.imread(io.BytesIO(base64.b64decode(source.split(",", 1)[1])), format="png")
    except (ValueError, OSError, SyntaxError):
        return False
    return image.shape[0] > 10 and image.shape[1] > 10


def test_the_front_door_reaches_every_page_and_every_page_renders(wiring_study, tmp_path):
    chromium = _chromium()
    run = wiring_study(*WIRING_TARGETS)
    report = run / "results" / "report"
    index = report / "index.html"
    assert index.is_file(), "the report has no front door"
    pages = sorted(p for p in report.rglob("*.html") if p != index)
    assert len(pages) > 30
    reached: set[Path] = set()
    queue, seen = [index], set()
    problems: list[str] = []
    while queue:
        page = queue.pop()
        if page in seen:
            continue
        seen.add(page)
        dom, console = rendered(chromium, page, tmp_path / "profile")
        name = page.relative_to(run).as_posix()
        problems += [f"{name}: console: {line.split(':CONSOLE', 1)[1]}" for line in console]
        parts = parts_of(dom)
        text = "".join(parts.text)
        if re.search(r"\|\s*:?-{3,}:?\s*\|", text):
            problems.append(f"{name}: a table shown as raw Markdown text")
        problems += [f"{name}: an image that does not decode" for src in parts.images if not decodes_as_png(src)]
        for href in parts.links:
            target = urlparse(href)
            if target.scheme in ("http", "https", "mailto"):
                continue
            path = (page.parent / unquote(target.path)).resolve()
            if not path.exists():
                problems.append(f"{name}: a link to {href}, which is not there")
            elif path.suffix == ".html" and report in path.parents:
                reached.add(path)
                queue.append(path)
    problems += [f"{p.relative_to(run).as_posix()}: not reached from the front door" for p in pages if p not in reached]
    assert not problems, "\n".join(problems[:40])


def test_the_docs_show_the_front_door():
    from conftest import REPO

    image = REPO / "docs" / "img" / "report_index.png"
    assert image.is_file() and image.stat().st_size > 10_000
    assert "img/report_index.png" in (REPO / "docs" / "outputs.md").read_text()
