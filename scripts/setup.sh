#!/usr/bin/env bash
# One setup path for `make demo` and `make test`: idempotent, quick when nothing changed.
#   scripts/setup.sh          runtime environment
#   scripts/setup.sh --test   runtime + test/benchmark peers (pytest, pin, example-robot-data, ...)
# Creates .venv/ (pinned PyPI wheels, ROS 2 Kilted included), builds the missing upstream interface
# packages of interfaces_compat/ and rbd_ros_interfaces with colcon into the venv prefix, and
# installs rbd_ros editable. Needs no root and no sourcing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV="$ROOT/.venv"
PYTHON="${PYTHON:-python3}"
WITH_TEST=0
[ "${1:-}" = "--test" ] && WITH_TEST=1
STAMPS="$VENV/.rbd_ros_stamps"
log() { printf '[setup] %s\n' "$*"; }
digest() { cat "$@" | sha256sum | cut -c1-16; }
stamp_ok() { [ "$(cat "$STAMPS/$1" 2>/dev/null)" = "$2" ]; }
pip_install() {
  # the machine's pip.conf lists local mirrors that may be absent: hide only those warnings
  "$VENV/bin/pip" install -q --disable-pip-version-check "$@" 2>&1 \
    | { grep -v "^WARNING: Location 'file://" || true; }
  return "${PIPESTATUS[0]}"
}

if [ ! -x "$VENV/bin/python" ]; then
  log "creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
mkdir -p "$STAMPS"

req=$(digest requirements.txt scripts/setup.sh)
if ! stamp_ok runtime "$req"; then
  log "installing runtime requirements (pinned)"
  pip_install -r requirements.txt
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

if [ "$WITH_TEST" = 1 ]; then
  treq=$(digest requirements-test.txt)
  if ! stamp_ok test "$treq"; then
    log "installing test requirements (pinned)"
    pip_install -r requirements-test.txt
    echo "$treq" > "$STAMPS/test"
  fi
fi

# Interface packages of the ROS distribution that this machine's registries do not ship: one folder
# per package in interfaces_compat/, field for field identical to the upstream package of the
# pinned release (same RIHS01 type hashes). Each is built into the venv only where no real package
# of that name imports (a ROS install on the path, or a pip wheel ros-<name>); ours are the ones
# colcon marked in the venv, rebuilt when their files change.
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
  d=$(digest $(find "$dir" -type f | sort))
  stamp_ok "compat-$name" "$d" && [ -d "$VENV/share/$name" ] && continue
  compat+=("$dir")
done
if [ "${#compat[@]}" -gt 0 ]; then
  log "building interfaces_compat with colcon: ${compat[*]}"
  mkdir -p "$ROOT/build"
  (
    export PATH="$VENV/bin:$PATH" CMAKE_PREFIX_PATH="$VENV" AMENT_PREFIX_PATH="$VENV"
    export COLCON_LOG_PATH="$ROOT/build/colcon-log"
    "$VENV/bin/colcon" build --merge-install --install-base "$VENV" --build-base "$ROOT/build/colcon" \
      --base-paths "${compat[@]}" \
      --cmake-args -DPython3_EXECUTABLE="$VENV/bin/python" -DBUILD_TESTING=OFF
  ) > "$ROOT/build/colcon-compat.log" 2>&1 || { tail -40 "$ROOT/build/colcon-compat.log"; exit 1; }
  for dir in "${compat[@]}"; do
    digest $(find "$dir" -type f | sort) > "$STAMPS/compat-$(basename "$dir")"
  done
  rm -f "$STAMPS/interfaces"  # rbd_ros_interfaces may use them: rebuild it against them
fi

ifc=$(digest $(find rbd_ros_interfaces -type f | sort))
if ! stamp_ok interfaces "$ifc" || ! [ -d "$VENV/share/rbd_ros_interfaces" ]; then
  log "building rbd_ros_interfaces with colcon"
  mkdir -p "$ROOT/build"
  (
    export PATH="$VENV/bin:$PATH" CMAKE_PREFIX_PATH="$VENV" AMENT_PREFIX_PATH="$VENV"
    export COLCON_LOG_PATH="$ROOT/build/colcon-log"
    "$VENV/bin/colcon" build --merge-install --install-base "$VENV" --build-base "$ROOT/build/colcon" \
      --base-paths rbd_ros_interfaces \
      --cmake-args -DPython3_EXECUTABLE="$VENV/bin/python" -DBUILD_TESTING=OFF
  ) > "$ROOT/build/colcon.log" 2>&1 || { mkdir -p build; tail -40 "$ROOT/build/colcon.log"; exit 1; }
  echo "$ifc" > "$STAMPS/interfaces"
fi

pkg=$(digest setup.py setup.cfg package.xml)
if ! stamp_ok package "$pkg"; then
  log "installing rbd_ros (editable)"
  pip_install --no-deps --no-build-isolation -e .
  echo "$pkg" > "$STAMPS/package"
fi
# numba's caches need no cleaning here: rbd_ros stamps every cached kernel with all its sources
# (rbd_ros/jit_cache.py), so a changed callee recompiles its callers wherever the cache lives
# ament puts console scripts in lib/rbd_ros (for `ros2 run`); users also want them on the venv's PATH
for exe in "$VENV"/lib/rbd_ros/*; do
  [ -e "$VENV/bin/$(basename "$exe")" ] || ln -s "$exe" "$VENV/bin/$(basename "$exe")"
done
# numba compiles each kernel on first use and caches it; on a fresh machine the first bringup's
# three or four nodes would all compile the same kernels at once (minutes). Compile them here,
# once, in two processes (rbd_ros/sim/warm.py); seconds when already cached.
log "compiling the kernels (rbd-ros warm)"
"$VENV/bin/python" -m rbd_ros.sim.warm --jobs 2 | grep -E "part|skipped" || true
log "ready: $VENV/bin/python"
