"""The byte form of block results (costapp.tco.payload): every array back as it went, bit for bit."""

import io

import numpy as np
import pytest

from costapp.tco import payload


def test_arrays_come_back_with_their_dtype_shape_and_bytes():
    rng = np.random.default_rng(3)
    sent = {
        "floats": rng.normal(size=(3, 4)) * 1e6,
        "big_endian": np.arange(5, dtype=">i4"),
        "mask": rng.random((2, 7)) > 0.5,
        "scalar": np.asarray(4, dtype=np.int64),
        "empty": np.zeros((2, 0, 3)),
        "strided": np.arange(24.0).reshape(4, 6)[:, ::2],
    }
    sent["floats"][0, 0] = -0.0
    sent["floats"][1, 1] = np.nextafter(1.0, 2.0)
    back = payload.arrays_unpack(payload.arrays_pack(sent))
    assert list(back) == list(sent)
    for name, array in sent.items():
        assert back[name].dtype == array.dtype, name
        assert back[name].shape == array.shape, name
        assert back[name].tobytes() == np.ascontiguousarray(array).tobytes(), name
        assert not back[name].flags.writeable, name


def test_a_payload_starts_with_its_mark_and_a_truncated_one_is_refused():
    packed = payload.arrays_pack({"a": np.arange(4.0)})
    assert packed.startswith(payload.PAYLOAD_MAGIC)
    with pytest.raises(ValueError):
        payload.arrays_unpack(packed + b"\0")


def test_an_npz_payload_of_the_earlier_format_is_read():
    buffer = io.BytesIO()
    np.savez(buffer, a=np.arange(3.0), b=np.array([True, False]))
    back = payload.arrays_unpack(buffer.getvalue())
    assert np.array_equal(back["a"], np.arange(3.0))
    assert np.array_equal(back["b"], [True, False])
