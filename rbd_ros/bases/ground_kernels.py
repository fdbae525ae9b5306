"""The planar root's unchecked forward dynamics in the uniform kernel call
``(mp, ws, q, v, tau, include_actuators, out)`` of ``RootJoint.kernels``:
``algorithm.planar_base.aba_ground`` takes the base force ``[F_x, F_y, M_z]`` as scalars."""
from numba import njit

from rbd_ros.algorithm.planar_base import aba_ground


@njit(cache=True)
def aba_planar(mp, ws, q, v, tau, act, out):  # typed by the call
    """``a = M^{-1}(tau - h)`` on a planar root, ``tau = [F_x, F_y, M_z, joints]`` (ABA)."""
    aba_ground(mp, ws, q, v, tau[0], tau[1], tau[2], tau[3:], act, out)
