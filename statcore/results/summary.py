"""``Summary``: title, info pairs, named tables and notes, with text, HTML and LaTeX renderers.

The renderers are written here rather than borrowed (pandas' ``to_latex`` needs jinja2, and
statsmodels' SimpleTable assembly is what its own maintainers call hard to build). The output
carries no date or time, so the same fit always prints the same text.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from statcore.results._format import format_cell


@dataclass(frozen=True, eq=False, kw_only=True, repr=False)
class Summary:
    """A rendered-on-demand report of a results object.

    Parameters
    ----------
    title : str
        First line of the report.
    info : tuple of (str, str)
        Ordered, already formatted key/value pairs (method, nobs, convergence, ...).
    tables : mapping of str to DataFrame
        Named numeric tables (``"coefficients"`` for estimation results). They stay numeric,
        so ``summary().tables["coefficients"]`` is a usable DataFrame.
    notes : tuple of str
        Footnotes (reference distribution, interval level, warnings).
    """

    title: str
    info: tuple[tuple[str, str], ...] = ()
    tables: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def as_text(self, digits: int = 4) -> str:
        """Plain-text rendering, as ``print(summary)`` shows it."""
        blocks = [_text_table(name, frame, digits) for name, frame in self.tables.items()]
        info_lines = _text_info(self.info)
        width = max(
            [len(self.title), *(len(line) for line in info_lines)]
            + [len(line) for block in blocks for line in block.splitlines()]
            + [40]
        )
        out = ["=" * width, self.title.center(width).rstrip(), "=" * width]
        out.extend(info_lines)
        for block in blocks:
            out.append("-" * width)
            out.append(block)
        out.append("=" * width)
        out.extend(f"[{i}] {note}" for i, note in enumerate(self.notes, start=1))
        return "\n".join(out)

    def as_html(self, digits: int = 4) -> str:
        """A self-contained HTML fragment (what notebooks display)."""
        parts = ['<div class="statcore-summary">', f"<h4>{html.escape(self.title)}</h4>"]
        if self.info:
            parts.append('<table class="statcore-info"><tbody>')
            parts.extend(
                f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in self.info
            )
            parts.append("</tbody></table>")
        for name, frame in self.tables.items():
            parts.append(_html_table(name, frame, digits))
        if self.notes:
            parts.append('<ol class="statcore-notes">')
            parts.extend(f"<li>{html.escape(note)}</li>" for note in self.notes)
            parts.append("</ol>")
        parts.append("</div>")
        return "\n".join(parts)

    def as_latex(self, digits: int = 4) -> str:
        """LaTeX: one ``tabular`` for the info pairs and one per table (booktabs rules)."""
        out = [f"\\textbf{{{_latex_escape(self.title)}}}", ""]
        if self.info:
            out.append("\\begin{tabular}{ll}")
            out.extend(f"{_latex_escape(k)} & {_latex_escape(v)} \\\\" for k, v in self.info)
            out.extend(["\\end{tabular}", ""])
        for name, frame in self.tables.items():
            header, rows, n_labels = _cells(frame, digits)
            out.append(f"\\textit{{{_latex_escape(name)}}}\\\\")
            align = "l" * n_labels + "r" * (len(header) - n_labels)
            out.append("\\begin{tabular}{" + align + "}")
            out.append("\\toprule")
            out.append(" & ".join(_latex_escape(h) for h in header) + " \\\\")
            out.append("\\midrule")
            out.extend(" & ".join(_latex_escape(c) for c in row) + " \\\\" for row in rows)
            out.extend(["\\bottomrule", "\\end{tabular}", ""])
        out.extend(f"{_latex_escape(note)}\\\\" for note in self.notes)
        return "\n".join(out).rstrip("\\\n") + "\n"

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return self.as_text()

    def _repr_html_(self) -> str:
        return self.as_html()


def _has_meaningful_index(frame: pd.DataFrame) -> bool:
    index = frame.index
    return not (isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1)


def _cells(frame: pd.DataFrame, digits: int) -> tuple[list[str], list[list[str]], int]:
    """Header, formatted body rows, and how many leading columns hold the row labels.

    A labelled index becomes the first column(s); a MultiIndex gets one column per level, with a
    label left blank where it repeats the row above (pandas' "sparsified" look).
    """
    n_labels = frame.index.nlevels if _has_meaningful_index(frame) else 0
    names = [str(n) if n is not None else "" for n in frame.index.names]
    header = (names if n_labels else []) + [str(c) for c in frame.columns]
    rows, previous = [], None
    # column by column, so that an int column stays int (iterrows would upcast the row)
    columns = [(str(c), frame[c].tolist()) for c in frame.columns]
    for i, label in enumerate(frame.index):
        cells = [format_cell(values[i], name, digits) for name, values in columns]
        if n_labels:
            parts = [str(x) for x in (label if isinstance(label, tuple) else (label,))]
            shown = list(parts)
            if previous is not None:
                for j in range(len(parts) - 1):
                    if parts[: j + 1] != previous[: j + 1]:
                        break
                    shown[j] = ""
            previous = parts
            cells = shown + cells
        rows.append(cells)
    return header, rows, n_labels


def _text_table(name: str, frame: pd.DataFrame, digits: int) -> str:
    header, rows, n_labels = _cells(frame, digits)
    widths = [max(len(r[j]) for r in [header, *rows]) for j in range(len(header))]

    def line(cells):
        parts = []
        for j, (cell, w) in enumerate(zip(cells, widths, strict=True)):
            parts.append(cell.ljust(w) if j < n_labels else cell.rjust(w))
        return "  ".join(parts).rstrip()

    return "\n".join([name, line(header), *(line(r) for r in rows)])


def _text_info(info) -> list[str]:
    """Info pairs two to a line, keys left-aligned in each half."""
    if not info:
        return []
    key_w = max(len(k) for k, _ in info) + 1
    val_w = max(len(v) for _, v in info)
    cells = [f"{(k + ':').ljust(key_w)} {v.rjust(val_w)}" for k, v in info]
    col_w = max(len(c) for c in cells)
    return [
        "   ".join(c.ljust(col_w) for c in cells[i : i + 2]).rstrip()
        for i in range(0, len(cells), 2)
    ]


def _html_table(name: str, frame: pd.DataFrame, digits: int) -> str:
    header, rows, _ = _cells(frame, digits)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    return (
        f'<table class="statcore-table"><caption>{html.escape(name)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))
