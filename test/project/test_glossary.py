"""One spelling per concept (issue 33): the table of docs/guides/glossary.md against the code.

Read from the table: each concept's Python, service/message, CLI and node-parameter spelling
and its old spellings.  Checked against the code itself (argparse parsers of every subcommand,
the signatures of the public Python API, the .srv/.msg files, config/schema): every spelling
the table names exists; no visible flag and no public keyword is an old spelling or another
concept's spelling; every old spelling still works and warns, giving what the new one gives.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import re
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import yaml

import rbd_ros
from rbd_ros.cli import SUBCOMMANDS
from rbd_ros.util.flags import DeprecatedFlag

REPO = Path(__file__).resolve().parents[2]
GLOSSARY = REPO / "docs/guides/glossary.md"
ARGPARSE_SUBCOMMANDS = ("urdf2mdh", "bringup", "identify", "formulations", "sweep")
#: a keyword or flag that is a glossary spelling of another concept on purpose (the glossary's
#: "Differences kept" says why): (where, name)
KEPT = {("MdhModel", "base"),  # the 4x4 mount world -> frame 0, not the kind of base
        ("sweep", "seeds")}  # a count of perturbed models


def glossary() -> list[dict[str, list[str]]]:
    """The table's rows: column -> the backticked spellings in that cell."""
    lines = [ln for ln in GLOSSARY.read_text().splitlines() if ln.startswith("| ")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return [{h: re.findall(r"`([^`]+)`", c) for h, c in zip(head, ln.strip("|").split("|"))}
            for ln in lines[1:]]


class _Parser(BaseException):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def parsers() -> dict[str, argparse.ArgumentParser]:
    """Each argparse subcommand's parser, caught where its main() parses."""
    out = {}
    for sub in ARGPARSE_SUBCOMMANDS:
        def catch(self, args=None, namespace=None):
            raise _Parser(self)
        with mock.patch.object(argparse.ArgumentParser, "parse_args", catch):
            with pytest.raises(_Parser) as got:
                importlib.import_module(SUBCOMMANDS[sub][0]).main([])
        out[sub] = got.value.parser
    return out


def flags(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {s: a for a in parser._actions for s in a.option_strings if s.startswith("--")}


def public_keywords(every: bool = False) -> dict[tuple[str, str], inspect.Parameter]:
    """(owner.callable, keyword) for every keyword of the public Python API: the classes and
    functions of ``rbd_ros.__all__``, their public methods, and ``DynamicsClient``'s (with
    ``every``, also the arguments without a default)."""
    from rbd_ros.ros.client import DynamicsClient
    owners = {n: getattr(rbd_ros, n) for n in rbd_ros.__all__}
    owners["DynamicsClient"] = DynamicsClient
    out = {}
    for name, obj in owners.items():
        members = [(name, obj)]
        if inspect.isclass(obj):
            members = [(f"{name}.{m}", getattr(obj, m)) for m in dir(obj)
                       if not m.startswith("_") and callable(getattr(obj, m, None))]
            members.append((name, obj))
        for where, fn in members:
            try:
                sig = inspect.signature(fn)
            except (TypeError, ValueError):
                continue
            for p in sig.parameters.values():
                if every or p.default is not inspect.Parameter.empty or p.kind is p.KEYWORD_ONLY:
                    out[(where, p.name)] = p
    return out


def interface_fields() -> set[str]:
    names = set()
    for f in [*(REPO / "rbd_ros_interfaces/srv").glob("*.srv"), *(REPO / "rbd_ros_interfaces/msg").glob("*.msg")]:
        for ln in f.read_text().splitlines():
            words = ln.split("#")[0].split()
            if len(words) >= 2 and words[0] != "---":
                names.add(words[1].split("=")[0])
    return names


def schema_parameters() -> set[str]:
    return {k for f in (REPO / "config/schema").glob("*.yaml")
            for k in yaml.safe_load(f.read_text())["parameters"]}


def test_every_spelling_in_the_table_exists() -> None:
    rows = glossary()
    assert len(rows) >= 20
    visible = {s for p in parsers().values() for s, a in flags(p).items() if a.help != argparse.SUPPRESS}
    keywords = {k for _, k in public_keywords(every=True)}
    attributes = {a for cls in (rbd_ros.IKResult, rbd_ros.MdhModel, rbd_ros.Robot)
                  for a in list(getattr(cls, "__slots__", ())) + list(getattr(cls, "__dataclass_fields__", ()))}
    fields, params = interface_fields(), schema_parameters()
    missing = []
    for row in rows:
        concept = " ".join(row["Python"][:1]) or "?"
        for name in row["Python"]:
            if name.startswith("Robot."):
                ok = hasattr(rbd_ros.Robot, name.split(".", 1)[1])
            else:
                ok = name in keywords or name in attributes
            missing += [] if ok else [f"Python {name} ({concept})"]
        missing += [f"field {n}" for n in row["Service / message field"] if n not in fields]
        missing += [f"flag {n}" for n in row["CLI flag"] if n not in visible]
        missing += [f"parameter {n}" for n in row["Node parameter"] if n not in params]
    assert not missing, "the glossary names what the code does not have: " + ", ".join(missing)


def test_flags_use_the_table_and_old_flags_only_warn() -> None:
    rows = glossary()
    old_flags = {o for r in rows for o in r["Old spelling (warns)"] if o.startswith("--")}
    chosen = {f for r in rows for f in r["CLI flag"]}
    # any layer's spelling of a concept -> that concept's flag (None: the concept has no flag)
    concept_flag = {}
    for r in rows:
        for col in ("Python", "Service / message field", "Node parameter"):
            for name in r[col]:
                concept_flag.setdefault(name, set()).update(r["CLI flag"] or [None])
    bad = []
    for sub, parser in parsers().items():
        for flag, action in flags(parser).items():
            hidden = action.help == argparse.SUPPRESS
            if flag in old_flags:
                if not (hidden and isinstance(action, DeprecatedFlag) and action.new in chosen):
                    bad.append(f"{sub} {flag}: an old spelling that is not a hidden DeprecatedFlag")
                continue
            name = flag[2:].replace("-", "_")
            if hidden or (sub, name) in KEPT or name not in concept_flag:
                continue
            if flag not in concept_flag[name]:
                bad.append(f"{sub} {flag}: the glossary spells this concept {sorted(map(str, concept_flag[name]))}")
    assert not bad, "\n".join(bad)


def test_python_keywords_use_the_table() -> None:
    rows = glossary()
    old = {o[:-1] for r in rows for o in r["Old spelling (warns)"] if o.endswith("=")}
    chosen = {}
    for r in rows:
        for col in ("Service / message field", "Node parameter"):
            for name in r[col]:
                chosen.setdefault(name, set()).update(r["Python"])
    found_old, bad = set(), []
    for (where, kw), p in public_keywords().items():
        owner = where.split(".")[0]
        if (owner, kw) in KEPT:
            continue
        if kw in old:
            found_old.add((where, kw))
            if p.default is not None:
                bad.append(f"{where}({kw}=): an old spelling must default to None (not given)")
        elif kw in chosen and chosen[kw] and kw not in chosen[kw]:
            bad.append(f"{where}({kw}=): the glossary spells it {sorted(chosen[kw])}")
    assert not bad, "\n".join(bad)
    # every old keyword the API still takes is one the next test calls and sees warn
    assert {(w.split(".")[-1], kw) for w, kw in found_old} == {
        ("from_urdf", "base"), ("from_yaml", "base"), ("ik", "q0"),
        ("forward_simulate", "torques"), ("forward_simulate", "torque_period")}  # test_service_field_names


def test_old_python_keywords_warn_and_give_the_same() -> None:
    from rbd_ros.util.resources import bundled_urdf
    urdf = str(bundled_urdf("omni_arm7"))
    new = rbd_ros.Robot.from_urdf(urdf, base_type="planar", tip_link="tool0")
    with pytest.warns(DeprecationWarning, match=r"base= is deprecated, use base_type="):
        old = rbd_ros.Robot.from_urdf(urdf, base="planar", tip_link="tool0")
    assert old.base_type == new.base_type == "planar" and old.nq == new.nq == new.dof + 3
    text = new.model.to_yaml()
    with pytest.warns(DeprecationWarning, match=r"Robot.from_yaml: base= is deprecated"):
        assert rbd_ros.Robot.from_yaml(text, base="fixed").nq == new.dof
    with pytest.raises(ValueError, match="give base_type= only"):
        rbd_ros.Robot.from_yaml(text, base="fixed", base_type="planar")
    m = rbd_ros.Robot.from_urdf(str(bundled_urdf("puma560"))).model
    with pytest.warns(DeprecationWarning, match=r"Robot.from_mdh: base= is deprecated"):
        r = rbd_ros.Robot.from_mdh(m.a, m.alpha, m.d, m.theta, m.mass, m.com, m.inertia, base="floating",
                                   base_mass=2.0, base_inertia=0.1 * np.eye(3))
    assert r.base_type == "floating"
    puma = rbd_ros.Robot(m)
    q = np.array([0.3, -0.5, 0.4, 0.2, 0.6, -0.1])
    T = puma.fk(q)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = puma.ik(T, seeds=q + 0.05, max_restarts=0)
    with pytest.warns(DeprecationWarning, match=r"Robot.ik: q0= is deprecated, use seeds="):
        b = puma.ik(T, q0=q + 0.05, max_restarts=0)
    assert a.solved and b.solved and np.array_equal(a.positions, b.positions)
    np.testing.assert_allclose(puma.fk(b.positions), T, atol=1e-6)  # the pose asked for
