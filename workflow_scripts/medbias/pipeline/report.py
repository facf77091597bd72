"""Pages of the Snakemake report: every paper table and figure as one readable HTML page.

The studies write their tables as Markdown (``medbias.io.tables.write_paper_table``: a title, a pipe table,
notes) and their figures as PNG. ``snakemake --report`` shows HTML and images inline but offers
Markdown and CSV only as downloads, so each registered item (``report/items.yaml``) is rendered
here into a self-contained page: a line back to the front door, the table as an HTML table (or the
figure, embedded), then the caption that says what it shows, what the paper reported and where it comes
from, before the settings that shaped it (folded). ``report/index.html`` (``front_door``) links every
page under its study.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml
from markdown_it import MarkdownIt

from medbias.core.errors import MedbiasInputError

CAPTION_KEYS = ("title", "study", "part", "shows", "paper", "source")
STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 80em; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #eef; }
tbody tr:nth-child(even) { background: #f7f7f7; }
table { display: block; max-width: 100%; overflow-x: auto; }
img { max-width: 100%; border: 1px solid #ddd; }
nav { font-size: 0.9em; margin-bottom: 1em; }
.caption { border: 1px solid #ccc; background: #fafaf5; margin: 1em 0; padding: 0.3em 0.8em; }
.caption dt { font-weight: bold; margin-top: 0.5em; }
details { margin: 1em 0; } summary { cursor: pointer; color: #335; }
"""
SETTINGS_HEADING = "Settings that shaped these numbers"


def check_item(key: str, item: dict) -> None:
    """Stop with one line naming the item and the key when a report entry lacks a caption part."""
    missing = [k for k in CAPTION_KEYS if not str(item.get(k, "")).strip()]
    if missing:
        raise MedbiasInputError(f"report/items.yaml: item {key!r} lacks {', '.join(missing)}")


DEMO_ONLY_FOLDERS = ("demo_world", "validation")


def load_items(path: Path, world: str, left_out: tuple[str, ...] = ()) -> dict[str, dict]:
    """The report items of a run, keyed by the page's name (the results path without its suffix, or
    the item's ``page``):
    every entry of ``path`` except the demo world's own on real data and the ``left_out`` keys;
    each entry gains ``file``, the results path it renders. Checked: a caption part missing stops."""
    items = yaml.safe_load(Path(path).read_text())
    pages = {}
    for key, item in items.items():
        check_item(key, item)
        if (world != "demo" and key.split("/")[0] in DEMO_ONLY_FOLDERS) or key in left_out:
            continue
        page = item.get("page", str(Path(key).with_suffix("")))
        if page in pages:
            raise MedbiasInputError(
                f"report/items.yaml: items {pages[page]['file']!r} and {key!r} make the same "
                f"page {page!r}; give one a 'page:' of its own"
            )
        pages[page] = {**item, "file": key}
    return pages


def markdown_to_html(text: str) -> str:
    """The HTML of a Markdown table file: headings, pipe tables, paragraphs and lists (CommonMark)."""
    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def csv_to_html(path: Path, digits: int = 4) -> str:
    """A CSV table (one without a Markdown twin) as an HTML table, floats to ``digits`` places."""
    import pandas as pd

    frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    return frame.to_html(index=False, float_format=lambda v: f"{v:.{digits}g}", na_rep="", border=0)


def figure_html(png: bytes, alt: str) -> str:
    """An ``<img>`` that carries the PNG itself (a data URI), so the page stands alone."""
    encoded = base64.b64encode(png).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{encoded}">'


def _cell(value: object) -> str:
    if isinstance(value, list):
        return html.escape(", ".join(str(v) for v in value))
    if isinstance(value, dict):
        return html.escape(json.dumps(value, sort_keys=True))
    return html.escape(str(value))


def json_to_html(data: dict) -> str:
    """A JSON record (the input manifest) as HTML: scalars in one table, each mapping of mappings as a
    table with one row per entry, each mapping of scalars as a two-column table, lists as lists."""
    scalars = {k: v for k, v in data.items() if not isinstance(v, (dict, list))}
    parts = []
    if scalars:
        parts.append(
            "<table>"
            + "".join(f"<tr><th>{html.escape(k)}</th><td>{_cell(v)}</td></tr>" for k, v in scalars.items())
            + "</table>"
        )
    for key, value in data.items():
        if key in scalars:
            continue
        parts.append(f"<h2>{html.escape(key)}</h2>")
        if isinstance(value, list):
            parts.append("<ul>" + "".join(f"<li>{_cell(v)}</li>" for v in value) + "</ul>")
        elif value and all(isinstance(v, dict) for v in value.values()):
            columns = list(dict.fromkeys(c for v in value.values() for c in v))
            head = "".join(f"<th>{html.escape(c)}</th>" for c in ["name", *columns])
            rows = "".join(
                "<tr><td>"
                + html.escape(name)
                + "</td>"
                + "".join(f"<td>{_cell(entry.get(c, ''))}</td>" for c in columns)
                + "</tr>"
                for name, entry in value.items()
            )
            parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        else:
            parts.append(
                "<table>"
                + "".join(f"<tr><th>{html.escape(str(k))}</th><td>{_cell(v)}</td></tr>" for k, v in value.items())
                + "</table>"
            )
    return "\n".join(parts)


def caption_html(item: dict) -> str:
    """The caption block of a page: what it shows, what the paper reported, where it comes from."""
    rows = (
        ("What it shows", item["shows"]),
        ("What the paper reported", item["paper"]),
        ("Where it comes from", item["source"]),
    )
    body = "".join(f"<dt>{label}</dt><dd>{html.escape(str(value).strip())}</dd>" for label, value in rows)
    return f'<dl class="caption">{body}</dl>'


def caption_rst(item: dict) -> str:
    """The same caption as reStructuredText, for the report's own caption field."""
    return "\n\n".join(
        f"**{label}** {str(value).strip()}"
        for label, value in (
            ("What it shows:", item["shows"]),
            ("What the paper reported:", item["paper"]),
            ("Where it comes from:", item["source"]),
        )
    )


def with_caption_before_settings(body: str, caption: str) -> str:
    """The page body with the caption placed before the settings list that a table's notes end with
    (``settings_notes``), and that list folded (``<details>``); without one, the caption after the body."""
    settings = re.search(rf"<p>({SETTINGS_HEADING}[^<]*)</p>\s*<ul>(.*?)</ul>", body, re.S)
    if not settings:
        return f"{body}\n{caption}"
    folded = f"<details><summary>{settings.group(1)}</summary><ul>{settings.group(2)}</ul></details>"
    return f"{body[: settings.start()]}{caption}\n{folded}{body[settings.end() :]}"


def navigation(item: dict, depth: int) -> str:
    """The line at the top of a page: back to the report's front door (``depth`` folders up) and the study."""
    home = f'<a href="{"../" * depth}index.html">All tables and figures</a>'
    return f"<nav>{home} &middot; {html.escape(item['study'])}</nav>"


def render_page(source: Path, item: dict, depth: int = 0) -> str:
    """The standalone HTML page of one report item: a line back to the front door, a Markdown table or a
    PNG figure, and its caption (before the settings, which are folded). ``depth``: how many folders
    below ``report/`` the page lies."""
    if source.suffix == ".md":
        body = markdown_to_html(source.read_text())
    elif source.suffix == ".csv":
        body = f"<h1>{html.escape(item['title'])}</h1>" + csv_to_html(source)
    elif source.suffix == ".json":
        body = f"<h1>{html.escape(item['title'])}</h1>" + json_to_html(json.loads(source.read_text()))
    elif source.suffix == ".png":
        body = f"<h1>{html.escape(item['title'])}</h1>" + figure_html(source.read_bytes(), item["title"])
    else:
        raise MedbiasInputError(
            f"{source}: a report item must be a .md table, a .csv table, a .png figure or a .json record"
        )
    title = html.escape(f"{item['study']}: {item['title']}")
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{STYLE}</style></head><body>\n{navigation(item, depth)}\n"
        f"{with_caption_before_settings(body, caption_html(item))}\n</body></html>\n"
    )


def front_door(items: Mapping[str, Mapping], folders: Sequence[str]) -> str:
    """``report/index.html``: every page of the report under its study and part, in ``report/items.yaml``
    order, each a link with what it shows; and each results folder's list of its files (``index.md``)."""
    studies: dict[str, dict[str, list[str]]] = {}
    for page, item in items.items():
        studies.setdefault(item["study"], {}).setdefault(item["part"], []).append(page)
    sections = []
    for study, parts in studies.items():
        sections.append(f"<h2>{html.escape(study)}</h2>")
        for part, pages in parts.items():
            rows = "".join(
                f'<li><a href="{html.escape(page)}.html">{html.escape(_flat(items[page]["title"]))}</a>'
                f'<br><span class="shows">{html.escape(_flat(items[page]["shows"]))}</span></li>'
                for page in pages
            )
            sections.append(f"<h3>{html.escape(part)}</h3><ul>{rows}</ul>")
    listed = ", ".join(f'<a href="../{html.escape(f)}/index.md">{html.escape(f)}/index.md</a>' for f in folders)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>medbias: tables and figures</title>'
        f"<style>{STYLE} li {{ margin: 0.4em 0; }} .shows {{ color: #555; font-size: 0.9em; }}</style>"
        "</head><body>\n<h1>medbias: the tables and figures of this run</h1>\n"
        f"<p>{len(items)} pages, each a table or figure with what it shows, what the paper reported and which "
        "rule and settings made it. Each results folder also lists its files with their pages: "
        f"{listed}.</p>\n" + "\n".join(sections) + "\n</body></html>\n"
    )


def results_folder(item: Mapping) -> str:
    """The folder under the results folder that holds an item (``rios``, ``hurtful``, ``demo_world``)."""
    return item["file"].split("/")[0]


def folder_pages(items: Mapping[str, Mapping]) -> dict[str, list[str]]:
    """The report pages of each results folder, in ``report/items.yaml`` order."""
    folders: dict[str, list[str]] = {}
    for page, item in items.items():
        folders.setdefault(results_folder(item), []).append(page)
    return folders


def _flat(text: object) -> str:
    """A caption part on one line (YAML may fold it over several)."""
    return " ".join(str(text).split())


def folder_index(folder: str, items: Mapping[str, Mapping], results: str) -> str:
    """``<results>/<folder>/index.md``: the folder's paper tables and figures of this run, one row each
    with its title, its file and its report page (which carries the caption), as links relative to it."""
    import pandas as pd

    from medbias.io.tables import markdown_table

    rows = [
        {
            "table or figure": _flat(item["title"]),
            "file": f"[{results}/{item['file']}](../{item['file']})",
            "report page": f"[{results}/report/{page}.html](../report/{page}.html)",
        }
        for page, item in items.items()
        if results_folder(item) == folder
    ]
    return "\n".join(
        [
            f"# Tables and figures in {results}/{folder}",
            "",
            "What each one shows, what the paper reported and which rule and settings made it: its report page "
            "(open it in a browser), or all pages at once with `snakemake --report report.zip`.",
            "",
            markdown_table(pd.DataFrame(rows, columns=["table or figure", "file", "report page"])),
        ]
    )


OUTPUTS_BEGIN = "<!-- tables and figures: generated from report/items.yaml by scripts/outputs_reference.py -->"
OUTPUTS_END = "<!-- end of the generated tables and figures -->"


def outputs_reference(items: Mapping[str, Mapping], results: str = "results") -> str:
    """The tables-and-figures part of docs/outputs.md: every report item under its study, with the file,
    the title and what it shows (the same words as its report page), between the two marker lines."""
    import pandas as pd

    from medbias.io.tables import markdown_table

    by_study: dict[str, list[dict[str, str]]] = {}
    for item in items.values():
        by_study.setdefault(item["study"], []).append(
            {
                "file": f"`{results}/{item['file']}`",
                "title": _flat(item["title"]),
                "what it shows": _flat(item["shows"]),
            }
        )
    parts = [OUTPUTS_BEGIN]
    for study, rows in by_study.items():
        parts += ["", f"### {study}", "", markdown_table(pd.DataFrame(rows)).rstrip("\n")]
    return "\n".join([*parts, "", OUTPUTS_END])


def with_outputs_reference(document: str, reference: str, where: str = "docs/outputs.md") -> str:
    """``document`` with the text between its marker lines replaced by ``reference`` (markers included)."""
    start, end = document.find(OUTPUTS_BEGIN), document.find(OUTPUTS_END)
    if start < 0 or end < start:
        raise MedbiasInputError(f"{where}: lacks the marker lines {OUTPUTS_BEGIN!r} and {OUTPUTS_END!r}")
    return document[:start] + reference + document[end + len(OUTPUTS_END) :]
