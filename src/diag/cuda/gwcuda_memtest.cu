// The CUDA part, device memory test in the manner of cuda_memtest: most of the free memory is
// allocated in chunks and every 64-bit word is written and read back with walking ones/zeros,
// its own address, moving inversions and pseudo-random data. Errors are counted per pattern and
// the first few are recorded with their offset, expected and actual value.
#include <algorithm>
#include <vector>

#include "gwcuda_common.cuh"

namespace gwcuda {
namespace {

enum Mode : int { kConst = 0, kAddress = 1, kRandom = 2 };

struct DevErrors {
  unsigned long long count;
  unsigned long long by_pattern[4];
  unsigned int recorded;
  unsigned int pad;
  GwMemError rec[GW_MEMTEST_MAX_RECORDED];
};

__device__ __forceinline__ unsigned long long patternValue(int mode, unsigned long long param,
                                                           const unsigned long long* addr, unsigned long long word) {
  switch (mode) {
    case kAddress:
      return reinterpret_cast<unsigned long long>(addr);
    case kRandom:
      return splitmix64(param ^ word);
    default:
      return param;
  }
}

__global__ void fillKernel(unsigned long long* p, size_t n, unsigned long long base_word, int mode,
                           unsigned long long param, unsigned long long xor_mask) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = patternValue(mode, param, p + i, base_word + i) ^ xor_mask;
}

// Checks every word against pattern^xor_mask; when rewrite, then writes pattern^write_mask
// (moving inversions and walking patterns fuse the check with the next write).
__global__ void checkKernel(unsigned long long* p, size_t n, unsigned long long base_word, int mode,
                            unsigned long long param, unsigned long long xor_mask, int rewrite,
                            unsigned long long write_mask, unsigned pattern_bit, DevErrors* errs) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    unsigned long long base = patternValue(mode, param, p + i, base_word + i);
    unsigned long long want = base ^ xor_mask;
    unsigned long long got = p[i];
    if (got != want) {
      atomicAdd(&errs->count, 1ull);
      atomicAdd(&errs->by_pattern[pattern_bit], 1ull);
      unsigned slot = atomicAdd(&errs->recorded, 1u);
      if (slot < GW_MEMTEST_MAX_RECORDED) {
        errs->rec[slot].offset = (base_word + i) * sizeof(unsigned long long);
        errs->rec[slot].expected = want;
        errs->rec[slot].actual = got;
        errs->rec[slot].pattern = 1u << pattern_bit;
      }
    }
    if (rewrite) p[i] = base ^ write_mask;
  }
}

struct Chunk {
  unsigned long long* p = nullptr;
  size_t words = 0;
  unsigned long long base_word = 0;
};

struct Step {
  bool check;
  int mode;
  unsigned long long param, xor_mask;
  int rewrite;
  unsigned long long write_mask;
  unsigned pattern_bit;
};

std::vector<Step> buildSteps(unsigned mask, unsigned long long seed) {
  std::vector<Step> s;
  const unsigned long long kOnes = ~0ull;
  if (mask & GW_MEMTEST_WALKING_ONES) {
    for (int b = 0; b < 32; ++b) {
      unsigned long long v = (1ull << b) | (1ull << (b + 32));
      // walking one: fill v; check v and write ~v (walking zero); check ~v.
      s.push_back({false, kConst, v, 0, 0, 0, 0});
      s.push_back({true, kConst, v, 0, 1, kOnes, 0});
      s.push_back({true, kConst, v, kOnes, 0, 0, 0});
    }
  }
  if (mask & GW_MEMTEST_OWN_ADDRESS) {
    s.push_back({false, kAddress, 0, 0, 0, 0, 1});
    s.push_back({true, kAddress, 0, 0, 1, kOnes, 1});
    s.push_back({true, kAddress, 0, kOnes, 0, 0, 1});
  }
  if (mask & GW_MEMTEST_MOVING_INV) {
    const unsigned long long pats[3] = {0ull, kOnes, splitmix64(seed)};
    for (unsigned long long v : pats) {
      s.push_back({false, kConst, v, 0, 0, 0, 2});
      s.push_back({true, kConst, v, 0, 1, kOnes, 2});  // up: check p, write ~p
      s.push_back({true, kConst, v, kOnes, 1, 0, 2});  // down: check ~p, write p
      s.push_back({true, kConst, v, 0, 0, 0, 2});      // final check p
    }
  }
  if (mask & GW_MEMTEST_RANDOM) {
    s.push_back({false, kRandom, seed, 0, 0, 0, 3});
    s.push_back({true, kRandom, seed, 0, 1, kOnes, 3});
    s.push_back({true, kRandom, seed, kOnes, 0, 0, 3});
  }
  return s;
}

}  // namespace
}  // namespace gwcuda

using namespace gwcuda;

extern "C" int gwcuda_memtest(int dev, double fraction, unsigned patterns_mask, double min_seconds,
                              GwProgressFn progress, void* user, GwMemtestResult* out, GwError* err) {
  std::vector<Chunk> chunks;
  int rc = guarded(err, [&] {
    if (!out || fraction <= 0 || fraction > 0.98 || (patterns_mask & GW_MEMTEST_ALL) == 0)
      fail(err, GWCUDA_E_BAD_ARGUMENT, "gwcuda_memtest", "bad argument");
    std::memset(out, 0, sizeof *out);
    useDevice(dev, err);
    const double t0 = nowSeconds();
    size_t free_b = 0, total_b = 0;
    GW_CHECK(cudaMemGetInfo(&free_b, &total_b));
    size_t target = static_cast<size_t>(free_b * fraction);
    const size_t kChunk = size_t(1) << 30, kMinChunk = size_t(64) << 20, kAlign = size_t(2) << 20;
    size_t chunk = kChunk, got = 0;
    unsigned long long next_word = 0;
    while (got + kMinChunk <= target && chunk >= kMinChunk) {
      size_t want = std::min(chunk, (target - got) / kAlign * kAlign);
      if (want < kMinChunk) break;
      void* p = nullptr;
      cudaError_t e = cudaMalloc(&p, want);
      if (e == cudaErrorMemoryAllocation) {  // fragmentation or another user: smaller chunks
        cudaGetLastError();
        chunk /= 2;
        continue;
      }
      GW_CHECK(e);
      chunks.push_back({static_cast<unsigned long long*>(p), want / 8, next_word});
      next_word += want / 8;
      got += want;
    }
    if (chunks.empty())
      fail(err, cudaErrorMemoryAllocation, "cudaMalloc (memtest region)", "could not allocate any memory to test");
    out->bytes_tested = got;
    DevBuf<DevErrors> errs(1, err);
    GW_CHECK(cudaMemset(errs.p, 0, sizeof(DevErrors)));
    int sms = smCount(dev, err);
    double last_fraction = 0;
    for (unsigned round = 0;; ++round) {
      auto steps = buildSteps(patterns_mask, 0x6770757761726465ull + round);
      for (size_t si = 0; si < steps.size(); ++si) {
        const Step& st = steps[si];
        for (const Chunk& c : chunks) {
          unsigned grid = gridFor(c.words, 256, sms * 4);
          if (st.check)
            checkKernel<<<grid, 256>>>(c.p, c.words, c.base_word, st.mode, st.param, st.xor_mask, st.rewrite,
                                       st.write_mask, st.pattern_bit, errs.p);
          else
            fillKernel<<<grid, 256>>>(c.p, c.words, c.base_word, st.mode, st.param, st.xor_mask);
          GW_CHECK(cudaGetLastError());
        }
        GW_CHECK(cudaDeviceSynchronize());
        double elapsed = nowSeconds() - t0;
        double f = round == 0 ? static_cast<double>(si + 1) / steps.size() : 0.0;
        if (min_seconds > 0) f = std::max(f, elapsed / min_seconds);
        last_fraction = std::max(last_fraction, std::min(f, 0.999));
        if (progress && progress(user, last_fraction) != 0)
          fail(err, GWCUDA_E_CANCELLED, "gwcuda_memtest", "stopped by the caller");
      }
      out->rounds = round + 1;
      if (nowSeconds() - t0 >= min_seconds) break;
    }
    DevErrors h{};
    GW_CHECK(cudaMemcpy(&h, errs.p, sizeof h, cudaMemcpyDeviceToHost));
    out->errors = h.count;
    for (int i = 0; i < 4; ++i) out->errors_by_pattern[i] = h.by_pattern[i];
    out->recorded = std::min<unsigned>(h.recorded, GW_MEMTEST_MAX_RECORDED);
    std::memcpy(out->first_errors, h.rec, sizeof h.rec);
    out->seconds = nowSeconds() - t0;
    if (progress) progress(user, 1.0);
  });
  for (const Chunk& c : chunks) cudaFree(c.p);
  return rc;
}
