"""Numpy arrays as one compact byte string, exact to the bit: how a block's per-path results
travel from the task that computed them to the merge (``costapp.tco.montecarlo`` and
``costapp.tco.sizing`` each say which arrays make up their results).

The bytes are :data:`PAYLOAD_MAGIC`, the length of a JSON header (4 bytes, little-endian), the
header (name, dtype with its byte order, shape per array, in order), then each array's raw bytes
in C order. An ``.npz`` archive (the format before this one) is read as well.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

PAYLOAD_MAGIC = b"GTA1"
"""The first bytes of :func:`arrays_pack`'s byte strings."""


def arrays_pack(arrays: Mapping[str, Any]) -> bytes:
    """Numpy arrays (each as it is, dtype kept) as one byte string; see the module."""
    contiguous = {name: np.asarray(array, order="C") for name, array in arrays.items()}
    header = json.dumps(
        [[name, array.dtype.str, list(array.shape)] for name, array in contiguous.items()]
    ).encode("ascii")
    return b"".join(
        [PAYLOAD_MAGIC, len(header).to_bytes(4, "little"), header]
        + [array.tobytes() for array in contiguous.values()]
    )


def arrays_unpack(payload: bytes) -> dict[str, NDArray[Any]]:
    """The arrays of :func:`arrays_pack` (read-only views of ``payload``, no copy); an ``.npz``
    payload (written before this format) is read as such."""
    if not payload.startswith(PAYLOAD_MAGIC):
        with np.load(io.BytesIO(payload), allow_pickle=False) as stored:
            return {name: stored[name] for name in stored.files}
    start = len(PAYLOAD_MAGIC)
    size = int.from_bytes(payload[start : start + 4], "little")
    offset = start + 4 + size
    arrays: dict[str, NDArray[Any]] = {}
    for name, dtype, shape in json.loads(payload[start + 4 : offset]):
        kind = np.dtype(dtype)
        count = math.prod(shape)
        arrays[name] = np.frombuffer(payload, dtype=kind, count=count, offset=offset).reshape(shape)
        offset += count * kind.itemsize
    if offset != len(payload):
        raise ValueError(f"a block payload of {len(payload)} bytes holds {offset}")
    return arrays
