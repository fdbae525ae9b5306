"""Issue 27, end to end on a mobile manipulator: a mobile run has its video (the base drawn
under the arm) and its page shows the base path error the terminal printed."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # end to end: ROS processes and a closed loop

pytest.importorskip("rclpy")


def test_mobile_page_has_the_video_and_the_base_error(mobile_run) -> None:
    proc, out = mobile_run  # test/conftest.py: recorded with its video
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    page = (out / "index.html").read_text()
    assert "<td>no_video</td><td>false</td>" in page
    assert (out / "video.mp4").stat().st_size > 0, proc.stdout[-3000:]
    assert "<video id='video'" in page and "no video" not in page
    base_line = next(line for line in proc.stdout.splitlines() if line.startswith("base path error rms"))
    assert base_line in page
    assert "[bringup] tour: base: figure eight" in page  # the tour's lines, though --quiet
