"""``rbd-ros sweep``: the ROS-free closed loop over a grid of robots x laws x perturbations x
tours (issue 32), one table out.

* ``grid``: the cells (``Cell``) of a sweep and their parsing from the command line;
* ``cell``: one cell's run, ``run_cell``: the bridge's ``Simulator`` (lockstep) on the true
  model, the bringup's ``ControlLoop`` with the law built on the *controller's* model (the true
  one perturbed: model mismatch), tracking the tour; returns one row of numbers;
* ``perturbation``: the controller's model given a seed and a percentage (the identification
  work's ``perturb`` when it is installed, else a simple stand-in: ``perturbation.simple``);
* ``backends``: where the cells run: local processes (``multiprocessing.Pool``) or a Ray cluster
  (``--ray ADDRESS``; Ray from the ``sweep`` extra), the same ``run_cell`` either way;
* ``table``: the rows as CSV and JSON, and a plot;
* ``cli``: the subcommand.
"""
from __future__ import annotations

from rbd_ros.sweep.cell import run_cell
from rbd_ros.sweep.grid import Cell, cells

__all__ = ["Cell", "cells", "run_cell"]
