"""``f8vector``: numba's 1-D float64 C-array type with an unboxing that checks what it unboxes.

Numba unboxes an array argument by its item size only ("an ndarray with 8-byte items"): an
int64 array would be read as floats, and a 2-D array would write its second dimension past
the 1-D array structure.  A dispatcher checks the type first (~35 ns per array); an entry
point called directly (``checked.entry``) does not, so its caller had to check ``ndim`` and
``dtype`` in Python, ~50 ns per array (issue 32: a third of what a 7-DoF public call spends
outside the kernel).

An ``f8vector`` argument is unboxed in the compiled wrapper after reading the ndarray's own
fields: the object is an ndarray (numba's adaptor, into scratch room for any ``ndim``), its
``nd`` is 1, its dtype's ``type_num`` is ``NPY_DOUBLE`` and its byte order native.  Anything
else raises ``TypeError`` before the function runs (~7 ns per array).  Stride and alignment
are left to the function (``strided``, ``bad_vector`` below).  Inside, ``x[:]`` is a plain
``float64[::1]`` array, so the kernels it calls are the ones already compiled.

The field offsets are those of NumPy's ``PyArrayObject_fields`` and ``PyArray_Descr`` (the same
in NumPy 1.x and 2.x on 64-bit CPython); ``NATIVE_CHECK`` says whether they are verified on
this interpreter (``ctypes``, at import).  Reading them is safe either way (inside the
objects); if they were wrong, callers must keep their Python check (``robot.fast_path``).
"""
from __future__ import annotations

import ctypes

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.datamodel import models, register_default
from numba.extending import NativeValue, unbox

_ND, _DESCR = 24, 56  # PyArrayObject_fields: int nd; PyArray_Descr *descr
_BYTEORDER, _TYPE_NUM = 26, 28  # PyArray_Descr: char byteorder; int type_num
_MAXDIMS = 64  # NPY_MAXDIMS of NumPy 2 (32 in 1.x): the probe has room for any array


class F8Vector(types.Array):
    """``float64[::1]`` whose unboxing refuses all but 1-D native float64 ndarrays."""

    def __init__(self) -> None:
        super().__init__(types.float64, 1, "C", name="f8vector")


register_default(F8Vector)(models.ArrayModel)
f8vector = F8Vector()


@njit(cache=True, inline="always")
def strided(x: np.ndarray) -> bool:
    """Not one aligned contiguous row.  The entry points check it themselves because they are
    called directly (``first_use.entry``), which, unlike the dispatcher, unboxes any 1-D
    8-byte-item array (an ``f8vector`` too, after its checks) as this C-layout type."""
    return x.strides[0] != 8 or x.ctypes.data & 7 != 0


@njit(cache=True, inline="always")
def bad_vector(x: np.ndarray, size: int) -> bool:
    """Not ``size`` finite values in one aligned contiguous row (``strided``): a state argument
    of a validated entry point (``checked``, ``floating_base``, ``planar_base``, the derivatives)."""
    if x.shape[0] != size or strided(x):
        return True
    for i in range(size):
        if not np.isfinite(x[i]):
            return True
    return False


def _field(b: ir.IRBuilder, ptr: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
    """The ``ty`` at byte ``offset`` of the object at ``ptr``."""
    at = b.gep(b.bitcast(ptr, ir.IntType(8).as_pointer()), [ir.Constant(ir.IntType(64), offset)])
    return b.load(b.bitcast(at, ty.as_pointer()))


@unbox(F8Vector)
def _unbox_f8vector(typ: F8Vector, obj: ir.Value, c) -> NativeValue:  # numba's boxing context
    b = c.builder
    i8, i32 = ir.IntType(8), ir.IntType(32)
    probe = cgutils.alloca_once(b, ir.ArrayType(ir.IntType(64), 5 + 2 * _MAXDIMS))  # any ndim fits
    err = c.pyapi.numba_array_adaptor(obj, b.bitcast(probe, c.pyapi.voidptr))  # -1: not an ndarray
    ok = cgutils.alloca_once_value(b, cgutils.false_bit)
    native = c.context.make_array(typ)(c.context, b)
    aryptr = native._getpointer()
    with b.if_then(cgutils.is_null(b, err), likely=True):
        descr = _field(b, obj, _DESCR, i8.as_pointer())
        good = b.and_(b.icmp_signed("==", _field(b, obj, _ND, i32), i32(1)),
                      b.and_(b.icmp_signed("==", _field(b, descr, _TYPE_NUM, i32), i32(np.dtype(np.float64).num)),
                             b.icmp_signed("==", _field(b, descr, _BYTEORDER, i8), i8(ord("=")))))
        with b.if_then(good, likely=True):
            ptr = b.bitcast(aryptr, c.pyapi.voidptr)
            e2 = (c.pyapi.nrt_adapt_ndarray_from_python(obj, ptr) if c.context.enable_nrt
                  else c.pyapi.numba_array_adaptor(obj, ptr))
            b.store(cgutils.is_null(b, e2), ok)
    failed = b.not_(b.load(ok))
    with b.if_then(failed, likely=False):
        c.pyapi.err_set_string("PyExc_TypeError", "expected a 1-D float64 ndarray")
    return NativeValue(b.load(aryptr), is_error=failed)


def _verified() -> bool:
    """The offsets above read back ``ndim``, the dtype, its ``num`` and byte order."""
    try:
        for a in (np.zeros(3), np.zeros((2, 2), dtype=np.int32), np.zeros(2, dtype=">f8")):
            d = a.dtype
            if (ctypes.c_int.from_address(id(a) + _ND).value != a.ndim
                    or ctypes.c_void_p.from_address(id(a) + _DESCR).value != id(d)
                    or ctypes.c_int.from_address(id(d) + _TYPE_NUM).value != d.num
                    or ctypes.c_char.from_address(id(d) + _BYTEORDER).value != d.byteorder.encode()):
                return False
    except (ValueError, TypeError, OverflowError):
        return False
    return True


#: the unboxing's checks hold on this interpreter (module docstring)
NATIVE_CHECK = _verified()
