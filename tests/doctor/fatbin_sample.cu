// Built by tests/doctor/CMakeLists.txt with nvcc, for the fatbin reader test.
__global__ void gw_doctor_sample(float* a) { a[threadIdx.x] += 1.0f; }

int main() { return 0; }
