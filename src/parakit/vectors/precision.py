"""Numeric precision of every torch forward pass: fp32, or bf16 autocast where the hardware has it.

``precision="auto"`` means bf16 autocast on a CPU with bf16 matrix instructions (AMX-BF16 or
AVX512-BF16, *detected*, not assumed) and on a CUDA GPU that supports bf16 (fp16 on older GPUs),
fp32 elsewhere: on CPUs without those instructions bf16 is emulated and slower than fp32.
``fp32`` turns autocast off; ``bf16``/``fp16`` force it (fp16 on CUDA only). One resolver
(:func:`resolve_precision`) and one context (:func:`autocast`) serve the encoders, the
cross-encoder, the generator and the trainer (``parakit.models.training``).

Example:
    >>> resolve_precision("fp32", "cpu")
    'fp32'
    >>> check_precision("int4")
    Traceback (most recent call last):
    parakit.errors.VectorError: [E808] unknown precision 'int4'; use auto, fp32, bf16, fp16
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import Any

from parakit.errors import Errors, VectorError

#: the values ``--precision`` and the ``precision`` parameters accept
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
#: /proc/cpuinfo flags of native bf16 matrix instructions
BF16_FLAGS = ("amx_bf16", "avx512_bf16")


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The CPU feature flags of ``/proc/cpuinfo`` (empty where the file does not exist)."""
    path = Path("/proc/cpuinfo")
    if not path.is_file():
        return frozenset()
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(("flags", "Features")):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


@functools.cache
def cpu_has_bf16() -> bool:
    """Whether this CPU has native bf16 matrix instructions (AMX-BF16 or AVX512-BF16).

    torch's own cpuinfo probe answers first (it works on every OS); ``/proc/cpuinfo`` flags are
    the fallback for torch builds without it.
    """
    try:
        import torch

        amx = getattr(torch.cpu, "_is_amx_tile_supported", None)
        avx512_bf16 = getattr(torch.cpu, "_is_avx512_bf16_supported", None)
        if amx is not None and avx512_bf16 is not None:
            return bool(amx() or avx512_bf16())
    except ImportError:  # pragma: no cover - torch is a dependency of every caller
        pass
    return any(flag in cpu_flags() for flag in BF16_FLAGS)


def cpu_summary() -> dict[str, Any]:
    """What the benchmarks record beside their figures: the matrix-unit flags of this CPU."""
    wanted = ("amx_bf16", "amx_int8", "amx_tile", "avx512_bf16", "avx512_fp16", "avx512_vnni")
    return {
        "flags": [f for f in wanted if f in cpu_flags()],
        "bf16": cpu_has_bf16(),
        "auto": resolve_precision("auto", "cpu"),
    }


def device_type(device: Any) -> str:
    """``cpu``, ``cuda``...: the kind of a device or its name (None: CUDA when available)."""
    if device is None or device == "":
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return str(getattr(device, "type", device)).split(":")[0]


def check_precision(precision: str) -> str:
    """``precision`` when it is one of :data:`PRECISIONS` (the one list of allowed values).

    Raises:
        VectorError: E808, any other value.
    """
    if precision not in PRECISIONS:
        raise VectorError(
            Errors.E808_unknown_precision_use.format(
                precision=precision, precisions=", ".join(PRECISIONS)
            )
        )
    return precision


def resolve_precision(precision: str, device: Any = "cpu") -> str:
    """``fp32``, ``bf16`` or ``fp16``: what ``precision`` means on ``device``; ``auto`` picks
    bf16 where the hardware runs it natively.

    Raises:
        VectorError: an unknown value (E808), or fp16 asked for on a CPU.
    """
    kind = device_type(device)
    value = check_precision(precision)
    if value == "fp16" and kind != "cuda":
        raise VectorError(Errors.E808_fp_autocast_needs)
    if value != "auto":
        return value
    if kind == "cuda":
        import torch

        return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    if kind == "cpu":
        return "bf16" if cpu_has_bf16() else "fp32"
    return "fp32"


def autocast(precision: str, device: Any = "cpu") -> Any:
    """``torch.autocast`` for the resolved ``precision`` on ``device`` (a null context for fp32)."""
    resolved = resolve_precision(precision, device)
    if resolved == "fp32":
        return contextlib.nullcontext()
    import torch

    dtype = torch.bfloat16 if resolved == "bf16" else torch.float16
    return torch.autocast(device_type=device_type(device), dtype=dtype)


__all__ = [
    "PRECISIONS",
    "autocast",
    "check_precision",
    "cpu_flags",
    "cpu_has_bf16",
    "cpu_summary",
    "device_type",
    "resolve_precision",
]
