"""``rbd-ros bringup --tour excitation`` (issue 31): instead of the demo tour, the arm follows
an excitation trajectory for identification (``rbd_ros.identification.excitation``: a finite
Fourier series optimised for the regressor's condition number, inside the limits and above the
floor), from the demo tour's start; recorded as any run (``--record DIR``), then
``rbd-ros identify DIR``."""
from __future__ import annotations

import argparse

import numpy as np

from rbd_ros.identification.excitation import plan_excitation

TOURS = ("demo", "excitation")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tour", default="demo", choices=TOURS,
                   help="demo: the quintic tour; excitation: a Fourier series for rbd-ros identify "
                        "(2 periods of --segment-time, default 8 s)")
    p.add_argument("--excitation", default="condition", choices=("condition", "optimal"),
                   help="with --tour excitation: condition: the Fourier series minimising the regressor's "
                        "unit-norm condition number; optimal: minimising the base parameters' expected "
                        "relative std, checked along the whole path (plan_excitation(optimise=True))")


def plan(args: argparse.Namespace, model, tour, points):
    """The tour to run: ``tour`` itself, or the excitation from its start."""
    if getattr(args, "tour", "demo") != "excitation":
        return tour
    exc = plan_excitation(model, tour.start, period=args.segment_time or 8.0, floor=tour.floor,
                          points=points, optimise=getattr(args, "excitation", "condition") == "optimal")
    exc.notes[:0] = tour.notes  # how the start was found
    return exc


def rates(tour, waypoints: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Velocities and accelerations of the points sent: the excitation's own, the demo tour's
    rest (zero: quintic rest-to-rest segments)."""
    if hasattr(tour, "velocities"):
        return tour.velocities, tour.accelerations
    rest = np.zeros_like(waypoints)
    return rest, rest
