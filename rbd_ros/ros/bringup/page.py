"""The bringup's pictures: the video of the run and ``DIR/index.html``, one self-contained
page with the report table, the plot, the video and the run's parameters (to share or attach
to an issue).

``video_and_page(DIR, ...)`` (called by ``rbd-ros bringup --record DIR`` after the run) saves
the states (``DIR/recording.npz``, ``DIR/model.yaml``), renders them offscreen
(``rbd_ros.sim.render``: ``DIR/video.mp4``, ``DIR/preview.gif``; skipped with ``--no-video``,
one line instead where no OpenGL backend works) and writes the page.  The plot and (up to
``EMBED_LIMIT`` bytes) the video are embedded as ``data:`` URIs; a larger video is linked
relative (``video.mp4`` beside the page).
"""
from __future__ import annotations

import base64
import html
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from rbd_ros.ros.bringup.report import Report, loop_notes, loop_rows, summary_lines
from rbd_ros.sim.model_comparison import ModelComparison

EMBED_LIMIT = 16 * 2**20  # bytes of video embedded in the page

STYLE = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 960px; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.5em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.7em; text-align: right; }
th { background: #dde6f0; }
table.parameters td { text-align: left; font-family: monospace; }
th:first-child, td:first-child { text-align: left; }
img, video { max-width: 100%; border: 1px solid #ddd; }
.note { color: #a40; } code { background: #f3f3f3; }
"""


def video_and_page(directory: str | Path, model, times: np.ndarray, measured: np.ndarray,
                   reference: np.ndarray, report, parameters: dict[str, Any],
                   title: str = "", video: bool = True,
                   robot: dict[str, Any] | None = None, no_video_reason: str = "--no-video",
                   gains: dict[str, Any] | None = None, run_lines: list[str] | None = None) -> list[str]:
    """Save the states (always: ``python -m rbd_ros.sim.render DIR`` renders them later),
    render the video (``video``; else the page says ``no_video_reason``; ``robot``: the
    nodes' robot parameters, whose ``urdf_path`` lends the video its meshes) and write
    ``index.html`` (``gains``: the controller's gains in use; ``run_lines``: what the run
    printed before the report, the tour and warnings); returns the lines to print (one per
    product or problem)."""
    from rbd_ros.sim.render import Recording, render_recording  # lazy: the renderer (0.3 s of import)

    directory = Path(directory)
    lines: list[str] = []
    for stale in ("video.mp4", "preview.gif"):  # never show an older run's video
        (directory / stale).unlink(missing_ok=True)
    robot = robot or {}
    model.to_yaml(str(directory / "model.yaml"))
    Recording(times, measured, reference, urdf=str(robot.get("urdf_path", "")),
              base_link=str(robot.get("base_link", "")),
              tip_link=str(robot.get("tip_link", ""))).save(directory / "recording.npz")
    if video:
        result = render_recording(directory, caption=title)
        note = result.message if result.ok else f"rbd-ros bringup: {result.message}"
        lines.append(note)
    else:
        note = f"no video ({no_video_reason})"
    page = write_page(directory, report, parameters, title=title, video_note=note, gains=gains,
                      run_lines=run_lines)
    lines.append(f"page {page}")
    return lines


def write_page(directory: str | Path, report, parameters: dict[str, Any], title: str = "",
               video_note: str = "", gains: dict[str, Any] | None = None,
               run_lines: list[str] | None = None) -> Path:
    """``DIR/index.html`` from ``report`` (``report.Report`` or its dict): the table and every
    line the terminal printed (``report.summary_lines``: tool and base path errors,
    saturation and chatter warnings, timing), ``DIR/plot.png``, ``DIR/video.mp4`` when
    present, ``parameters`` (``{section: {key: value}}``), ``gains`` (``{gain: values}``) and
    ``run_lines`` (the tour and warnings the run printed)."""
    directory = Path(directory)
    rep = report if isinstance(report, dict) else asdict(report)
    known = {k: v for k, v in rep.items() if k in Report.__dataclass_fields__}
    esc = html.escape
    n = len(rep["joint_names"])
    sat = rep.get("saturation") or [None] * n
    chat = rep.get("chatter") or [None] * n
    units = rep.get("effort_units") or [""] * n

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f} %"

    rows = "".join(
        f"<tr><td>{esc(name)}</td><td>{rep['rms_error'][k]:.3e}</td>"
        f"<td>{rep['max_error'][k]:.3e}</td><td>{rep['peak_torque'][k]:.3f} {esc(units[k])}</td>"
        f"<td>{pct(sat[k])}</td><td>{pct(chat[k])}</td></tr>"
        for k, name in enumerate(rep["joint_names"]))
    summary = "<br>".join(esc(line) for line in summary_lines(Report(**known)))
    heading = esc(title or "rbd_ros run")
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{heading}</title>"
             f"<style>{STYLE}</style></head><body>", f"<h1>{heading}</h1>",
             "<h2>Tracking</h2><table id='report'><tr><th>joint</th><th>rms error</th>"
             "<th>max error</th><th>peak torque</th><th>at the effort limit</th>"
             f"<th>chatter at the limit</th></tr>{rows}</table>",
             f"<p id='summary'>{summary}</p>"]
    if rep.get("model_comparison"):
        parts.append(_comparison_table(rep["model_comparison"]))
    if rep.get("identify_loop"):
        parts.append(_loop_table(rep["identify_loop"]))
    if run_lines:
        parts.append("<h2>Tour</h2><p id='run'>" + "<br>".join(esc(x) for x in run_lines) + "</p>")
    video = directory / "video.mp4"
    parts.append("<h2>The run</h2>")
    if video.is_file():
        size = video.stat().st_size
        src = (_data_uri(video, "video/mp4") if size <= EMBED_LIMIT else "video.mp4")
        parts.append(f"<video id='video' controls loop muted autoplay playsinline "
                     f"src='{src}'></video>")
        parts.append("<p>Orange: the simulated arm; translucent blue: the reference (and its "
                     "tool path).</p>")
    else:
        parts.append(f"<p class='note' id='video'>{esc(video_note or 'no video')}</p>")
    plot = directory / "plot.png"
    if plot.is_file():
        parts.append(f"<h2>Plot</h2><img id='plot' alt='tracking plot' "
                     f"src='{_data_uri(plot, 'image/png')}'>")
    if gains:
        cells = "".join(f"<tr><td>{esc(str(k))}</td><td>{esc(_show(v))}</td></tr>"
                        for k, v in gains.items())
        parts.append(f"<h2>Gains</h2><table class='parameters' id='gains'>{cells}</table>")
    return _finish(directory, parts, parameters)


def _comparison_table(data: dict[str, Any]) -> str:
    """The model comparison (``Report.model_comparison``) as an HTML table."""
    esc = html.escape
    comp = ModelComparison.from_dict(data)
    true = "<th>true-state rms</th>" if comp.noise else ""
    rows = []
    for k, r in enumerate(comp.rows):
        ratio = "" if k == 0 else (f"{comp.ratio(k):.3g}x" if np.isfinite(comp.ratio(k)) else "-")
        cell = (f"<td>{r.true_max_rms:.3e}</td>" if r.true_max_rms is not None else "<td>-</td>") if comp.noise else ""
        label = r.label + (f" ({r.note})" if r.note else "")
        rows.append(f"<tr><td>{esc(label)}</td><td>{r.max_rms:.3e}</td><td>{r.max_error:.3e}</td>{cell}"
                    f"<td>{ratio}</td></tr>")
    return (f"<h2>Model comparison</h2><p>{esc(comp.lines()[0])}</p><table id='model_comparison'>"
            f"<tr><th>controller model</th><th>max joint rms</th><th>max error</th>{true}"
            f"<th>vs first</th></tr>{''.join(rows)}</table>")


def _loop_table(loop: dict[str, Any]) -> str:
    """The identification loop's before/after (``Report.identify_loop``: ``report.loop_rows``,
    ``report.loop_notes``) as an HTML table."""
    esc = html.escape
    rows = "".join(f"<tr><td>{esc(name)}</td><td>{b:.3e}</td><td>{a:.3e}</td><td>{ratio:.1f}x</td>"
                   f"<td>{prior:.2f} %</td><td>{ident:.2f} %</td></tr>"
                   for name, b, a, ratio, prior, ident in loop_rows(loop))
    return ("<h2>Identification loop</h2><p>Tracking before the swap (the controller's model) and after "
            "it (the identified model), the same excitation; the second run's torque NRMSE against "
            "the measured efforts.</p><table id='identify_loop'><tr><th>joint</th><th>rms before</th>"
            "<th>rms after</th><th>ratio</th><th>torque NRMSE, model</th><th>identified</th></tr>"
            f"{rows}</table><p id='identify_loop_notes'>"
            + "<br>".join(esc(x) for x in loop_notes(loop)) + "</p>")


def _finish(directory: Path, parts: list[str], parameters: dict[str, Any]) -> Path:
    """The parameter tables (a section each) closing ``parts``, written to ``DIR/index.html``
    (the tour's page and the press task's)."""
    esc = html.escape
    parts.append("<h2>Parameters</h2>")
    for section, values in parameters.items():
        cells = "".join(f"<tr><td>{esc(str(k))}</td><td>{esc(_show(v))}</td></tr>"
                        for k, v in values.items())
        parts.append(f"<h3>{esc(section)}</h3><table class='parameters'>{cells}</table>")
    parts.append("</body></html>")
    path = directory / "index.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _data_uri(path: Path, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def write_press_page(directory: str | Path, lines: list[str], parameters: dict[str, Any],
                     title: str, video_note: str, run_lines: list[str] | None = None) -> Path:
    """``DIR/index.html`` of a press task (``bringup --task press``): its report lines, the
    video, ``DIR/plot.png`` (the normal force and the error along the surface), the
    parameters."""
    directory = Path(directory)
    esc = html.escape
    heading = esc(title)
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{heading}</title>"
             f"<style>{STYLE}</style></head><body>", f"<h1>{heading}</h1>",
             "<h2>Contact</h2><p id='summary'>" + "<br>".join(esc(x.strip()) for x in lines) + "</p>"]
    if run_lines:
        parts.append("<h2>Run</h2><p id='run'>" + "<br>".join(esc(x) for x in run_lines) + "</p>")
    parts.append("<h2>The run</h2>")
    video = directory / "video.mp4"
    if video.is_file():
        src = _data_uri(video, "video/mp4") if video.stat().st_size <= EMBED_LIMIT else "video.mp4"
        parts.append(f"<video id='video' controls loop muted autoplay playsinline src='{src}'></video>")
    else:
        parts.append(f"<p class='note' id='video'>{esc(video_note or 'no video')}</p>")
    plot = directory / "plot.png"
    if plot.is_file():
        parts.append(f"<h2>Plot</h2><img id='plot' alt='press plot' src='{_data_uri(plot, 'image/png')}'>")
    return _finish(directory, parts, parameters)
