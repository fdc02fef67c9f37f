"""How hpcz codes arrays of any rank: 1 to 4 dimensions, the slowest ones merged beyond 4."""

import numpy as np


def coded_shape(shape):
    """The shape hpcz codes an array of `shape` as: 1 to 4 dimensions, the slowest merged beyond 4."""
    shape = tuple(int(n) for n in shape)
    if not shape:
        return (1,)
    if len(shape) > 4:
        return (int(np.prod(shape[:-3], dtype=np.int64)),) + shape[-3:]
    return shape


def as_coded_shape(array):
    """The array as hpcz codes it: C order, in its coded_shape."""
    array = np.ascontiguousarray(array)
    return array.reshape(coded_shape(array.shape))


def check_archive_fits(head, dtype, count, what):
    """Raises hpcz's message where an archive (its header, hpcz.info) does not hold `count` values of
    `dtype`, the chunk it is decoded for: checked before decoding, as the HDF5 filter does, rather
    than left to a reshape's confusing error (or, where the bytes agree, wrong values)."""
    from ._errors import InvalidArgumentError

    from ._dtypes import numpy_dtype

    dtype = np.dtype(dtype)
    if numpy_dtype(head["dtype"]) != dtype or head["n_values"] != count:
        raise InvalidArgumentError(
            f"the archive holds {head['n_values']} {head['dtype']} values (shape {tuple(head['shape'])}), "
            f"not the {count} {dtype.name} values of {what}", 1)
