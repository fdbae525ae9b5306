"""``/rbd/regressor`` (issue 31) of the dynamics server: the joint-torque regressor of the served
arm (``rbd_ros.identification.regressor``) for N states in the caller's joint order, with the
parameter names and the served model's values, so ``efforts = regressor . parameters``; with
``base_parameters`` the base regressor (``identification.base``, QR) and the base parameters.
The states are checked by the other services' rules (``services.DynamicsService``);
fixed-base arms only."""
from __future__ import annotations

import array
import time

import numpy as np

from rbd_ros.identification import base_parameters, parameter_names, regressor, standard_parameters


def answer(service, req, res) -> None:
    """Fill ``res`` (``Regressor.Response``) for ``req`` on ``service``'s robot."""
    from rbd_ros.services import RequestError  # lazy: the services (robot front) (0.2 s of import)

    service._started = time.monotonic()  # the request's clock (max_request_seconds)
    model = service.robot.model
    if model.base_type != "fixed":
        raise RequestError(f"regressor is not available for a {model.base_type}-base robot: fixed-base arms only")
    names = list(req.joint_names)
    try:
        (pq, pv), (nq, nv) = service.spaces(names), service.widths(names)
        lq = service.labels(names, "q")
        q = service._positions("positions", req.positions, pq, nq, labels=lq)
        qd = service._to_model(pv, service.states("velocities", req.velocities, nv, len(q), labels=lq))
        qdd = service._to_model(pv, service.states("accelerations", req.accelerations, nv, len(q), labels=lq))
        Y = regressor(model, q, qd, qdd)  # (N, n, 13 n), rows in model order
    except RequestError:
        raise
    except ValueError as exc:
        raise RequestError(str(exc)) from None
    phi = standard_parameters(model)
    if req.base_parameters:
        base = getattr(service, "_base_parameters", None)
        if base is None:
            base = service._base_parameters = base_parameters(model)
        Y, labels, values = Y[:, :, base.independent], base.labels(), base.beta(phi)
    else:
        labels, values = parameter_names(model.dof), phi
    if pv is not None:
        Y = Y[:, pv]  # rows in the caller's joint order
    res.parameter_names = list(labels)
    res.regressor = array.array("d", np.ascontiguousarray(Y, dtype=np.float64).tobytes())  # row-major
    res.parameters = array.array("d", np.ascontiguousarray(values, dtype=np.float64).tobytes())
