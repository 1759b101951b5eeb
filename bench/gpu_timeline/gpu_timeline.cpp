// A CUPTI activity recorder loaded into any CUDA program through the driver's injection hook:
//   CUDA_INJECTION64_PATH=build/lib/libzt_gpu_timeline.so ZT_TIMELINE_OUT=t.csv
//   build/bin/train_bench ...
// It records every kernel, memcpy and memset (GPU start and end) and every runtime and driver API
// call (host start and end) with the correlation id that ties a launch to its kernel, and writes
// them as CSV at exit. bench/gpu_timeline/gaps.py reads the file: how long the GPU sat idle, and
// for each idle gap whether the host had launched the next work yet (a host-bound gap) and which
// API call it was in meanwhile. Nsight Systems shows the same; this works where only the CUDA
// toolkit is installed (the GPU machine has ncu but no nsys).
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr size_t kBufferBytes = 8 << 20;

struct Row {
  char kind;  // K kernel, C memcpy, S memset, R runtime API, D driver API
  uint64_t start, end;
  uint32_t correlation, stream;
  std::string name;
};

std::mutex rows_mutex;
std::vector<Row>& rows() {
  static auto* r = new std::vector<Row>;  // leaked: still alive when atexit flushes
  return *r;
}

void check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  std::fprintf(stderr, "[gpu_timeline] %s failed: %s\n", what, text ? text : "?");
}

std::string api_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) return "?";
  return name;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::vector<Row> got;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        got.push_back(
            {'K', k->start, k->end, k->correlationId, k->streamId, k->name ? k->name : "?"});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        got.push_back(
            {'C', m->start, m->end, m->correlationId, m->streamId,
             "memcpy kind " + std::to_string(m->copyKind) + " " + std::to_string(m->bytes)});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        got.push_back({'S', m->start, m->end, m->correlationId, m->streamId,
                       "memset " + std::to_string(m->bytes)});
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
        const bool runtime = record->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
        got.push_back({runtime ? 'R' : 'D', a->start, a->end, a->correlationId, 0,
                       api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
                                a->cbid)});
        break;
      }
      default:
        break;
    }
  }
  std::free(buffer);
  std::lock_guard lock(rows_mutex);
  rows().insert(rows().end(), got.begin(), got.end());
}

void write_rows() {
  check(cuptiActivityFlushAll(1), "cuptiActivityFlushAll");
  const char* path = std::getenv("ZT_TIMELINE_OUT");
  std::FILE* f = std::fopen(path && *path ? path : "gpu_timeline.csv", "w");
  if (!f) {
    std::fprintf(stderr, "[gpu_timeline] cannot write %s\n", path ? path : "gpu_timeline.csv");
    return;
  }
  std::fprintf(f, "kind,start_ns,end_ns,correlation,stream,name\n");
  std::lock_guard lock(rows_mutex);
  for (const Row& r : rows()) {
    std::string name = r.name;
    for (char& c : name)
      if (c == ',' || c == '\n') c = ';';
    std::fprintf(f, "%c,%llu,%llu,%u,%u,%s\n", r.kind, static_cast<unsigned long long>(r.start),
                 static_cast<unsigned long long>(r.end), r.correlation, r.stream, name.c_str());
  }
  std::fclose(f);
  std::fprintf(stderr, "[gpu_timeline] %zu records written\n", rows().size());
}

}  // namespace

// Called by the CUDA driver when CUDA_INJECTION64_PATH names this library.
extern "C" int InitializeInjection() {
  check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "register");
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER})
    check(cuptiActivityEnable(kind), "cuptiActivityEnable");
  std::atexit(write_rows);
  return 1;
}
