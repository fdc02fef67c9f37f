"""The array types hpcz codes, as numpy dtypes: float32 and float64, and the storage types (float16,
bfloat16 from ml_dtypes, the 8- to 64-bit integers), which the library codes as float32 or float64
under a bound that stays strict once the values are narrowed back (int64 and uint64 within +-2^53)."""
import numpy as np

from ._errors import InvalidArgumentError

_NAMES = {np.dtype(t): name for t, name in (
    (np.float32, "float32"), (np.float64, "float64"), (np.float16, "float16"), (np.int8, "int8"), (np.uint8, "uint8"),
    (np.int16, "int16"), (np.uint16, "uint16"), (np.int32, "int32"), (np.uint32, "uint32"), (np.int64, "int64"),
    (np.uint64, "uint64"))}
ACCEPTED = "float32, float64, float16, bfloat16 (ml_dtypes), int8, uint8, int16, uint16, int32, uint32, int64 or uint64"


def name_of(dtype):
    """hpcz's name of a native-order numpy dtype, or None."""
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16" and dtype.itemsize == 2:  # ml_dtypes.bfloat16
        return "bfloat16"
    return _NAMES.get(dtype) if dtype.isnative or dtype.itemsize == 1 else None


def numpy_dtype(name):
    """The numpy dtype of an archive's dtype name (bfloat16 needs ml_dtypes)."""
    if name == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            raise InvalidArgumentError("a bfloat16 archive decodes into ml_dtypes.bfloat16 values: pip install ml_dtypes",
                                       1) from None
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def itemsize(name):
    """The bytes of a value of the dtype named (bfloat16 without ml_dtypes too)."""
    return 2 if name == "bfloat16" else np.dtype(name).itemsize


def buffer_view(array):
    """The array as the module reads or writes it: bfloat16 as its uint16 bits (numpy's buffer protocol
    has no bfloat16)."""
    return array.view(np.uint16) if array.dtype.name == "bfloat16" else array


def is_float(dtype):
    """Whether the library codes this dtype as it is (float32, float64), not as a storage type."""
    return np.dtype(dtype) in (np.float32, np.float64)
