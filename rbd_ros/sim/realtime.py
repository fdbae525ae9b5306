"""Real-time hygiene of a stepping thread and the timing of its loop, without ROS.

``harden(rt_priority, cpu_affinity, lock_memory)`` asks the operating system, for the calling
thread, for each of: ``SCHED_FIFO`` at ``rt_priority`` (1..99; 0 = leave it), the CPUs in
``cpu_affinity`` (empty = leave it), and ``mlockall(MCL_CURRENT | MCL_FUTURE)`` (no page faults
in the loop).  Each is optional and independent; a refusal (no permission, no such CPU) is
reported, never raised.  ``freeze_garbage()`` moves every object alive after start-up out of
the collector's reach (``gc.freeze``), so a collection in the loop scans only the few objects
made since.

``set_slice(us)`` asks EEVDF (Linux >= 6.12, no privilege needed) for a short request size for the
calling thread: it gets a CPU sooner after waking beside busy processes at the same nice.
``share_priority(threads, p)`` gives other threads of the process ``SCHED_FIFO`` p: the ones that
share a stepping thread's GIL must not be preempted while they hold it.

``LoopTiming(period)`` records, in preallocated ring buffers, the wall-clock start of every step
and how long it took; ``summary()`` gives the step period's p50/p99/max, the jitter
``|T_k - T|`` p99 and max, and overruns (steps that took longer than one period).
"""
from __future__ import annotations

import ctypes
import gc
import os

import numpy as np

MCL_CURRENT, MCL_FUTURE = 1, 2  # <sys/mman.h> on Linux


def check_priority(value: int | float) -> int:
    """``rt_priority`` as an int, or a ``ValueError`` naming it: 0 (off) or a SCHED_FIFO
    priority 1..99.  The one check of the bridge, the controller node and the bringup."""
    number = int(value)
    if not 0 <= number <= 99:
        raise ValueError(f"rt_priority must be 0 (off) to 99, got {value}")
    return number


def harden(rt_priority: int = 0, cpu_affinity: tuple[int, ...] = (),
           lock_memory: bool = False) -> list[str]:
    """Apply what is asked to the calling thread; one line per item: ``'... ok'`` or
    ``'... refused (reason)'``."""
    report = []
    if rt_priority > 0:
        try:  # pid 0 = the calling thread on Linux
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(rt_priority)))
            report.append(f"SCHED_FIFO {rt_priority} ok")
        except (OSError, AttributeError) as exc:
            report.append(f"SCHED_FIFO {rt_priority} refused ({exc})")
    if cpu_affinity:
        cpus = sorted({int(c) for c in cpu_affinity})
        try:
            os.sched_setaffinity(0, cpus)
            report.append(f"cpu_affinity {cpus} ok")
        except (OSError, ValueError, AttributeError) as exc:
            report.append(f"cpu_affinity {cpus} refused ({exc})")
    if lock_memory:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.mlockall(MCL_CURRENT | MCL_FUTURE) != 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
            report.append("mlockall ok")
        except (OSError, AttributeError) as exc:
            report.append(f"mlockall refused ({exc})")
    return report


class _SchedAttr(ctypes.Structure):  # struct sched_attr, <linux/sched/types.h>
    _fields_ = [("size", ctypes.c_uint32), ("sched_policy", ctypes.c_uint32),
                ("sched_flags", ctypes.c_uint64), ("sched_nice", ctypes.c_int32),
                ("sched_priority", ctypes.c_uint32), ("sched_runtime", ctypes.c_uint64),
                ("sched_deadline", ctypes.c_uint64), ("sched_period", ctypes.c_uint64),
                ("sched_util_min", ctypes.c_uint32), ("sched_util_max", ctypes.c_uint32)]


_SYS_SCHED_SETATTR = {"x86_64": 314, "aarch64": 274, "arm64": 274}


def set_slice(slice_us: float, tid: int = 0) -> str:
    """EEVDF's request size (``sched_runtime`` of a ``SCHED_OTHER`` thread, Linux >= 6.12, no
    privilege needed) for thread ``tid`` (0 = the calling one), keeping its nice value: a short
    slice gets a waking thread a CPU sooner from busy neighbours at the same nice."""
    label = f"sched slice {slice_us:g} us"
    uname = os.uname()
    release = uname.release
    try:
        if tuple(int(x) for x in release.split("-")[0].split(".")[:2]) < (6, 12):
            return f"{label} refused (Linux {release}: a thread's slice needs 6.12 or later)"
    except ValueError:
        pass
    try:
        nr = _SYS_SCHED_SETATTR[uname.machine]
        nice = os.getpriority(os.PRIO_PROCESS, tid)
        attr = _SchedAttr(size=ctypes.sizeof(_SchedAttr), sched_policy=os.SCHED_OTHER,
                          sched_nice=nice, sched_runtime=int(slice_us * 1000))
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.syscall(ctypes.c_long(nr), ctypes.c_int(tid), ctypes.byref(attr),
                        ctypes.c_uint(0)) != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        return f"{label} ok"
    except (OSError, KeyError, AttributeError) as exc:
        return f"{label} refused ({exc})"


def share_priority(threads, rt_priority: int) -> list[str]:
    """``SCHED_FIFO`` at ``rt_priority`` for other Python threads of this process (the executor,
    a publishing thread): they share the stepping thread's GIL, and one preempted by a busy
    process while holding it stalls the stepping thread however high its priority."""
    report = []
    for th in threads:
        tid = getattr(th, "native_id", None)
        if tid is None or not th.is_alive():
            continue
        try:
            os.sched_setscheduler(tid, os.SCHED_FIFO, os.sched_param(int(rt_priority)))
            report.append(f"{th.name} SCHED_FIFO {rt_priority} ok")
        except (OSError, AttributeError) as exc:
            report.append(f"{th.name} SCHED_FIFO {rt_priority} refused ({exc})")
    return report


def freeze_garbage() -> str:
    """``gc.collect()`` then ``gc.freeze()``: start-up objects are never scanned again."""
    gc.collect()
    gc.freeze()
    return f"gc frozen ({gc.get_freeze_count()} objects)"


class LoopTiming:
    """Step start times and durations of the last ``size`` steps (ring buffers) and overruns."""

    def __init__(self, period: float, size: int = 16384) -> None:
        self.period = float(period)
        self.starts = np.zeros(size)  # s, time.monotonic at each step start
        self.durations = np.zeros(size)  # s, each step's work (wall)
        self.count = 0
        self.overruns = 0

    def record(self, start: float, duration: float) -> None:
        """One step that started at ``start`` and took ``duration`` seconds."""
        i = self.count % self.starts.shape[0]
        self.starts[i] = start
        self.durations[i] = duration
        self.count += 1
        if duration > self.period:
            self.overruns += 1

    def reset_window(self) -> None:
        """Forget the recorded steps (not the overrun count): after a pause, say."""
        self.count = 0

    def _ordered(self, buf: np.ndarray) -> np.ndarray:
        size = buf.shape[0]
        if self.count <= size:
            return buf[:self.count].copy()
        i = self.count % size
        return np.concatenate([buf[i:], buf[:i]])

    def summary(self) -> dict[str, float | int]:
        """Step period p50/p99/max, jitter p99/max (us) over the recorded steps, overruns,
        and the step duration's mean and p99 (us)."""
        starts, durations = self._ordered(self.starts), self._ordered(self.durations)
        periods = np.diff(starts)
        out: dict[str, float | int] = {"overruns": self.overruns}
        if periods.size:
            jitter = np.abs(periods - self.period)
            out.update(period_p50_us=float(np.percentile(periods, 50) * 1e6),
                       period_p99_us=float(np.percentile(periods, 99) * 1e6),
                       period_max_us=float(periods.max() * 1e6),
                       jitter_p99_us=float(np.percentile(jitter, 99) * 1e6),
                       jitter_max_us=float(jitter.max() * 1e6))
        if durations.size:
            out.update(step_time_mean_us=float(durations.mean() * 1e6),
                       step_time_p99_us=float(np.percentile(durations, 99) * 1e6))
        else:
            out.update(step_time_mean_us=0.0, step_time_p99_us=0.0)
        return out
