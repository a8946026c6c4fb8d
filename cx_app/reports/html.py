"""The self-contained HTML report: the same content as the workbook, interactive charts.

Opens with no network (the Vega libraries inlined); every text is escaped and the JSON island
escapes ``<``, ``>`` and ``&``, so survey labels never become markup.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from cx_app.atomic_files import write_text_atomic
from cx_app.reports.blocks import (
    BLOCK_KINDS,
    ChartBlock,
    MatrixBlock,
    Paragraph,
    Report,
    Section,
    Table,
)
from cx_app.reports.formatting import format_value, is_number
from cx_app.safe_text import escape_html, plain_spec

_CSS = """
:root { --ink: #1b1f23; --muted: #555; --line: #d5dbdf; --head: #dce6f0; --im: #fce4c8;
        --im-ink: #7a3e00; --warn: #9c2a00; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       margin: 0; }
header { padding: 16px 24px 8px; border-bottom: 1px solid var(--line); }
header h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 0; color: var(--muted); }
nav { display: flex; flex-wrap: wrap; gap: 4px 14px; padding: 8px 24px;
      border-bottom: 1px solid var(--line); position: sticky; top: 0; background: #fff; z-index: 2; }
nav a { color: #1f6f8b; text-decoration: none; }
main { padding: 0 24px 40px; max-width: 1400px; }
section { margin-top: 28px; }
h2 { font-size: 19px; border-bottom: 2px solid var(--ink); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 22px 0 6px; }
p.note { color: var(--muted); font-style: italic; margin: 4px 0; }
p.warning { color: var(--warn); font-weight: 600; }
p.heading { font-weight: 700; font-size: 15px; margin-top: 18px; }
.block { overflow-x: auto; margin-bottom: 14px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 3px 8px; vertical-align: top; }
thead th { background: var(--head); text-align: left; }
td.num { text-align: right; white-space: nowrap; }
td.wide { max-width: 520px; min-width: 300px; }
table.matrix th.corner { font-size: 12px; white-space: nowrap; }
table.matrix th.rowhead { background: var(--head); text-align: left; }
table.matrix td { text-align: right; min-width: 52px; }
table.matrix td.diag { outline: 2px solid var(--ink); outline-offset: -2px; font-weight: 700; }
table.matrix .im { background: var(--im); color: var(--im-ink); font-style: italic;
                   border: 1px dashed var(--im-ink); }
.chart { margin: 8px 0 18px; min-height: 40px; }
.chart-error { color: var(--warn); }
details.long > summary { cursor: pointer; color: #1f6f8b; margin: 2px 0 6px; }
@media print {
  nav { display: none; }
  body { font-size: 10pt; }
  main { padding: 0; max-width: none; }
  header { padding: 0 0 6px; }
  section { break-before: page; margin-top: 0; }
  section:first-of-type { break-before: auto; }
  .block, .chart, table { break-inside: avoid; }
  thead { display: table-header-group; }
  .block { overflow: visible; }
  a { color: inherit; text-decoration: none; }
  @page { margin: 14mm; }
}
"""

_RENDER_SCRIPT = """
(function () {
  var specs = JSON.parse(document.getElementById("chart-specs").textContent);
  document.querySelectorAll("div.chart[data-chart]").forEach(function (el) {
    var spec = specs[Number(el.getAttribute("data-chart"))];
    vegaEmbed(el, spec, {actions: false, renderer: "svg"}).catch(function (error) {
      el.className += " chart-error";
      el.textContent = "This chart could not be drawn: " + error;
    });
  });
})();
"""

LONG_TABLE_ROWS = 60
"""Longer tables are folded (``<details>``): a reduced ROC has one point per distinct score."""


@functools.lru_cache(maxsize=1)
def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one script (vl-convert bundles them: about 2.5 s,
    once a process)."""
    import vl_convert

    # A literal "</script" inside the code would end the element early; "<\\/" is the same
    # character sequence in every JavaScript string or regular expression.
    return vl_convert.javascript_bundle().replace("</script", "<\\/script")


def _json_island(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _note(text: str) -> str:
    return f'<p class="note">{escape_html(text)}</p>' if text else ""


def _block(title: str, inner: str) -> str:
    return f'<div class="block"><h3>{escape_html(title)}</h3>{inner}</div>'


class _Renderer:
    def __init__(self) -> None:
        self.specs: list[dict] = []

    def table(self, block: Table) -> str:
        head = "".join(f"<th>{escape_html(c.title)}</th>" for c in block.columns)
        body = []
        for i, row in enumerate(block.rows):
            cells = [self._cell(value, block.kind(i, j)) for j, value in enumerate(row)]
            body.append("<tr>" + "".join(cells) + "</tr>")
        table = (f'<table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
                 "</table>")
        if len(block.rows) > LONG_TABLE_ROWS:
            table = (f'<details class="long"><summary>Show all {len(block.rows):,} rows'
                     f"</summary>{table}</details>")
        return _block(block.title, table + _note(block.note))

    @staticmethod
    def _cell(value: Any, kind: str) -> str:
        if kind != "text" and is_number(value):
            return (f'<td class="num" title="{escape_html(repr(value))}">'
                    f"{escape_html(format_value(value, kind))}</td>")
        text = format_value(value, kind)
        wide = ' class="wide"' if len(text) > 60 else ""
        return f"<td{wide}>{escape_html(text)}</td>"

    def matrix(self, block: MatrixBlock) -> str:
        labels = list(block.labels)
        has_im = block.im is not None
        kind = "count"
        top = max((v for row in block.counts for v in row if is_number(v)), default=0)
        head = '<th class="corner">Actual ↓ / Predicted →</th>' + "".join(
            f"<th>{escape_html(label)}</th>" for label in labels)
        if has_im:
            head += '<th class="im">IM</th>'
        rows = []
        for i, label in enumerate(labels):
            cells = [f'<th class="rowhead">{escape_html(label)}</th>']
            for j, value in enumerate(block.counts[i]):
                share = (value / top) if top and isinstance(value, int | float) else 0.0
                style = f' style="background: rgba(74,125,179,{0.75 * share:.3f})"'
                css = ' class="diag"' if i == j else ""
                cells.append(f"<td{css}{style}>{escape_html(format_value(value, kind))}</td>")
            if has_im:
                cells.append(f'<td class="im">{escape_html(format_value(block.im[i], kind))}</td>')
            rows.append("<tr>" + "".join(cells) + "</tr>")
        if has_im:
            cells = ['<th class="rowhead im">IM</th>'] + [
                f'<td class="im">{escape_html(format_value(v, kind))}</td>' for v in block.im]
            rows.append("<tr>" + "".join(cells) + '<td class="im"></td></tr>')
        positive = _note(f"Positive group: {block.positive}" if block.positive else "")
        return _block(block.title, f'{positive}<table class="matrix"><thead><tr>{head}</tr>'
                      f'</thead><tbody>{"".join(rows)}</tbody></table>{_note(block.note)}')

    def chart(self, block: ChartBlock) -> str:
        index = len(self.specs)
        self.specs.append(plain_spec(block.spec))
        return _block(block.title, f'<div class="chart" id="chart-{index}" '
                      f'data-chart="{index}"></div>{_note(block.note)}')

    @staticmethod
    def paragraph(block: Paragraph) -> str:
        css = f' class="{block.style}"' if block.style != "text" else ""
        return f"<p{css}>{escape_html(block.text)}</p>"

    def section(self, section: Section) -> str:
        parts = [f'<section id="sec-{escape_html(section.key)}">'
                 f"<h2>{escape_html(section.title)}</h2>"]
        parts += [getattr(self, BLOCK_KINDS[type(b)])(b) for b in section.blocks]
        parts.append("</section>")
        return "".join(parts)


def render_html(report: Report, *, charts: bool = True, bundle: str | None = None) -> str:
    """``charts=False`` leaves out the charts and the inlined Vega libraries (a small file);
    ``bundle``: :func:`vega_bundle`'s script when already at hand."""
    renderer = _Renderer()
    sections = [s if charts else Section(s.key, s.title, tuple(
        b for b in s.blocks if not isinstance(b, ChartBlock))) for s in report.sections]
    body = "".join(renderer.section(s) for s in sections)
    nav = "".join(f'<a href="#sec-{escape_html(s.key)}">{escape_html(s.title)}</a>'
                  for s in sections)
    scripts = ""
    if renderer.specs:
        scripts = (f'<script type="application/json" id="chart-specs">'
                   f"{_json_island(renderer.specs)}</script>"
                   f"<script>{vega_bundle() if bundle is None else bundle}</script>"
                   f"<script>{_RENDER_SCRIPT}</script>")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="cx-app">'
        f"<title>{escape_html(report.title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{escape_html(report.title)}</h1>"
        f"<p>Created {escape_html(report.created)}</p></header>"
        f"<nav>{nav}</nav><main>{body}</main>{scripts}</body></html>\n"
    )


def write_html(report: Report, path: str | Path, **options: Any) -> None:
    write_text_atomic(path, render_html(report, **options))
