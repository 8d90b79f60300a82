"""``Summary``: title, info pairs, named tables and notes, with text, HTML and LaTeX renderers.

The renderers are written here rather than borrowed (pandas' ``to_latex`` needs jinja2, and
statsmodels' SimpleTable assembly is what its own maintainers call hard to build). The output
carries no date or time, so the same fit always prints the same text.
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from statcore.results._format import format_cell

#: Widest line ``as_text`` prints (a terminal, a notebook cell, an 80-100 column editor).
TEXT_WIDTH = 100
#: Table rows ``as_text`` / ``as_html`` print before pointing to ``tidy()`` (ridge paths,
#: per-channel tables and many levels run to thousands).
MAX_ROWS = 40
#: Row labels longer than this are cut (with an ellipsis) in the text rendering.
MAX_LABEL = 40


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

    def as_text(self, digits: int = 4, max_rows: int = MAX_ROWS, width: int = TEXT_WIDTH) -> str:
        """Plain-text rendering, as ``print(summary)`` shows it.

        Lines stay within ``width`` characters: long info values and notes wrap, a table too wide
        is split into column blocks (row labels repeated), and labels longer than 40 characters
        are cut. At most ``max_rows`` table rows are printed in all; a line says how many more
        there are (``tidy()`` has them all).
        """
        blocks = []
        for name, frame, hidden in _shown_tables(self.tables, max_rows):
            lines = _text_table(name, frame, digits, width)
            if hidden:
                lines.append(f"… {hidden} more rows; use tidy()")
            blocks.append(lines)
        skipped = _skipped(self.tables, max_rows)
        info_lines = _text_info(self.info, width)
        title_lines = textwrap.wrap(self.title, width) or [""]
        rule = min(
            width,
            max(
                [40, *(len(line) for line in title_lines + info_lines)]
                + [len(line) for block in blocks for line in block]
            ),
        )
        out = ["=" * rule, *(line.center(rule).rstrip() for line in title_lines), "=" * rule]
        out.extend(info_lines)
        for block in blocks:
            out.append("-" * rule)
            out.extend(block)
        if skipped:
            n_tables, n_rows = skipped
            out.append("-" * rule)
            out.append(f"… {n_rows} more rows in {n_tables} more tables; use tidy()")
        out.append("=" * rule)
        for i, note in enumerate(self.notes, start=1):
            prefix = f"[{i}] "
            out.extend(
                textwrap.wrap(
                    note, width, initial_indent=prefix, subsequent_indent=" " * len(prefix)
                )
                or [prefix.rstrip()]
            )
        return "\n".join(out)

    def as_html(self, digits: int = 4, max_rows: int = MAX_ROWS) -> str:
        """A self-contained HTML fragment (what notebooks display), at most ``max_rows`` rows."""
        parts = ['<div class="statcore-summary">', f"<h4>{html.escape(self.title)}</h4>"]
        if self.info:
            parts.append('<table class="statcore-info"><tbody>')
            parts.extend(
                f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in self.info
            )
            parts.append("</tbody></table>")
        for name, frame, hidden in _shown_tables(self.tables, max_rows):
            parts.append(_html_table(name, frame, digits, hidden))
        skipped = _skipped(self.tables, max_rows)
        if skipped:
            parts.append(f"<p>… {skipped[1]} more rows in {skipped[0]} more tables; use tidy()</p>")
        if self.notes:
            parts.append('<ol class="statcore-notes">')
            parts.extend(f"<li>{html.escape(note)}</li>" for note in self.notes)
            parts.append("</ol>")
        parts.append("</div>")
        return "\n".join(parts)

    def as_latex(self, digits: int = 4) -> str:
        """LaTeX: one ``tabular`` for the info pairs and one per table (booktabs rules).

        Every row is written: a paper's table is edited by hand, not read in a console.
        """
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


def _shown_tables(tables, max_rows: int):
    """``(name, frame, n_hidden)`` for the tables that fit in ``max_rows`` rows in all."""
    left = max_rows
    for name, frame in tables.items():
        if left <= 0:
            return
        shown = frame.iloc[:left]
        left -= len(shown)
        yield name, shown, len(frame) - len(shown)


def _skipped(tables, max_rows: int) -> tuple[int, int] | None:
    """``(tables, rows)`` left out entirely once ``max_rows`` rows are printed; None if none."""
    left, n_tables, n_rows = max_rows, 0, 0
    for frame in tables.values():
        if left <= 0:
            n_tables += 1
            n_rows += len(frame)
        left -= len(frame)
    return (n_tables, n_rows) if n_tables else None


def _cut(text: str) -> str:
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def _text_table(name: str, frame: pd.DataFrame, digits: int, width: int) -> list[str]:
    """The table's lines; columns that do not fit in ``width`` go to further blocks."""
    header, rows, n_labels = _cells(frame, digits)
    rows = [[_cut(c) if j < n_labels else c for j, c in enumerate(r)] for r in rows]
    widths = [max(len(r[j]) for r in [header, *rows]) for j in range(len(header))]
    label_width = sum(widths[:n_labels]) + 2 * n_labels
    blocks, current, used = [], [], label_width
    for j in range(n_labels, len(header)):
        if current and used + widths[j] > width:
            blocks.append(current)
            current, used = [], label_width
        current.append(j)
        used += widths[j] + 2
    blocks.append(current)

    def line(cells, columns):
        parts = [cells[j].ljust(widths[j]) for j in range(n_labels)]
        parts += [cells[j].rjust(widths[j]) for j in columns]
        return "  ".join(parts).rstrip()

    out = [name]
    for i, columns in enumerate(blocks):
        if i:
            out.append("")
        out.extend(line(r, columns) for r in [header, *rows])
    return out


def _text_info(info, width: int) -> list[str]:
    """Info pairs two to a line, keys left-aligned in each half; a value too long for a half
    gets a line of its own and wraps there, indented under its first word."""
    if not info:
        return []
    key_w = max(len(k) for k, _ in info) + 1
    half = (width - 3) // 2
    short = [v for _, v in info if key_w + 1 + len(v) <= half]
    val_w = max((len(v) for v in short), default=0)
    out, pending = [], []

    def flush():
        if pending:
            out.append("   ".join(c.ljust(key_w + 1 + val_w) for c in pending).rstrip())
            pending.clear()

    for key, value in info:
        label = (key + ":").ljust(key_w)
        if key_w + 1 + len(value) <= half:
            pending.append(f"{label} {value.rjust(val_w)}")
            if len(pending) == 2:
                flush()
            continue
        flush()
        wrapped = textwrap.wrap(value, max(width - key_w - 1, 20)) or [""]
        out.append(f"{label} {wrapped[0]}")
        out.extend(" " * (key_w + 1) + part for part in wrapped[1:])
    flush()
    return out


def _html_table(name: str, frame: pd.DataFrame, digits: int, hidden: int = 0) -> str:
    header, rows, _ = _cells(frame, digits)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    if hidden:
        body += f'<tr><td colspan="{len(header)}">… {hidden} more rows; use tidy()</td></tr>'
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
