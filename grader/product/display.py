"""How a training run is shown: the loss as a sparkline, a log's summary and its plot.

`minillm train` draws its live display with these (`grader.product.training`), and
``minillm train --plot LOG`` summarises a finished run's JSON-lines log. The PNG needs
matplotlib (``pip install -e '.[plot]'``); without it, the summary says so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["log_summary", "plot_log", "read_log", "sparkline"]

_BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], width: int = 40) -> str:
    """The values as block characters, averaged into at most `width` bins.

    Example:
        >>> sparkline([4.0, 3.0, 2.0, 1.0], width=4)
        '█▆▃▁'
    """
    vals = [v for v in values if math.isfinite(v)]
    if not vals:
        return ""
    bins = min(width, len(vals))
    chunks = [vals[i * len(vals) // bins : (i + 1) * len(vals) // bins] for i in range(bins)]
    means = [sum(c) / len(c) for c in chunks if c]
    lo, span = min(means), (max(means) - min(means)) or 1.0
    return "".join(_BARS[round((m - lo) / span * (len(_BARS) - 1))] for m in means)


def read_log(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSON-lines training log.

    Raises:
        ValueError: a line that is not a JSON object with a "step" and a "loss".
    """
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}:{n} is not JSON: {e}") from None
        if not isinstance(row, dict) or "step" not in row or "loss" not in row:
            raise ValueError(f"{path}:{n} is not a line of a training log: {line[:60]}")
        rows.append(row)
    return rows


def plot_log(path: Path) -> Path | None:
    """Draw the train and validation loss and the learning rate of a log into a PNG.

    Returns:
        The PNG's path (the log's, with `.png`), or None if matplotlib is not installed.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = read_log(path)
    val = [r for r in rows if r.get("val_loss") is not None]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot([r["step"] for r in rows], [r["loss"] for r in rows], lw=1, label="train loss")
    ax.plot([r["step"] for r in val], [r["val_loss"] for r in val], "o-", label="val loss")
    ax.set(xlabel="step", ylabel="cross-entropy (nats)", yscale="log", title=path.name)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right")
    lr_ax = ax.twinx()
    lr_ax.plot([r["step"] for r in rows], [r.get("lr", 0.0) for r in rows], "g:", lw=1)
    lr_ax.set_ylabel("learning rate", color="g")
    fig.tight_layout()
    out = path.with_suffix(".png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def log_summary(path: Path) -> list[str]:
    """The lines that summarise a finished run's log (and draw it, where matplotlib is).

    Raises:
        ValueError: the log is not a training log, or has no rows.
    """
    rows = read_log(path)
    if not rows:
        raise ValueError(f"{path} has no rows")
    out: list[str] = []
    vals = [r["val_loss"] for r in rows if r.get("val_loss") is not None]
    out.append(f"{path}: {len(rows)} rows, steps {rows[0]['step']}..{rows[-1]['step']}")
    out.append(f"  train loss {sparkline([r['loss'] for r in rows])} {rows[-1]['loss']:.4f}")
    if vals:
        out.append(f"  val loss   {sparkline(vals)} {vals[-1]:.4f}")
    png = plot_log(path)
    if png is None:
        out.append("  (no PNG: matplotlib is not installed; pip install -e '.[plot]')")
    else:
        out.append(f"  plot       {png}")
    return out
