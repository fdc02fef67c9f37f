// Batches of cupy arrays read and placed in C++. At 1 MiB chunks the library codes a chunk in about
// 1.3 us, and a Python frame per chunk (a view, an interface dict, a few attribute reads) cost more than
// that. Here an array's pointer, device, size, dtype, shape and C order are read from cupy's member
// descriptors, the archives' and outputs' views are made by calling cupy.ndarray directly, and the one
// wait is a copy of the sizes or statuses. Anything else (torch, subclasses, strided or misaligned views,
// unsupported dtypes, a batch across GPUs) makes these return None, and hpcz/_device.py takes the
// batch the general way, which also words each item's refusal.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "module.hpp"
#ifdef HPCZ_HAS_CUDA
#include <cuda_runtime.h>
#endif

namespace hpcz_python {
namespace {

// The kernels load and store 16 bytes at a time; the general path copies a misaligned array once.
constexpr uintptr_t kAlign = 16;
// Each archive or output in a batch's shared buffer starts at this boundary (cupy's own allocations
// are 256-byte aligned too).
constexpr size_t kPlace = 256;
size_t placed(size_t n) { return (n + kPlace - 1) / kPlace * kPlace; }

// Attribute names made once (PyObject_GetAttr with an interned string is a dict lookup).
struct Names {
  PyObject *data, *ptr, *device_id, *size, *dtype, *shape, *c_contiguous;
  Names()
      : data(PyUnicode_InternFromString("data")), ptr(PyUnicode_InternFromString("ptr")),
        device_id(PyUnicode_InternFromString("device_id")), size(PyUnicode_InternFromString("size")),
        dtype(PyUnicode_InternFromString("dtype")), shape(PyUnicode_InternFromString("shape")),
        c_contiguous(PyUnicode_InternFromString("_c_contiguous")) {}
};
const Names& names() {
  static const Names n;  // first used under the GIL; the strings live as long as the process
  return n;
}

// obj.name, or an invalid object (the error cleared) where it has none.
nb::object attr(PyObject* obj, PyObject* name) {
  PyObject* r = PyObject_GetAttr(obj, name);
  if (!r) PyErr_Clear();
  return nb::steal(r);
}

bool as_size(const nb::object& o, size_t& v) {
  if (!o.is_valid() || !PyLong_Check(o.ptr())) return false;
  v = PyLong_AsSize_t(o.ptr());
  if (v == size_t(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return true;
}

// A plain cupy ndarray's fields. False where obj is anything else, is not C-contiguous, starts off
// the 16-byte boundary or lives on another device than `device`.
struct CupyArray {
  PyObject* obj = nullptr;
  uintptr_t ptr = 0;
  size_t size = 0;
  PyObject* dtype = nullptr;  // borrowed from the array, which the caller's list holds
  std::vector<uint64_t> shape;
};

bool read_cupy(PyObject* obj, PyObject* ndarray_type, int device, CupyArray& a) {
  const Names& n = names();
  if (reinterpret_cast<PyObject*>(Py_TYPE(obj)) != ndarray_type) return false;
  nb::object contig = attr(obj, n.c_contiguous);
  if (!contig.is_valid() || contig.ptr() != Py_True) return false;
  nb::object data = attr(obj, n.data);
  size_t ptr = 0, dev = 0;
  if (!data.is_valid() || !as_size(attr(data.ptr(), n.ptr), ptr) || !as_size(attr(data.ptr(), n.device_id), dev))
    return false;
  if (int(dev) != device || ptr % kAlign) return false;
  if (!as_size(attr(obj, n.size), a.size)) return false;
  nb::object shape = attr(obj, n.shape);
  if (!shape.is_valid() || !PyTuple_Check(shape.ptr())) return false;
  const Py_ssize_t nd = PyTuple_GET_SIZE(shape.ptr());
  a.shape.resize(size_t(nd));
  for (Py_ssize_t d = 0; d < nd; ++d) {
    size_t x;
    if (!as_size(nb::borrow(PyTuple_GET_ITEM(shape.ptr(), d)), x)) return false;
    a.shape[size_t(d)] = x;
  }
  nb::object dtype = attr(obj, n.dtype);
  if (!dtype.is_valid()) return false;
  a.obj = obj;
  a.ptr = ptr;
  a.dtype = dtype.ptr();  // the array holds its dtype
  return true;
}

// A batch's device allocation: alloc(nbytes) gives a cupy uint8 array; its pointer and memory pointer.
struct Allocation {
  nb::object array, memptr;
  uintptr_t ptr = 0;
};
Allocation allocate(const nb::callable& alloc, size_t bytes) {
  Allocation a;
  a.array = alloc(bytes);
  a.memptr = a.array.attr("data");
  a.ptr = nb::cast<uintptr_t>(a.memptr.attr("ptr"));
  return a;
}

// cupy.ndarray(shape, dtype, memptr=base + offset): a view into a batch's buffer.
nb::object view(PyObject* ndarray_type, const nb::object& shape, PyObject* dtype, const Allocation& base, size_t offset) {
  nb::object memptr = offset ? nb::steal(PyNumber_Add(base.memptr.ptr(), nb::int_(offset).ptr())) : base.memptr;
  if (!memptr.is_valid()) throw nb::python_error();
  PyObject* args[] = {shape.ptr(), dtype, memptr.ptr()};
  PyObject* r = PyObject_Vectorcall(ndarray_type, args, 3, nullptr);
  if (!r) throw nb::python_error();
  return nb::steal(r);
}

PyObject* new_ref(PyObject* o) {
  Py_INCREF(o);
  return o;
}

nb::list nones(size_t n) {
  PyObject* l = PyList_New(Py_ssize_t(n));
  if (!l) throw nb::python_error();
  for (size_t i = 0; i < n; ++i) PyList_SET_ITEM(l, Py_ssize_t(i), new_ref(Py_None));
  return nb::steal<nb::list>(l);
}

nb::tuple shape_tuple(const std::vector<uint64_t>& dims) {
  nb::object t = nb::steal(PyTuple_New(Py_ssize_t(dims.size())));
  for (size_t d = 0; d < dims.size(); ++d) PyTuple_SET_ITEM(t.ptr(), Py_ssize_t(d), PyLong_FromUnsignedLongLong(dims[d]));
  return nb::borrow<nb::tuple>(t);
}

#ifdef HPCZ_HAS_CUDA
// The device words at d (n of them) into host memory, once the stream's work before is done.
template <class T> std::vector<T> fetch(const T* d, size_t n, cudaStream_t s) {
  std::vector<T> h(n);
  if (n && (cudaMemcpyAsync(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost, s) != cudaSuccess ||
            cudaStreamSynchronize(s) != cudaSuccess))
    throw hpcz::Error(hpcz::ErrorCode::cuda, std::string("copying a batch's sizes back: ") + cudaGetErrorString(cudaGetLastError()));
  return h;
}
#endif

// compress_batch of plain cupy arrays on `device` (its current stream `stream`): (archives, None), the
// archives views of one device buffer; None where the batch is not all such arrays of float32/float64.
nb::object compress(nb::list arrays, nb::handle ndarray_type, nb::handle f32, nb::handle f64, nb::handle u8, int device,
                    const std::string& mode, const std::string& bound_kind, double bound, std::optional<double> fill,
                    nb::callable alloc, uintptr_t stream, double abs_bound) {
#ifdef HPCZ_HAS_CUDA
  const size_t n = nb::len(arrays);
  std::vector<hpcz::ArrayRef> refs(n);
  std::vector<size_t> caps(n), at(n);
  size_t total = 0;
  {
    CupyArray a;
    for (size_t i = 0; i < n; ++i) {
      if (!read_cupy(PyList_GET_ITEM(arrays.ptr(), Py_ssize_t(i)), ndarray_type.ptr(), device, a)) return nb::none();
      if (a.shape.empty() || a.shape.size() > 4) return nb::none();
      hpcz::DType dt;
      if (a.dtype == f32.ptr()) dt = hpcz::DType::f32;
      else if (a.dtype == f64.ptr()) dt = hpcz::DType::f64;
      else return nb::none();
      refs[i] = {reinterpret_cast<const void*>(a.ptr), dt, a.shape};
      caps[i] = hpcz::max_compressed_size(a.size, dt);
      at[i] = total;
      total += placed(caps[i]);
    }
  }
  const hpcz::Options o = options_of(mode, bound_kind, bound, fill, abs_bound);
  const size_t ws_size = hpcz::compress_device_batch_workspace_size(refs, o);
  const Allocation out = allocate(alloc, std::max<size_t>(total, 1));
  const Allocation ws = allocate(alloc, std::max<size_t>(ws_size, 1));
  const Allocation sizes = allocate(alloc, std::max<size_t>(n, 1) * sizeof(uint64_t));
  std::vector<void*> outs(n);
  for (size_t i = 0; i < n; ++i) outs[i] = reinterpret_cast<void*>(out.ptr + at[i]);
  std::vector<uint64_t> got;
  {
    nb::gil_scoped_release unlocked;
    hpcz::compress_device_batch(refs, o, outs.data(), caps.data(), reinterpret_cast<uint64_t*>(sizes.ptr),
                                reinterpret_cast<void*>(ws.ptr), ws_size, reinterpret_cast<void*>(stream));
    got = fetch(reinterpret_cast<const uint64_t*>(sizes.ptr), n, reinterpret_cast<cudaStream_t>(stream));
  }
  nb::list results = nones(n);
  for (size_t i = 0; i < n; ++i) {
    nb::object v = view(ndarray_type.ptr(), shape_tuple({got[i]}), u8.ptr(), out, at[i]);
    PyList_SetItem(results.ptr(), Py_ssize_t(i), v.release().ptr());
  }
  return nb::make_tuple(results, nb::none());
#else
  (void)arrays, (void)ndarray_type, (void)f32, (void)f64, (void)u8, (void)device, (void)mode, (void)bound_kind,
      (void)bound, (void)fill, (void)alloc, (void)stream, (void)abs_bound;
  return nb::none();
#endif
}

// decompress_batch of plain cupy uint8 archives on `device` into new arrays (outs None) or the plain
// cupy arrays of outs: (results, statuses), statuses None where every item decoded; None where the
// batch is not all such arrays, or holds an archive of a storage type.
nb::object decompress(nb::list blobs, nb::object outs, nb::handle ndarray_type, nb::handle f32, nb::handle f64,
                      nb::handle u8, int device, nb::callable alloc, uintptr_t stream) {
#ifdef HPCZ_HAS_CUDA
  const size_t n = nb::len(blobs);
  const bool new_outs = outs.is_none();
  if (!new_outs && (!PyList_Check(outs.ptr()) || size_t(PyList_GET_SIZE(outs.ptr())) != n)) return nb::none();
  std::vector<const void*> archives(n);
  std::vector<size_t> sizes(n);
  std::vector<CupyArray> targets(new_outs ? 0 : n);
  {
    CupyArray a;
    for (size_t i = 0; i < n; ++i) {
      if (!read_cupy(PyList_GET_ITEM(blobs.ptr(), Py_ssize_t(i)), ndarray_type.ptr(), device, a) || a.dtype != u8.ptr())
        return nb::none();
      archives[i] = reinterpret_cast<const void*>(a.ptr);
      sizes[i] = a.size;
      if (!new_outs && !read_cupy(PyList_GET_ITEM(outs.ptr(), Py_ssize_t(i)), ndarray_type.ptr(), device, targets[i]))
        return nb::none();
    }
  }
  const size_t hs = hpcz::kHeaderSize;
  std::vector<uint8_t> heads(n * hs);
  {
    const size_t hws_size = hpcz::read_device_headers_workspace_size(n);
    const Allocation hws = allocate(alloc, std::max<size_t>(hws_size, 1));
    nb::gil_scoped_release unlocked;
    hpcz::read_device_headers(archives.data(), sizes.data(), n, heads.data(), reinterpret_cast<void*>(hws.ptr), hws_size,
                              reinterpret_cast<void*>(stream));
  }
  nb::list results = nones(n);
  nb::object statuses = nb::none();  // made at the first refusal: (0, "") for every item, then each refusal's
  auto refuse = [&](size_t i, int code, const std::string& message) {
    if (statuses.is_none()) {
      nb::list all;
      const nb::tuple ok = nb::make_tuple(0, "");
      for (size_t j = 0; j < n; ++j) all.append(ok);
      statuses = all;
    }
    PyList_SetItem(statuses.ptr(), Py_ssize_t(i), nb::make_tuple(code, message).release().ptr());
  };
  // Archives that decode: their header, output pointer and (new outputs) place in the shared buffer.
  std::vector<hpcz::ArchiveInfo> infos;
  std::vector<size_t> live, offsets;
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    hpcz::ArchiveInfo info;
    try {
      info = device_archive_info(heads.data() + i * hs, std::min(hs, sizes[i]), sizes[i]);
    } catch (const hpcz::Error& e) {
      refuse(i, int(e.code()), e.what());
      continue;
    }
    // A storage type's archive (float16, the integers): the general path (hpcz/_device.py) makes its arrays;
    // so it does for an archive that decodes on the CPU only (a codec and mode without a GPU implementation).
    if (info.dtype != hpcz::DType::f32 && info.dtype != hpcz::DType::f64) return nb::none();
    if (hpcz::resolve_backend(hpcz::Backend::automatic, info.codec, info.mode) != hpcz::Backend::gpu) return nb::none();
    const size_t bytes = info.n_values * hpcz::dtype_size(info.dtype);
    PyObject* want = info.dtype == hpcz::DType::f32 ? f32.ptr() : f64.ptr();
    if (!new_outs) {
      const CupyArray& o = targets[i];
      const int same = PyObject_RichCompareBool(o.dtype, want, Py_EQ);  // identity first: cupy's dtypes are numpy's own
      if (same < 0) throw nb::python_error();
      if (!same || o.size != info.n_values) {
        const std::string have = nb::cast<std::string>(nb::str(nb::handle(o.dtype)));
        std::string shape;
        for (size_t d = 0; d < info.dims.size(); ++d) shape += (d ? ", " : "") + std::to_string(info.dims[d]);
        if (info.dims.size() == 1) shape += ",";
        refuse(i, int(hpcz::ErrorCode::invalid_argument),
               "out is " + have + " of " + std::to_string(o.size) + " values; the archive holds " +
                   nb::cast<std::string>(nb::str(nb::handle(want))) + " of shape (" + shape + ")");
        continue;
      }
    }
    infos.push_back(info);
    live.push_back(i);
    offsets.push_back(total);
    if (new_outs) total += placed(bytes);
  }
  Allocation buf;
  if (new_outs && !live.empty()) buf = allocate(alloc, std::max<size_t>(total, 1));
  std::vector<const void*> a_ptrs;
  std::vector<void*> o_ptrs;
  std::vector<hpcz::ArchiveInfo> coded;
  std::vector<size_t> coded_items;
  for (size_t k = 0; k < live.size(); ++k) {
    const size_t i = live[k];
    PyObject* want = infos[k].dtype == hpcz::DType::f32 ? f32.ptr() : f64.ptr();
    uintptr_t target;
    if (new_outs) {
      PyList_SetItem(results.ptr(), Py_ssize_t(i), view(ndarray_type.ptr(), shape_tuple(infos[k].dims), want, buf, offsets[k]).release().ptr());
      target = buf.ptr + offsets[k];
    } else {
      PyList_SetItem(results.ptr(), Py_ssize_t(i), new_ref(targets[i].obj));
      target = targets[i].ptr;
    }
    if (!infos[k].n_values) continue;  // nothing to decode
    coded.push_back(infos[k]);
    coded_items.push_back(i);
    a_ptrs.push_back(archives[i]);
    o_ptrs.push_back(reinterpret_cast<void*>(target));
  }
  if (!coded.empty()) {
    const size_t ws_size = hpcz::decompress_device_batch_workspace_size(coded);
    const Allocation ws = allocate(alloc, std::max<size_t>(ws_size, 1));
    const Allocation status = allocate(alloc, coded.size() * sizeof(uint32_t));
    std::vector<uint32_t> st;
    {
      nb::gil_scoped_release unlocked;
      if (cudaMemsetAsync(reinterpret_cast<void*>(status.ptr), 0, coded.size() * sizeof(uint32_t),
                          reinterpret_cast<cudaStream_t>(stream)) != cudaSuccess)
        throw hpcz::Error(hpcz::ErrorCode::cuda, "clearing a batch's statuses failed");
      hpcz::decompress_device_batch(coded, a_ptrs.data(), o_ptrs.data(), reinterpret_cast<uint32_t*>(status.ptr),
                                    reinterpret_cast<void*>(ws.ptr), ws_size, reinterpret_cast<void*>(stream));
      st = fetch(reinterpret_cast<const uint32_t*>(status.ptr), coded.size(), reinterpret_cast<cudaStream_t>(stream));
    }
    for (size_t j = 0; j < coded.size(); ++j)
      if (st[j]) {
        PyList_SetItem(results.ptr(), Py_ssize_t(coded_items[j]), new_ref(Py_None));
        refuse(coded_items[j], int(hpcz::ErrorCode::corrupt_archive), decode_status_message(st[j]));
      }
  }
  return nb::make_tuple(results, statuses);
#else
  (void)blobs, (void)outs, (void)ndarray_type, (void)f32, (void)f64, (void)u8, (void)device, (void)alloc, (void)stream;
  return nb::none();
#endif
}

}  // namespace

void bind_cupy_batches(nb::module_& m) {
  m.def("cupy_compress_batch", &compress, nb::arg("arrays"), nb::arg("ndarray_type"), nb::arg("f32"), nb::arg("f64"),
        nb::arg("u8"), nb::arg("device"), nb::arg("mode"), nb::arg("bound_kind"), nb::arg("bound"),
        nb::arg("fill").none(), nb::arg("alloc"), nb::arg("stream"), nb::arg("abs_bound") = 0.0);
  m.def("cupy_decompress_batch", &decompress, nb::arg("blobs"), nb::arg("outs").none(), nb::arg("ndarray_type"),
        nb::arg("f32"), nb::arg("f64"), nb::arg("u8"), nb::arg("device"), nb::arg("alloc"), nb::arg("stream"));
}

}  // namespace hpcz_python
