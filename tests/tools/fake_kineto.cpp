// A stand-in for PyTorch's profiler library (Kineto inside libtorch_cuda.so): a shared library that
// is a CUPTI client, i.e. imports cuptiSubscribe. The import is weak, so the library loads where no
// libcupti is (this machine, the tests); calling fake_kineto_start there returns -1. Used by
// tests/unit/collector/cupti_clients_test.cpp and fake_recorder --cupti-client (collector/src/cupti_clients.h).
extern "C" int cuptiSubscribe(void** subscriber, void* callback, void* userdata) __attribute__((weak));

extern "C" __attribute__((visibility("default"))) int fake_kineto_start() {
  void* subscriber = nullptr;
  return cuptiSubscribe ? cuptiSubscribe(&subscriber, nullptr, nullptr) : -1;
}
