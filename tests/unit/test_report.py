"""The report's pages: Markdown tables become HTML tables, figures are embedded, every registered
item has all caption parts, and docs/outputs.md lists every item in the words of its caption."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pandas as pd
import pytest

from medbias.core.errors import MedbiasInputError
from medbias.pipeline.report import caption_rst, check_item, json_to_html, load_items, markdown_to_html, render_page

REPO = Path(__file__).resolve().parents[2]
ITEMS = REPO / "report" / "items.yaml"
ITEM = {
    "title": "Table 9: counts",
    "study": "Some study",
    "part": "Tables",
    "shows": "Counts per decade.",
    "paper": "12 in the 1960s.",
    "source": "Rule x; config y.",
}


def test_a_markdown_table_becomes_an_html_table_with_its_title_and_notes():
    text = "# Table 9: counts\n\n| Year | n |\n|---|---|\n| 1960 | 12 |\n| 1970 | 7 |\n\nExcluded: 3 undated.\n"
    html = markdown_to_html(text)
    assert "<h1>Table 9: counts</h1>" in html
    assert re.findall(r"<td>(.*?)</td>", html) == ["1960", "12", "1970", "7"]
    assert re.findall(r"<th>(.*?)</th>", html) == ["Year", "n"]
    assert "<p>Excluded: 3 undated.</p>" in html


def test_a_pipe_in_a_header_or_cell_stays_in_its_column():
    import pandas as pd

    from medbias.io.tables import markdown_table

    frame = pd.DataFrame({"model": ["m"], "SEAT gender mean |d|": ["0.5 | 0.7"]})
    html = markdown_to_html(markdown_table(frame))
    assert re.findall(r"<th>(.*?)</th>", html) == ["model", "SEAT gender mean |d|"]
    assert re.findall(r"<td>(.*?)</td>", html) == ["m", "0.5 | 0.7"]


def test_markup_in_a_cell_is_escaped():
    html = markdown_to_html("| a |\n|---|\n| <script>x</script> |\n")
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_a_page_holds_the_table_or_the_embedded_figure_and_the_whole_caption(tmp_path):
    md = tmp_path / "t.md"
    md.write_text("# T\n\n| a |\n|---|\n| 1 |\n")
    page = render_page(md, ITEM)
    assert (
        "<table>" in page
        and "Counts per decade." in page
        and "12 in the 1960s." in page
        and "Rule x; config y." in page
    )
    png = tmp_path / "f.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    page = render_page(png, ITEM)
    encoded = re.search(r'src="data:image/png;base64,([^"]+)"', page).group(1)
    assert base64.b64decode(encoded) == png.read_bytes()
    with pytest.raises(MedbiasInputError, match="t.txt"):
        render_page(tmp_path / "t.txt", ITEM)


def test_a_page_leads_back_to_the_front_door_and_puts_its_caption_before_its_folded_settings(tmp_path):
    md = tmp_path / "t.md"
    md.write_text(
        "# T\n\n| a |\n|---|\n| 1 |\n\nA note.\n\nSettings that shaped these numbers (config key = value: where it "
        "comes from):\n- `x.y` = `3`: our choice\n- `x.z` = `4`: paper\n"
    )
    page = render_page(md, ITEM, depth=1)
    assert '<nav><a href="../index.html">All tables and figures</a> &middot; Some study</nav>' in page
    caption, settings = page.index('<dl class="caption">'), page.index("<details><summary>Settings that shaped")
    assert page.index("<p>A note.</p>") < caption < settings
    assert "<code>x.y</code>" in page[settings:] and page[settings:].index("</details>") > page[settings:].index("x.z")
    assert "table { display: block; max-width: 100%; overflow-x: auto; }" in page  # a wide table scrolls
    (tmp_path / "plain.md").write_text("# T\n\n| a |\n|---|\n| 1 |\n")
    plain = render_page(tmp_path / "plain.md", ITEM)  # no settings: the caption follows the body
    assert '<a href="index.html">' in plain and "<details>" not in plain


def test_the_front_door_links_every_page_under_its_study_and_part():
    from medbias.pipeline.report import front_door

    items = {
        "x/table1": {**ITEM, "file": "x/table1.md"},
        "x/fig1": {**ITEM, "title": "Figure 1 <a>", "part": "Figures", "file": "x/fig1.png"},
        "y/table2": {**ITEM, "study": "Other", "file": "y/table2.md"},
    }
    page = front_door(items, ["x", "y"])
    assert re.findall(r'<a href="([^"]+)">', page) == [
        "../x/index.md",
        "../y/index.md",
        "x/table1.html",
        "x/fig1.html",
        "y/table2.html",
    ]
    assert page.index("<h2>Some study</h2>") < page.index("<h3>Figures</h3>") < page.index("<h2>Other</h2>")
    assert "Figure 1 &lt;a&gt;" in page and "3 pages" in page


def test_a_manifest_becomes_tables_one_row_per_entry():
    html = json_to_html(
        {
            "world": "demo",
            "models": {"bert": {"kind": "masked", "studies": ["a", "b"]}, "gpt2": {"kind": "causal"}},
            "files": ["x", "y"],
        }
    )
    assert "<th>world</th><td>demo</td>" in html
    assert "<th>name</th><th>kind</th><th>studies</th>" in html
    assert "<td>bert</td><td>masked</td><td>a, b</td>" in html and "<td>gpt2</td><td>causal</td><td></td>" in html
    assert "<li>x</li><li>y</li>" in html


def test_an_item_without_a_caption_part_is_named():
    with pytest.raises(MedbiasInputError, match=r"'rios/t.md' lacks paper"):
        check_item("rios/t.md", {**ITEM, "paper": " "})
    assert caption_rst(ITEM).startswith("**What it shows:** Counts per decade.")


def test_real_runs_leave_out_the_demo_worlds_pages():
    demo, real = load_items(ITEMS, "demo"), load_items(ITEMS, "real")
    assert "validation/planted_recovery" in demo and "demo_world/fig_demo_world" in demo
    assert not any(page.split("/")[0] in ("validation", "demo_world") for page in real)
    assert real["rios/table1_articles"]["file"] == "rios/table1_articles.md"
    assert "hurtful/tableD4_probe" not in load_items(ITEMS, "real", left_out=("hurtful/tableD4_probe.md",))
    assert (
        demo["rios/fig1_weat"]["file"] == "rios/fig1_weat.png"
        and demo["rios/fig1_weat_data"]["file"] == "rios/fig1_weat.md"
    )


def test_two_items_on_one_page_are_named(tmp_path):
    items = tmp_path / "items.yaml"
    items.write_text(f"rios/f.md: {ITEM}\nrios/f.png: {ITEM}\n".replace("'", '"'))
    with pytest.raises(MedbiasInputError, match=r"'rios/f.md' and 'rios/f.png' make the same page 'rios/f'"):
        load_items(items, "demo")


def test_the_outputs_page_lists_every_report_item_in_the_words_of_its_caption():
    """docs/outputs.md's tables-and-figures part is generated from report/items.yaml: equal to a fresh
    generation, and it names every item's file with its title and what it shows."""
    from medbias.pipeline.report import OUTPUTS_BEGIN, OUTPUTS_END, outputs_reference, with_outputs_reference

    doc = (REPO / "docs" / "outputs.md").read_text()
    items = load_items(ITEMS, "demo")
    assert doc == with_outputs_reference(doc, outputs_reference(items)), "run: python scripts/outputs_reference.py"
    part = doc[doc.index(OUTPUTS_BEGIN) : doc.index(OUTPUTS_END)]
    rows = [line for line in part.splitlines() if line.startswith("| `results/")]
    assert len(rows) == len(items)
    for item in items.values():
        assert f"| `results/{item['file']}` | {' '.join(item['title'].split())} |" in part, item["file"]
    with pytest.raises(MedbiasInputError, match="docs/outputs.md: lacks the marker lines"):
        with_outputs_reference("# no markers\n", outputs_reference(items))


def test_a_folder_index_lists_its_items_with_their_pages_and_no_other_folders():
    from medbias.pipeline.report import folder_index, folder_pages

    items = {
        "x/table1": {**ITEM, "file": "x/table1.md"},
        "x/fig1": {**ITEM, "title": "Figure 1 | a", "file": "x/fig1.png"},
        "y/table2": {**ITEM, "file": "y/table2.md"},
    }
    assert folder_pages(items) == {"x": ["x/table1", "x/fig1"], "y": ["y/table2"]}
    text = folder_index("x", items, "out")
    assert text.startswith("# Tables and figures in out/x\n")
    # links relative to out/x/index.md
    assert (
        "| Table 9: counts | [out/x/table1.md](../x/table1.md) | [out/report/x/table1.html](../report/x/table1.html) |"
        in text
    )
    assert (
        "| Figure 1 \\| a | [out/x/fig1.png](../x/fig1.png) | [out/report/x/fig1.html](../report/x/fig1.html) |" in text
    )
    assert "y/table2" not in text
    assert set(folder_pages(load_items(ITEMS, "demo"))) == {
        "demo_world",
        "validation",
        "inputs",
        "rios",
        "mimic",
        "hurtful",
        "mental",
        "plm",
        "vignettes",
    }


def test_a_page_is_its_title_then_its_blocks_one_blank_line_apart(tmp_path):
    """The one writer of tables and pages, by hand: a paragraph, a table under a heading, a table alone;
    a PaperTable's Markdown is its table then its non-empty notes, one per line."""
    from medbias.io.tables import PaperPage, PaperTable, Section, page_markdown, write_paper_table

    frame = pd.DataFrame({"a": [1.23456, float("nan")], "b": ["x|y", "z"]})
    page = PaperPage("T", ("Intro.", Section(frame, "Part", digits=2), Section(frame.head(1)), "End."))
    table = "| a | b |\n|---|---|\n| 1.23 | x\\|y |\n|  | z |\n"
    assert page_markdown(page) == (
        "# T\n\nIntro.\n\n## Part\n\n" + table + "\n| a | b |\n|---|---|\n| 1.235 | x\\|y |\n\nEnd.\n"
    )
    write_paper_table(
        PaperTable(frame, "T", ("one", "", "two"), digits=2), str(tmp_path / "t.csv"), str(tmp_path / "t.md")
    )
    assert (tmp_path / "t.md").read_text() == "# T\n\n" + table + "\none\ntwo\n"
    assert pd.read_csv(tmp_path / "t.csv")["b"].tolist() == ["x|y", "z"]
    write_paper_table(PaperTable(frame, "T", ("",), digits=2), None, str(tmp_path / "u.md"))
    assert (tmp_path / "u.md").read_text() == "# T\n\n" + table
