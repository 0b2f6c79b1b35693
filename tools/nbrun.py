"""Execute a course notebook in a fresh kernel and report what a reader should never see.

Used by ``tools/build_course.py`` (``python3 course.py run``) and by ``tests/test_notebooks.py``,
so that the course a learner builds and the course the tests check run the same way.

    python tools/nbrun.py                 # where the time went: each executed notebook's slowest cells
    python tools/nbrun.py --lang ko 06    # ... of the Korean edition of notebooks matching "06"

The profile reads the kernel's own timestamps that nbclient stores in every executed cell
(``build/executed-editions/``, written by ``course.py run``/``site``), so it costs no extra run.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import nbformat
import zmq.asyncio
from nbclient import NotebookClient
from nbclient.jsonutil import json_clean
from nbclient.output_widget import OutputWidget

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
# Seconds a cell may run: above the slowest course cell on a shared 2-core machine (the longest
# training cells take about two minutes there; at a load average of about 18, one of 06 took 180-310 s,
# see docs/setup.md). On a quiet machine set
# POSVIZ_CELL_TIMEOUT lower (e.g. 60) so that a real hang fails sooner.
DEFAULT_CELL_TIMEOUT = 180
CELL_TIMEOUT = int(os.environ.get("POSVIZ_CELL_TIMEOUT", str(DEFAULT_CELL_TIMEOUT)))


def per_test_limit(configured: float, cell_timeout: int = CELL_TIMEOUT) -> float:
    """Seconds one pytest test may run (pytest-timeout), given the configured limit.

    A test executes up to one notebook, whose cells may each take ``cell_timeout`` seconds. When
    ``POSVIZ_CELL_TIMEOUT`` raises that above the default, the test's own limit rises with it,
    to at least three cells' worth, so that raising the one setting the README names is enough.
    """
    if cell_timeout <= DEFAULT_CELL_TIMEOUT:
        return configured
    return max(configured, 3.0 * cell_timeout)
# Where the tests' executions of the editions of a notebook share its training runs (the kernels
# read POSVIZ_MEMO_RECORD / POSVIZ_MEMO from the environment; see posviz/_memo.py).
MEMO = ROOT / "build" / "memo"
_WARNING = re.compile(r"\b\w*Warning\b|findfont:|Glyph \d+ .*missing")
# A cell ending in a plotting call shows e.g. "<Axes: ...>" or "Text(0.5, 1.0, ...)": noise for a reader.
_STRAY_REPR = re.compile(r"^(<(Axes|matplotlib|Figure)\b|Text\(|\[<matplotlib)")


@dataclass
class Run:
    """The executed notebook, its wall time in seconds, and problems found in its outputs."""

    notebook: nbformat.NotebookNode
    seconds: float
    problems: list[str] = field(default_factory=list)

    def cell_seconds(self) -> dict[int, float]:
        """Each executed code cell's run time in seconds (kernel clock: busy to execute_reply), by index."""
        times = {}
        for index, cell in enumerate(self.notebook.cells):
            stamps = cell.get("metadata", {}).get("execution", {})
            if "iopub.status.busy" in stamps and "shell.execute_reply" in stamps:
                busy, reply = (_seconds(stamps[k]) for k in ("iopub.status.busy", "shell.execute_reply"))
                times[index] = reply - busy
        return times


def cell_profile(nb: nbformat.NotebookNode, top: int = 5) -> list[tuple[int, float, str]]:
    """The ``top`` slowest code cells of an executed notebook: ``(index, seconds, first line)``,
    from the timestamps nbclient stored in each cell (see :meth:`Run.cell_seconds`)."""
    times = Run(nb, 0.0).cell_seconds()
    slowest = sorted(times.items(), key=lambda item: -item[1])[:top]
    return [(index, seconds, (nb.cells[index].source.strip().splitlines() or [""])[0][:70]) for index, seconds in slowest]


def _seconds(stamp: str) -> float:
    """An ISO 8601 timestamp of a kernel message (as nbclient records it) in seconds since the epoch."""
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


class _OutputWidget(OutputWidget):
    """nbclient's stand-in for an ``ipywidgets.Output`` front end, sending on the asyncio socket.

    Every output that a kernel routes into an Output widget (``interact`` draws into one) makes
    nbclient send a ``comm_msg`` back on the shell channel, while the same client is awaiting
    the cell's ``execute_reply`` on that socket. nbclient sends it through
    ``Session.send``, which uses a *synchronous* shadow of the asyncio socket: that send processes
    libzmq's pending commands and so drains the socket's edge-triggered notification, and if the
    reply has just arrived its wake-up is lost. The awaiting poll then returns only when the
    cell timeout runs out (pyzmq's last check finds the reply), so the next cell started a whole
    ``CELL_TIMEOUT`` late (jupyter/nbclient#312). Sending on the asyncio socket itself lets pyzmq
    re-check the socket for waiting receivers after the send, so the reply is seen at once.
    """

    def _publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys) -> None:
        socket = self.kernel_client.shell_channel.socket
        if not isinstance(socket, zmq.asyncio.Socket):  # a blocking client has no such race
            super()._publish_msg(msg_type, data, metadata, buffers, **keys)
            return
        session = self.kernel_client.session
        content = json_clean(dict(data=data or {}, comm_id=self.comm_id, **keys))
        msg = session.msg(msg_type, content=content, parent=self.parent_header, metadata=metadata or {})
        socket.send_multipart(session.serialize(msg) + list(buffers or []))


def notebook_paths() -> list[Path]:
    """The course notebooks, in course order."""
    return sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))  # 05_rope sorts before 05b_context_extension


def execute(path: Path | str, *, timeout: int = CELL_TIMEOUT, notebook=None) -> Run:
    """Run every cell of ``path`` top to bottom in a fresh kernel started in ``notebooks/``.

    ``notebook`` may be given to run an already-loaded (e.g. one-language) version of it.
    A cell error raises ``nbclient.exceptions.CellExecutionError``. Any output on stderr and
    any text that looks like a warning is listed in ``Run.problems``.
    """
    path = Path(path)
    nb = notebook if notebook is not None else nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        # The kernel's own log (not the notebook's output) warns that a local kernel talks over
        # TCP without encryption; that is how Jupyter always runs locally, so keep it quiet.
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
    )
    client.widget_registry["@jupyter-widgets/output"]["OutputModel"] = _OutputWidget
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    problems = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            text = ""
            if output.get("output_type") == "stream":
                text = output.get("text", "")
                if output.get("name") == "stderr" and text.strip():
                    problems.append(f"cell {index}: stderr: {text.strip()[:300]}")
                    continue
            elif "data" in output:
                text = output["data"].get("text/plain", "")
                if output.get("output_type") == "execute_result" and _STRAY_REPR.match(text):
                    problems.append(f"cell {index}: stray object repr (end the line with ';'): {text[:80]}")
            if _WARNING.search(text):
                problems.append(f"cell {index}: warning-like output: {text.strip()[:300]}")
    return Run(nb, seconds, problems)


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    parser = argparse.ArgumentParser(description="Where the time of the last course run went, per notebook and cell.")
    parser.add_argument("pattern", nargs="?", default="", help="only notebooks whose file name contains this")
    parser.add_argument("--lang", default="both", choices=("both", "ko", "en"), help="edition (default both)")
    parser.add_argument("--top", type=int, default=5, help="slowest cells shown per notebook")
    args = parser.parse_args(argv)
    folder = ROOT / "build" / "executed-editions" / args.lang
    paths = [p for p in sorted(folder.glob("*.ipynb")) if args.pattern in p.name]
    if not paths:
        print(f"no executed notebooks in {folder}: run python3 course.py run (or site) first", file=sys.stderr)
        return 1
    total = 0.0
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        cells = sum(Run(nb, 0.0).cell_seconds().values())
        total += cells
        print(f"{path.name}: {cells:.1f} s in cells (run {nb.metadata.get('posviz_build_seconds', '?')} s)")
        for index, seconds, first in cell_profile(nb, args.top):
            print(f"  cell {index:>3}: {seconds:6.1f} s  {first}")
    print(f"total: {total:.1f} s in cells over {len(paths)} notebook(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
