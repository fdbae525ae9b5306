"""Jitted rigid-body algorithms, one per module (Pinocchio style).

* ``mdh``: the modified-DH link transform (003 §1.6)
* ``layout``: packed model / workspace layout (the Model/Data split; ``rbd_ros.data``)
* ``kinematics``: link frames, velocities/accelerations, Jacobians, J-dot qd, analytic Jacobian
* ``rnea``: inverse dynamics, gravity g(q), bias h(q, qd) (003 §4.5)
* ``crba``: mass matrix M(q);  ``aba``: articulated-body forward dynamics
* ``forward_dynamics``: qdd (ABA; Cholesky variant kept as a check)
* ``actuators``: the drive model of 003 (6.16)-(6.17) per joint, inlined by every kernel
* ``coriolis``: C(q, qd) with M-dot - 2C skew;  ``energy``: kinetic and potential energy
* ``integrators``: RK4 and semi-implicit Euler over a whole horizon
* ``statics``: ``tau = J^T m`` and the static backward pass (003 ch.2);  ``ik``: inverse
  kinematics (damped least squares in the limits, 003 (1.20)-(1.23), analytic 2-link (1.24))
* ``checked``: validated single-state entry points for ``rbd_ros.Robot``
* ``linalg``: the in-place Cholesky solve the kernels share
* ``floating_base``: RNEA, CRBA, ABA with a free-flyer root (the fixed-base passes in base
  coordinates plus the root);  ``floating_integrators``: Lie-Euler and RKMK4 on SE(3) x R^n
* ``gather``: index copies between joint orders into preallocated arrays (the control loop's
  and the simulator's per-step conversions)

Kernels use ``@njit(cache=True)``.  Numba keys a cache entry on the file of the function
itself, not on the modules it calls: after editing a kernel, delete the ``*.nbi``/``*.nbc``
files in ``rbd_ros/algorithm/__pycache__`` (or set ``NUMBA_CACHE_DIR``) so callers in other
modules (``checked``, ``integrators``...) are recompiled.  ``scripts/setup.sh`` (so every
``make`` target) does this whenever a kernel source changed.
"""
