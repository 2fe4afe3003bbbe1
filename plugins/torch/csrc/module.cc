// The Python module torch_myriad._C: the BackendMyriad class, registered with pybind as a subclass of
// torch's c10d Backend so that torch.distributed can hold it, and its factory.
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "backend.h"

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  m.doc() = "Myriad collectives as a torch.distributed backend";
  py::class_<torch_myriad::BackendMyriad, c10d::Backend, c10::intrusive_ptr<torch_myriad::BackendMyriad>>(
      m, "BackendMyriad")
      .def(py::init(
               [](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout) {
                 return torch_myriad::BackendMyriad::create(store, rank, size, timeout);
               }),
           py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
           py::call_guard<py::gil_scoped_release>());
  int version = 0;
  myrGetVersion(&version);
  m.attr("myriad_version") = version;
  m.attr("cuda") = torch_myriad::kCudaBuilt;  // built against a torch with CUDA: takes CUDA tensors
}
