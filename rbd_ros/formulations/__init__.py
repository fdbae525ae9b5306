"""Every formulation of the source documents, implemented once, side by side: independent
cross-checks of the fast path (``rbd_ros.algorithm``: RNEA, CRBA, ABA) and a teaching tool::

    ==================  =========================================================  ============
    module              formulation                                                 cost
    ==================  =========================================================  ============
    ``lagrange``        Uicker/Kahn 4x4 Lagrange, 003 (3.28)-(3.30), direct         O(n^4)
                        and recursive 4x4 (Hollerbach, 002 §1.4)                    O(n)
    ``silver``          angular-velocity Lagrangian = Newton-Euler, 002 (3.11)-(3.16)  O(n)
    ``kane``            Kane via Lagrange, 000 (35)-(38): M, h, C                   O(n^3)
    ``dq``              dual-quaternion algebra, 001 §2                              -
    ``dual_quaternion`` dual-quaternion Newton-Euler, 001 (19)-(30)                 O(n)
    ``gauss``           Gauss's principle (dqGP), 001 (45)-(52)                     O(n^3)
    ``planar_base``     arm on a planar (holonomic) base: whole-body chain,         -
                        world/base-frame rates, dqNE with the base, 001 §3.2.2      O(n)
    ``udwadia_kalaba``  Udwadia-Kalaba, 001 (62)-(63), and the KKT solve            O(n^3)
    ``diff_drive``      differential-drive base, 001 (64): Kane in generalized      O(n^3)
                        speeds (000 (46)), UK, KKT, wheel torques, simulation
    ==================  =========================================================  ============

All read a ``chain.Chain`` (joint screws and constant transforms, not an MDH table).
``Formulations(model)`` calls them by name; ``Robot.inverse_dynamics(..., method=...)``,
``Robot.mass_matrix(..., method=...)`` and ``Robot.coriolis_matrix(..., method=...)`` use it.
"""
from __future__ import annotations

import numpy as np

from rbd_ros.formulations import dual_quaternion, gauss, kane, lagrange, silver
from rbd_ros.formulations.chain import Chain, pack
from rbd_ros.model import MdhModel

#: methods per quantity; the first of each is the fast path of ``Robot`` (not served here)
METHODS = {
    "inverse_dynamics": ("rnea", "lagrange", "lagrange_recursive", "silver", "kane",
                         "dual_quaternion", "gauss"),
    "mass_matrix": ("crba", "lagrange", "kane", "gauss"),
    "coriolis_matrix": ("spatial", "kane", "gauss"),
}


def check_method(kind: str, method: str) -> None:
    """ValueError naming the valid methods if ``method`` is not one for ``kind``."""
    if method not in METHODS[kind]:
        raise ValueError(f"unknown {kind} method {method!r}; valid: {', '.join(METHODS[kind])}")


class Formulations:
    """The formulations bound to one chain (packed once; no validation: ``Robot`` checks)."""

    def __init__(self, model: MdhModel | Chain) -> None:
        self.chain = model if isinstance(model, Chain) else Chain.from_model(model)
        self.n = n = self.chain.dof
        self.pk = pack(self.chain)
        self.dp = dual_quaternion.pack(self.chain)
        self.ws = np.empty((n, dual_quaternion.NWS))
        self._zero6 = np.zeros(6)
        self._zero = np.zeros(n)

    def _buffers(self) -> tuple[np.ndarray, ...]:
        n = self.n
        return np.empty((n, n)), np.empty((n, n)), np.empty(n), np.empty(n), np.empty(n)

    def inverse_dynamics(self, method: str, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                         wrench: np.ndarray | None = None) -> np.ndarray:
        """``tau = M qdd + h - J_tool^T w`` by ``method`` (``Robot.inverse_dynamics``'s wrench)."""
        use_w = wrench is not None
        w = self._zero6 if wrench is None else wrench
        tau = np.empty(self.n)
        if method == "lagrange":
            M, _, h, g, wf = self._buffers()
            lagrange.lagrange_direct(self.pk, q, qd, True, w, use_w, M, h, g, wf)
            return M @ qdd + h + g - wf
        if method == "lagrange_recursive":
            lagrange.lagrange_recursive(self.pk, q, qd, qdd, w, use_w, tau)
        elif method == "silver":
            silver.silver(self.pk, q, qd, qdd, w, use_w, tau)
        elif method == "dual_quaternion":
            dual_quaternion.dqne(self.dp, q, qd, qdd, w, use_w, self.ws, tau)
        elif method == "kane":
            M, C, h, fc, fe = self._buffers()
            kane.kane(self.pk, q, qd, w, use_w, M, C, h, fc, fe)
            return M @ qdd + h - fc - fe
        elif method == "gauss":
            M, C, g, fe, _ = self._buffers()
            gauss.gauss(self.dp, q, qd, w, use_w, M, C, g, fe)
            return M @ qdd + C @ qd + g - fe
        else:
            check_method("inverse_dynamics", method)
            raise ValueError(f"method {method!r} is Robot's own fast path, not a formulation")
        return tau

    def mass_matrix(self, method: str, q: np.ndarray) -> np.ndarray:
        """``M(q)`` by ``lagrange`` (003 (3.28)), ``kane`` (000 (35)) or ``gauss`` (001 (46))."""
        M, C, a, b, c = self._buffers()
        if method == "lagrange":
            lagrange.lagrange_direct(self.pk, q, self._zero, False, self._zero6, False, M, a, b, c)
        elif method == "kane":
            kane.kane(self.pk, q, self._zero, self._zero6, False, M, C, a, b, c)
        elif method == "gauss":
            gauss.gauss(self.dp, q, self._zero, self._zero6, False, M, C, a, b)
        else:
            check_method("mass_matrix", method)
            raise ValueError(f"method {method!r} is Robot's own fast path, not a formulation")
        return M

    def coriolis_matrix(self, method: str, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """``C(q, qd)`` with ``C qd = h - g`` and ``M-dot - 2C`` skew: ``kane`` (000 (36)) or
        ``gauss`` (001 (47))."""
        M, C, a, b, c = self._buffers()
        if method == "kane":
            kane.kane(self.pk, q, qd, self._zero6, False, M, C, a, b, c)
        elif method == "gauss":
            gauss.gauss(self.dp, q, qd, self._zero6, False, M, C, a, b)
        else:
            check_method("coriolis_matrix", method)
            raise ValueError(f"method {method!r} is Robot's own fast path, not a formulation")
        return C
