// The CUDA part is built whenever nvcc exists; on this machine (no driver) loading it must end
// in "skipped: no GPU", never a crash.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "diag/gpu_backend.h"
#include "platform/dynlib.h"

using namespace gw::diag;

TEST(CudaPart, BuiltWhenTheToolkitExists) {
#ifdef GW_HAVE_CUDA_PART
  EXPECT_TRUE(builtWithCudaPart());
  EXPECT_TRUE(std::filesystem::exists(GW_TEST_CUDA_PART)) << GW_TEST_CUDA_PART;
  EXPECT_EQ(cudaPartBuildPath(), GW_TEST_CUDA_PART);
  auto lib = gw::platform::DynamicLibrary::open(GW_TEST_CUDA_PART);
  ASSERT_TRUE(lib.ok()) << lib.error();  // loads even without libcuda.so.1 (static cudart)
  auto version = reinterpret_cast<int (*)()>(lib->symbol("gwcuda_abi_version"));
  ASSERT_NE(version, nullptr);
  EXPECT_EQ(version(), GWCUDA_ABI_VERSION);
  EXPECT_NE(lib->symbol("gwcuda_gemm_burn"), nullptr);
  EXPECT_EQ(lib->symbol("_ZN6gwcuda12ensureDriverEP7GwError"), nullptr);  // internals hidden
#else
  EXPECT_FALSE(builtWithCudaPart());
  GTEST_SKIP() << "built without CUDA";
#endif
}

TEST(CudaPart, WithoutAGpuTheBackendSaysWhyAndNeverCrashes) {
  auto b = openCudaBackend();
  if (b->state() == BackendState::Ready) GTEST_SKIP() << "a GPU is present: " << b->reason();
#ifdef GW_HAVE_CUDA_PART
  EXPECT_TRUE(b->state() == BackendState::NoDriver || b->state() == BackendState::NoDevice) << b->reason();
  EXPECT_EQ(b->reason().rfind("no GPU", 0), 0u) << b->reason();
#else
  EXPECT_EQ(b->state(), BackendState::BuiltWithoutCuda);
  EXPECT_EQ(b->reason(), "built without CUDA");
#endif
  EXPECT_FALSE(b->devices().ok());
  auto v = b->vectorAdd(0, 16);
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.error(), b->reason());
}

TEST(CudaPart, MissingOrForeignPartIsReported) {
  auto missing = openCudaBackend("/nonexistent/libgpuwarden-cuda.so");
  EXPECT_NE(missing->state(), BackendState::Ready);
  // A library without the gwcuda ABI (libz is in every test environment via the build).
  auto foreign = openCudaBackend("/lib/x86_64-linux-gnu/libz.so.1");
  if (std::filesystem::exists("/lib/x86_64-linux-gnu/libz.so.1")) {
    EXPECT_EQ(foreign->state(), BackendState::PartNotLoadable);
    EXPECT_NE(foreign->reason().find("lacks gwcuda_abi_version"), std::string::npos) << foreign->reason();
  }
}

TEST(CudaPart, EnvironmentOverridesTheSearch) {
  setenv("GPUWARDEN_CUDA_PART", "/opt/x/libgpuwarden-cuda.so", 1);
  auto c = cudaPartCandidates("");
  unsetenv("GPUWARDEN_CUDA_PART");
  EXPECT_EQ(c, (std::vector<std::string>{"/opt/x/libgpuwarden-cuda.so"}));
  EXPECT_EQ(cudaPartCandidates("/a.so"), (std::vector<std::string>{"/a.so"}));
  // Without either: the installed place beside the binary first, then a build tree's lib/.
  auto d = cudaPartCandidates("");
  ASSERT_GE(d.size(), 2u);
  const std::string bin = std::filesystem::canonical("/proc/self/exe").parent_path().string();
  const std::string up = std::filesystem::path(bin).parent_path().string();
  EXPECT_EQ(d[0], up + "/lib/gpuwarden/libgpuwarden-cuda.so");
  EXPECT_EQ(d[1], up + "/lib/libgpuwarden-cuda.so");
}
